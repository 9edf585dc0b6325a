import {expect} from 'chai'

import {AppClient, GatewayAdmin, RateLimitError, type ResponseEvent} from '@payapp/sdk'
import {TestGateway, type Account} from '../helpers/gateway.js'
import {rejection} from '../helpers/sdk.js'

/**
 * The SDK's retry policy end to end, against faults injected into a real gateway over real HTTP: the
 * way an app's own suite proves its retry logic (see the README's "Testing your retry logic").
 */
describe('SDK retry policy against injected faults', function () {
  this.timeout(60_000)
  let gw: TestGateway
  let acct: Account
  let admin: GatewayAdmin

  before(async () => {
    gw = await TestGateway.start()
    acct = await gw.account('test')
    admin = new GatewayAdmin({baseUrl: gw.url, adminKey: gw.gw.adminKey})
  })
  afterEach(() => admin.faults.clear())
  after(() => gw.close())

  function client(events: ResponseEvent[], opts: {maxRetries?: number; timeout?: number} = {}) {
    return new AppClient({baseUrl: gw.url, token: acct.token, retryDelays: {initialMs: 10, maxMs: 50}, onResponse: (e) => events.push(e), ...opts})
  }

  const names = async () => (await new AppClient({baseUrl: gw.url, token: acct.token}).products.list({limit: 100})).data.map((p) => p.name)

  it('waits the Retry-After of a 429, retries with the same Idempotency-Key, and creates the product once', async () => {
    await admin.faults.create({route: 'products.create', status: 429, retry_after: 1, count: 2})
    const events: ResponseEvent[] = []
    const keys = new Set<string | undefined>()
    const sdk = new AppClient({
      baseUrl: gw.url,
      token: acct.token,
      retryDelays: {initialMs: 10, maxMs: 50},
      onRequest: (e) => keys.add(e.idempotencyKey),
      onResponse: (e) => events.push(e),
    })
    const product = await sdk.products.create({name: 'After two 429s'})
    expect(events.map((e) => e.status)).to.deep.equal([429, 429, 201])
    // Retry-After (1 s) wins over the 10 ms backoff.
    expect(events[0].retry).to.deep.equal({delayMs: 1000, reason: 'rate limited (429)'})
    expect(keys.size).to.equal(1)
    expect((await names()).filter((n) => n === 'After two 429s')).to.have.length(1)
    expect(product.name).to.equal('After two 429s')
  })

  it('backs off and retries 500s until the write succeeds, exactly once', async () => {
    await admin.faults.create({route: 'POST /products', status: 500, count: 3})
    const events: ResponseEvent[] = []
    await client(events).products.create({name: 'After three 500s'})
    expect(events.map((e) => e.status)).to.deep.equal([500, 500, 500, 201])
    expect(events.slice(0, 3).every((e) => e.retry?.reason === 'server error (500)')).to.equal(true)
    expect((await names()).filter((n) => n === 'After three 500s')).to.have.length(1)
  })

  it('gives up after maxRetries with the typed error, having written nothing', async () => {
    await admin.faults.create({route: 'products.create', status: 429, retry_after: 0})
    const events: ResponseEvent[] = []
    const err = await rejection(client(events, {maxRetries: 2}).products.create({name: 'Never written'}))
    expect(err).to.be.instanceOf(RateLimitError)
    expect(err.code).to.equal('rate_limited')
    expect(events).to.have.length(3)
    expect(await names()).not.to.include('Never written')
  })

  it('times out a slow answer and retries it, so injected latency surfaces as one successful call', async () => {
    await admin.faults.create({route: 'products.list', latency_ms: 1500, count: 1})
    const events: ResponseEvent[] = []
    const page = await client(events, {timeout: 300}).products.list()
    expect(page.object).to.equal('list')
    expect(events[0].errorCode).to.equal('ETIMEDOUT')
    expect(events[0].retry).to.not.equal(undefined)
    expect(events.at(-1)!.status).to.equal(200)
  })
})
