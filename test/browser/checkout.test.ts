import {expect} from 'chai'
import type {Browser, BrowserContext, Page} from 'playwright-core'

import {EMBED_ACK_WAIT_MS} from '../../src/gateway/routes/hosted-checkout.js'
import {launchBrowser, screenshot, startSite} from '../helpers/browser.js'
import {checkout, optionedVariant, sellable, type Account} from '../helpers/commerce.js'
import {TestGateway} from '../helpers/gateway.js'

/** The hosted checkout, its embed and the storefront as a buyer meets them: in a real Chromium. */
describe('browser: hosted checkout in Chromium', function () {
  this.timeout(60_000)
  let browser: Browser | undefined
  let gw: TestGateway
  let acct: Account
  let shop: Awaited<ReturnType<typeof startSite>>
  let context: BrowserContext
  let page: Page

  before(async function () {
    browser = await launchBrowser(this)
    gw = await TestGateway.start()
    acct = await gw.account('test')
    // The merchant's own site, on another origin: its thank-you and cart pages, and a page embedding the checkout.
    shop = await startSite((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x')
      res.setHeader('content-type', 'text/html; charset=utf-8')
      if (url.pathname === '/embed') {
        const src = url.searchParams.get('src') ?? ''
        // ?ack=own: reply to 'paid' as docs/embedded-checkout.md shows; ?ack=other: reply for another session.
        const ack = url.searchParams.get('ack') ?? ''
        res.end(`<!doctype html><title>Shop</title><h1>Shop with an embedded checkout</h1>
<script>
// Kept in the tab's sessionStorage, written in the handler itself: it survives the top window's move to /thanks.
window.addEventListener('message', (e) => {
  const seen = JSON.parse(sessionStorage.getItem('messages') || '[]');
  seen.push({origin: e.origin, data: e.data});
  sessionStorage.setItem('messages', JSON.stringify(seen));
  if (e.data && e.data.outcome === 'paid' && ${JSON.stringify(ack)}) {
    const session_id = ${JSON.stringify(ack)} === 'own' ? e.data.session_id : 'cs_another';
    e.source.postMessage({type: 'payapp.checkout.ack', session_id}, e.origin);
  }
});
</script>
<iframe id="checkout" onload="window.frameLoaded = true" src="${src.replace(/"/g, '&quot;')}" width="520" height="720"></iframe>`)
        return
      }
      res.end(`<!doctype html><title>Shop ${url.pathname}</title><h1>Shop page ${url.pathname}</h1>`)
    })
  })
  after(async () => {
    await browser?.close()
    await shop?.close()
    await gw?.close()
  })
  beforeEach(async () => {
    context = await browser!.newContext({viewport: {width: 900, height: 900}})
    page = await context.newPage()
  })
  afterEach(() => context?.close())

  const session = (id: string) => gw.request('GET', `/v1/checkout/sessions/${id}`, {token: acct.secretKey})
  const paymentsOf = async (id: string) => ((await acct.app('GET', '/payments')).body.data as any[]).filter((p) => p.session_id === id)

  it('pays: the buyer reads the variant, unit price and store, pays, and lands on the storefront success page', async () => {
    const item = await optionedVariant(acct, {name: 'T-Shirt', unit_amount: 1250, sku: 'TSHIRT-L-BLUE', stock: 5})
    const co = await checkout(acct, {product_id: item.product.id, variant_id: item.variant.id, quantity: 2, cancel_url: `${shop.url}/cart`})
    await page.goto(co.checkout_url)
    const store = (await acct.store('GET', '/store')).body
    expect(await page.locator('header .store').innerText()).to.equal(store.display_name)
    const items = await page.locator('.items').innerText()
    expect(items).to.include('L / Blue').and.include('€12.50 × 2').and.not.include('TSHIRT')
    expect(await page.locator('a.back').getAttribute('href')).to.equal(`${shop.url}/cart`)
    await screenshot(page, 'checkout-hosted')

    await page.getByLabel('Name').fill('Ada Buyer')
    await page.getByRole('button', {name: /^Pay/}).click()
    await page.waitForURL(/\/s\/[^/]+\/success\?env=test$/)
    expect(await page.locator('h1').innerText()).to.equal('Thank you for your order')
    await screenshot(page, 'storefront-success')
    expect((await session(co.session_id)).body).to.include({status: 'complete'})
    expect((await acct.app('GET', '/orders')).body.data[0]).to.include({checkout_session: co.session_id, quantity: 2, status: 'paid'})
  })

  it('declines: the buyer sees why, a reload does not record a second failed payment, then pays to the success URL', async () => {
    const item = await sellable(acct, {unit_amount: 900, name: 'Linen Shirt'})
    const co = await checkout(acct, {product_id: item.product.id, success_url: `${shop.url}/thanks`})
    await page.goto(co.checkout_url)
    await page.getByRole('button', {name: 'Decline'}).click()
    expect(await page.getByRole('alert').innerText()).to.include('Your card was declined')
    await screenshot(page, 'checkout-declined')
    await page.reload()
    expect(await page.getByRole('alert').innerText()).to.include('Your card was declined')
    expect(await paymentsOf(co.session_id)).to.have.length(1)
    expect((await session(co.session_id)).body.status).to.equal('open')

    await page.getByRole('button', {name: /^Pay/}).click()
    await page.waitForURL(`${shop.url}/thanks`)
    expect((await session(co.session_id)).body.status).to.equal('complete')
  })

  it('embeds in an iframe on another origin: pays inside it, posts the outcome to the embedding page and moves the top window once the page replies', async () => {
    const item = await sellable(acct, {unit_amount: 2400, name: 'Wool Scarf'})
    const co = await checkout(acct, {product_id: item.product.id, success_url: `${shop.url}/thanks`, cancel_url: `${shop.url}/cart`})
    // The pages' timers stand still: the top window can only move on the shop page's reply, not after the wait.
    await context.clock.install({time: new Date('2026-01-01T00:00:00Z')})
    await page.goto(`${shop.url}/embed?ack=own&src=${encodeURIComponent(co.embed_url)}`)
    await context.clock.pauseAt(new Date('2026-01-01T00:01:00Z'))
    const frame = page.frameLocator('#checkout')
    await frame.getByRole('button', {name: 'Decline'}).click()
    expect(await frame.getByRole('alert').innerText()).to.include('declined')
    expect(page.url(), 'a decline keeps the buyer on the shop page').to.include('/embed?')
    await screenshot(page, 'checkout-embedded-declined')

    await frame.getByRole('button', {name: /^Pay/}).click()
    await page.waitForURL(`${shop.url}/thanks`)
    // What the shop page's handler saw before the top window moved, read back on the shop's /thanks page (same
    // origin, same tab). Not a Playwright binding: its call is handled after a yield and dropped once the calling
    // page's context is gone.
    const messages = (await page.evaluate(() => JSON.parse((globalThis as unknown as {sessionStorage: {getItem(k: string): string | null}}).sessionStorage.getItem('messages') ?? '[]'))) as Array<{origin: string; data: any}>
    const gatewayOrigin = new URL(gw.url).origin
    const outcomes = messages.filter((m) => m.data?.type === 'payapp.checkout').map((m) => [m.origin, m.data.outcome, m.data.session_id])
    expect(outcomes).to.deep.equal([
      [gatewayOrigin, 'ready', co.session_id],
      [gatewayOrigin, 'declined', co.session_id],
      [gatewayOrigin, 'paid', co.session_id],
    ])
    expect((await session(co.session_id)).body.status).to.equal('complete')
  })

  it('moves the top window after a short wait when the embedding page does not reply to paid (or replies for another session)', async () => {
    const item = await sellable(acct, {unit_amount: 1100, name: 'Cotton Cap'})
    const co = await checkout(acct, {product_id: item.product.id, success_url: `${shop.url}/thanks`})
    await context.clock.install({time: new Date('2026-01-01T00:00:00Z')})
    await page.goto(`${shop.url}/embed?ack=other&src=${encodeURIComponent(co.embed_url)}`)
    await context.clock.pauseAt(new Date('2026-01-01T00:01:00Z'))
    const frame = page.frameLocator('#checkout')
    await frame.getByRole('button', {name: /^Pay/}).click()
    expect(await frame.getByRole('alert').innerText()).to.include('Payment received')
    const moved = () => page.waitForURL(`${shop.url}/thanks`, {timeout: 500}).then(() => true, () => false)
    expect(await moved(), 'a reply for another session does not move the window').to.equal(false)
    await context.clock.runFor(EMBED_ACK_WAIT_MS - 100)
    expect(await moved(), 'the wait is not over').to.equal(false)
    await context.clock.runFor(100)
    await page.waitForURL(`${shop.url}/thanks`)
    expect((await session(co.session_id)).body.status).to.equal('complete')
  })

  it('refuses to show checkout_url inside another origin’s frame (frame-ancestors), while embed_url loads', async () => {
    const item = await sellable(acct, {unit_amount: 900})
    const co = await checkout(acct, {product_id: item.product.id})
    await page.goto(`${shop.url}/embed?src=${encodeURIComponent(co.checkout_url)}`)
    await page.waitForFunction(() => (globalThis as {frameLoaded?: boolean}).frameLoaded)
    const framed = page.frames().find((f) => f !== page.mainFrame())!
    expect(await framed.locator('button.pay').count(), 'the Pay button must not render in a foreign frame').to.equal(0)

    await page.goto(`${shop.url}/embed?src=${encodeURIComponent(co.embed_url)}`)
    expect(await page.frameLocator('#checkout').locator('button.pay').count()).to.equal(1)
    await screenshot(page, 'checkout-embedded')
  })

  it('shows the storefront: the store name and its visible products with prices', async () => {
    await sellable(acct, {unit_amount: 3900, name: 'Canvas Tote'})
    const store = (await acct.store('GET', '/store')).body
    await page.goto(`${gw.url}/s/${store.slug}?env=test`)
    expect(await page.locator('h1').innerText()).to.equal(store.display_name)
    const products = await page.locator('.products').innerText()
    expect(products).to.include('Canvas Tote').and.include('€39.00')
    expect(await page.locator('.badge').innerText()).to.equal('TEST MODE')
    await screenshot(page, 'storefront')
  })
})
