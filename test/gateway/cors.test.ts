import {expect} from 'chai'
import {chromium, type Browser} from 'playwright-core'

import {chromiumPath, startSite} from '../helpers/browser.js'
import {expectError, TestGateway, type Account, type HttpResult} from '../helpers/gateway.js'

/**
 * CORS on the routes a browser may call (src/gateway/cors.ts): the publishable key's checkout session
 * create and the `?cs=` retrieval answer the origins publishable keys list, and nothing else answers any.
 */
const SHOP = 'https://shop.example.com'
const OTHER = 'https://evil.example.com'
const line = {name: 'Tea', quantity: 2, amount: 500, currency: 'eur'}

async function publishableKey(gw: TestGateway, merchant: string, origins: string[]) {
  const res = await gw.admin('POST', '/keys', {merchant, mode: 'test', scopes: ['checkout:write'], type: 'publishable', allowed_origins: origins})
  expect(res.status, res.text).to.equal(201)
  return res.body as {id: string; publishable_key: string}
}

const preflight = (gw: TestGateway, path: string, origin: string, method = 'POST', headers = 'authorization,content-type,idempotency-key') =>
  gw.request('OPTIONS', path, {headers: {origin, 'access-control-request-method': method, 'access-control-request-headers': headers}})

function expectNoCors(res: HttpResult) {
  for (const name of ['access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers', 'access-control-expose-headers']) {
    expect(res.headers.get(name), `${name} on ${res.status}`).to.equal(null)
  }
}

const list = (value: string | null) => (value ?? '').split(',').map((s) => s.trim().toLowerCase())

