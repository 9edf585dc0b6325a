/**
 * The SDK in Chromium (Debian's, through playwright-core): a merchant's page on an allowed origin loads the SDK
 * bundled for the browser by esbuild (no stubs), creates a checkout session with a publishable key, the buyer
 * follows checkout_url and pays; the same page on an origin the key does not list is refused by the browser.
 */
import {expect} from 'chai'
import {gzipSync} from 'node:zlib'
import {join} from 'node:path'

import {build} from 'esbuild'
import type {Browser, Page} from 'playwright-core'

import {launchBrowser, screenshot, startSite} from '../helpers/browser.js'
import {TestGateway, type Account} from '../helpers/gateway.js'
import {ROOT} from './runtimes.js'

/** The gzipped size of the page's bundle, SDK included; README.md's "Browser bundle" row records it. */
const BUDGET_GZIP_BYTES = 40 * 1024

describe('runtimes: the SDK in Chromium, creating and paying a checkout session from a page', function () {
  this.timeout(60_000)
  let browser: Browser | undefined
  let gw: TestGateway
  let acct: Account
  let bundle: string
  const sites: Awaited<ReturnType<typeof startSite>>[] = []
  let allowed: string
  let other: string
  let publishableKey: string

  before(async function () {
    browser = await launchBrowser(this)
    const out = await build({entryPoints: [join(ROOT, 'test/runtimes/page.mjs')], bundle: true, platform: 'browser', format: 'esm', minify: true, write: false, logLevel: 'warning'})
    bundle = out.outputFiles[0]!.text
    gw = await TestGateway.start()
    acct = await gw.account('test')
    const page = (title: string) => `<!doctype html><title>${title}</title><h1>${title}</h1><script type="module" src="/app.js"></script>`
    for (const title of ['Shop', 'Elsewhere']) {
      sites.push(
        await startSite((req, res) => {
          if (req.url === '/app.js') return void res.writeHead(200, {'content-type': 'text/javascript'}).end(bundle)
          res.writeHead(200, {'content-type': 'text/html; charset=utf-8'}).end(page(req.url?.startsWith('/thanks') ? 'Thanks for your order' : title))
        }),
      )
    }
    ;[allowed, other] = sites.map((s) => s.url) as [string, string]
    const key = await gw.admin('POST', '/keys', {merchant: acct.merchant.id, mode: 'test', scopes: ['checkout:write'], type: 'publishable', allowed_origins: [allowed]})
    expect(key.status, key.text).to.equal(201)
    publishableKey = key.body.publishable_key
  })
  after(async () => {
    await browser?.close()
    for (const site of sites) await site.close()
    await gw?.close()
  })

  async function open(origin: string): Promise<{page: Page; console: string[]}> {
    const page = await browser!.newPage()
    const console: string[] = []
    page.on('console', (m) => console.push(m.text()))
    await page.goto(origin)
    await page.waitForFunction(() => typeof (globalThis as {startCheckout?: unknown}).startCheckout === 'function')
    return {page, console}
  }

  const start = (page: Page, successUrl: string) =>
    page.evaluate(
      (cfg) => (globalThis as unknown as {startCheckout(c: unknown): Promise<Record<string, unknown>>}).startCheckout(cfg),
      {baseUrl: gw.url, publishableKey, lineItems: [{name: 'Tea', quantity: 2, amount: 500, currency: 'eur'}], successUrl},
    )

  it(`the page's bundle (esbuild --platform=browser, SDK included) stays within ${BUDGET_GZIP_BYTES / 1024} KB gzipped`, () => {
    const size = gzipSync(bundle, {level: 9}).length
    console.log(`      (browser bundle: ${(bundle.length / 1024).toFixed(1)} KB minified, ${(size / 1024).toFixed(1)} KB gzipped)`)
    expect(size).to.be.at.most(BUDGET_GZIP_BYTES)
    // Nothing to stub: the SDK imports no Node built-in (its node:crypto and node:fs are looked up by name when a Node-only call runs).
    expect(bundle).not.to.match(/\bfrom\s*["']node:|\b(import|require)\(["']node:/)
  })

  it('on an allowed origin: creates the session with the publishable key, and the buyer pays it', async () => {
    const {page} = await open(allowed)
    const out = await start(page, `${allowed}/thanks`)
    expect(out, JSON.stringify(out)).to.include({ok: true})
    await page.goto(out.checkoutUrl as string)
    await page.getByLabel('Name').fill('Ada Buyer')
    await page.getByRole('button', {name: /^Pay/}).click()
    await page.waitForURL(`${allowed}/thanks*`)
    expect(await page.locator('h1').innerText()).to.equal('Thanks for your order')
    await screenshot(page, 'sdk-browser-paid')
    const session = await acct.v1('GET', `/checkout/sessions/${out.id as string}`)
    expect(session.body).to.include({status: 'complete'})
    await page.close()
  })

  it('on an origin the key does not list: the browser refuses, and the SDK says so at once (no retries on this machine)', async () => {
    const {page, console} = await open(other)
    const before = (await acct.v1('GET', '/checkout/sessions')).body.data.length as number
    const started = Date.now()
    const out = await start(page, `${other}/thanks`)
    expect(out).to.include({ok: false, name: 'ConnectionError', payapp: true})
    expect(Date.now() - started).to.be.below(5000)
    expect(console.join('\n')).to.match(/blocked by CORS policy/)
    expect((await acct.v1('GET', '/checkout/sessions')).body.data.length).to.equal(before)
    await page.close()
  })
})