describe('gateway: CORS for publishable keys', () => {
  let gw: TestGateway
  let acct: Account
  let pk: {id: string; publishable_key: string}
  before(async () => {
    gw = await TestGateway.start({rateLimit: true, rateLimits: {limits: {checkout: 3}}})
    acct = await gw.account('test')
    pk = await publishableKey(gw, acct.merchant.id, [SHOP])
  })
  after(() => gw.close())

  const create = (origin: string, token = pk.publishable_key) =>
    gw.request('POST', '/v1/checkout/sessions', {token, headers: {origin}, body: {line_items: [line]}, idempotencyKey: `k-${Math.random()}`})

  it('answers the preflight of a listed origin with that origin (never *), the route\'s method and the three headers', async () => {
    const res = await preflight(gw, '/v1/checkout/sessions', SHOP)
    expect(res.status, res.text).to.equal(204)
    expect(res.headers.get('access-control-allow-origin')).to.equal(SHOP)
    expect(list(res.headers.get('vary'))).to.include('origin')
    expect(list(res.headers.get('access-control-allow-methods'))).to.deep.equal(['post'])
    expect(list(res.headers.get('access-control-allow-headers'))).to.include.members(['authorization', 'content-type', 'idempotency-key'])
    expect(res.headers.get('access-control-allow-credentials')).to.equal(null)
  })

  it('answers the actual request from a listed origin with that origin and exposes the request id, Retry-After and rate-limit headers', async () => {
    const res = await create(SHOP)
    expect(res.status, res.text).to.equal(201)
    expect(res.headers.get('access-control-allow-origin')).to.equal(SHOP)
    expect(list(res.headers.get('vary'))).to.include('origin')
    const exposed = list(res.headers.get('access-control-expose-headers'))
    expect(exposed).to.include.members(['x-request-id', 'retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'])
    // What the page reads: a rate-limit refusal carries the origin too, so the page can back off.
    let limited: HttpResult | undefined
    for (let i = 0; i < 5 && !limited; i++) {
      const next = await create(SHOP)
      if (next.status === 429) limited = next
    }
    expect(limited, 'the checkout bucket (3 a window) refuses').to.not.equal(undefined)
    expect(limited!.headers.get('access-control-allow-origin')).to.equal(SHOP)
    expect(limited!.headers.get('retry-after')).to.match(/^\d+$/)
  })

  it('gives a non-listed origin no CORS header, on the preflight and on the request', async () => {
    const pre = await preflight(gw, '/v1/checkout/sessions', OTHER)
    expectError(pre, 403, 'origin_not_allowed')
    expectNoCors(pre)
    const res = await create(OTHER)
    expectError(res, 403, 'origin_not_allowed')
    expectNoCors(res)
  })

  it('gives routes a publishable key cannot call no CORS header, even from a listed origin', async () => {
    for (const [path, method] of [
      ['/v1/products', 'GET'],
      ['/v1/checkout/sessions', 'GET'],
      ['/v1/refunds', 'POST'],
      ['/v1/checkout/sessions/cs_x/expire', 'POST'],
      ['/v1/store/products', 'GET'],
      ['/v1/app/products', 'GET'],
    ] as const) {
      const pre = await preflight(gw, path, SHOP, method)
      expect(pre.status, `OPTIONS ${path} for ${method}`).to.be.oneOf([404, 405])
      expectNoCors(pre)
    }
    // The list and update of sessions share URLs with the browser's routes, but not their methods.
    expectError(await preflight(gw, '/v1/checkout/sessions', SHOP, 'GET'), 405, 'method_not_allowed')
    expectError(await preflight(gw, '/v1/checkout/sessions/cs_x', SHOP, 'PATCH'), 405, 'method_not_allowed')
    const products = await acct.v1('GET', '/products', {headers: {origin: SHOP}})
    expectError(products, 403, 'origin_forbidden')
    expectNoCors(products)
  })

  it('keeps refusing a secret key sent with an Origin (403), and the publishable key on other routes', async () => {
    const secret = await create(SHOP, acct.secretKey)
    expectError(secret, 403, 'origin_forbidden')
    const list = await gw.request('GET', '/v1/checkout/sessions', {token: pk.publishable_key, headers: {origin: SHOP}})
    expectError(list, 403, 'publishable_key_forbidden')
    expectNoCors(list)
  })

  it('lets the embed\'s origin read the session by its client secret (?cs=), and no other origin', async () => {
    const session = (await acct.v1('POST', '/checkout/sessions', {body: {line_items: [line]}})).body
    const path = `/v1/checkout/sessions/${session.id}?cs=${encodeURIComponent(session.client_secret)}`
    const read = await gw.request('GET', path, {headers: {origin: SHOP}})
    expect(read.status, read.text).to.equal(200)
    expect(read.body.id).to.equal(session.id)
    expect(read.headers.get('access-control-allow-origin')).to.equal(SHOP)
    const pre = await preflight(gw, path, SHOP, 'GET', 'content-type')
    expect(pre.status).to.equal(204)
    expect(list(pre.headers.get('access-control-allow-methods'))).to.deep.equal(['get'])
    const other = await gw.request('GET', path, {headers: {origin: OTHER}})
    expect(other.status).to.equal(200) // the secret authorises; the browser withholds the answer from the page
    expectNoCors(other)
  })

  it('follows the keys: a new key\'s origin is answered at once, a revoked key\'s origin no longer', async () => {
    const origin = 'https://new-shop.example.com'
    expectNoCors(await preflight(gw, '/v1/checkout/sessions', origin))
    const key = await publishableKey(gw, acct.merchant.id, [origin])
    expect((await preflight(gw, '/v1/checkout/sessions', origin)).headers.get('access-control-allow-origin')).to.equal(origin)
    const revoked = await gw.admin('DELETE', `/keys/${key.id}`)
    expect(revoked.status, revoked.text).to.be.within(200, 299)
    const after = await preflight(gw, '/v1/checkout/sessions', origin)
    expectError(after, 403, 'origin_not_allowed')
    expectNoCors(after)
    // The origin of the first key is still listed by it.
    expect((await preflight(gw, '/v1/checkout/sessions', SHOP)).headers.get('access-control-allow-origin')).to.equal(SHOP)
  })

  it('allows a public page on a listed origin to reach the gateway on a private network (Private Network Access), and no other', async () => {
    const pna = (origin: string) =>
      gw.request('OPTIONS', '/v1/checkout/sessions', {headers: {origin, 'access-control-request-method': 'POST', 'access-control-request-private-network': 'true'}})
    const listed = await pna(SHOP)
    expect(listed.status).to.equal(204)
    expect(listed.headers.get('access-control-allow-private-network')).to.equal('true')
    expect((await preflight(gw, '/v1/checkout/sessions', SHOP)).headers.get('access-control-allow-private-network'), 'only when asked').to.equal(null)
    expect((await pna(OTHER)).headers.get('access-control-allow-private-network')).to.equal(null)
  })

  it('an OPTIONS that is not a preflight gets the methods and no CORS header', async () => {
    const res = await gw.request('OPTIONS', '/v1/checkout/sessions')
    expect(res.status).to.equal(204)
    expect(list(res.headers.get('allow'))).to.include.members(['post', 'options'])
    expectNoCors(res)
  })
})

describe('gateway: CORS origins across processes on one database', () => {
  it('sees a key another gateway on the same file issued', async () => {
    const db = TestGateway.tempDbFile()
    const a = await TestGateway.start({db})
    const b = await TestGateway.start({db, adminKey: a.gw.adminKey})
    try {
      const origin = 'https://other-process.example.com'
      expectNoCors(await preflight(a, '/v1/checkout/sessions', origin))
      await publishableKey(b, (await b.merchant()).id, [origin])
      // An unknown origin re-reads the keys at most once a second.
      await new Promise((resolve) => setTimeout(resolve, 1100))
      expect((await preflight(a, '/v1/checkout/sessions', origin)).headers.get('access-control-allow-origin')).to.equal(origin)
    } finally {
      await b.close()
      await a.close()
    }
  })
})

describe('gateway: CORS in a real Chromium', function () {
  this.timeout(60_000)
  let browser: Browser
  let gw: TestGateway
  let pk: string
  let acct: Account
  let sites: Array<Awaited<ReturnType<typeof startSite>>>

  before(async function () {
    const executablePath = chromiumPath()
    if (!executablePath) {
      if (process.env.CI) throw new Error('chromium is not installed: .ci/run installs it with apt-get install chromium')
      return this.skip()
    }
    browser = await chromium.launch({
      executablePath,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    })
    const page = (_req: unknown, res: {setHeader(n: string, v: string): void; end(s: string): void}) => {
      res.setHeader('content-type', 'text/html; charset=utf-8')
      res.end('<!doctype html><title>Shop</title><h1>Shop</h1>')
    }
    sites = [await startSite(page), await startSite(page)]
    gw = await TestGateway.start()
    acct = await gw.account('test')
    pk = (await publishableKey(gw, acct.merchant.id, [sites[0]!.url])).publishable_key
  })
  after(async () => {
    await browser?.close()
    for (const site of sites ?? []) await site.close()
    await gw?.close()
  })

  /** A page on `site` creates a session with the publishable key by a plain fetch, then reads it by its client secret. */
  async function fromPage(site: string) {
    const context = await browser.newContext()
    try {
      const page = await context.newPage()
      await page.goto(site)
      return await page.evaluate(
        async ({api, key, body}) => {
          try {
            const res = await fetch(`${api}/v1/checkout/sessions`, {
              method: 'POST',
              headers: {authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID()},
              body: JSON.stringify(body),
            })
            const session = (await res.json()) as {id: string; client_secret: string}
            const read = await fetch(`${api}/v1/checkout/sessions/${session.id}?cs=${encodeURIComponent(session.client_secret)}`)
            return {status: res.status, requestId: res.headers.get('x-request-id'), id: session.id, readStatus: read.status, read: await read.json()}
          } catch (error) {
            return {error: String(error)}
          }
        },
        {api: gw.url, key: pk, body: {line_items: [line]}},
      )
    } finally {
      await context.close()
    }
  }

  it('a page on the listed origin creates a session and reads it; a page on another origin is refused by the browser', async () => {
    const ok = await fromPage(sites[0]!.url)
    expect(ok, JSON.stringify(ok)).to.include({status: 201, readStatus: 200})
    expect((ok as {requestId: string}).requestId).to.match(/^req_/)
    expect((ok as {read: {id: string}}).read.id).to.equal((ok as {id: string}).id)

    const count = async () => (await acct.v1('GET', '/checkout/sessions?limit=100')).body.data.length as number
    const before = await count()
    const refused = await fromPage(sites[1]!.url)
    expect(refused, JSON.stringify(refused)).to.have.property('error').that.matches(/Failed to fetch/)
    // Refused at the preflight: the POST was never sent, so no session was created.
    expect(await count()).to.equal(before)
  })
})
