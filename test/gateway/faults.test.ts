import {expect} from 'chai'

import {expectError, holdNextRead, TestGateway, type Account} from '../helpers/gateway.js'

/**
 * Fault injection (`/_admin/faults`): rules that make API requests fail or answer late, over real
 * HTTP, as an app's test suite would set them up.
 */
describe('gateway: fault injection', function () {
  this.timeout(60_000)
  let gw: TestGateway
  let acct: Account
  let other: Account

  before(async () => {
    gw = await TestGateway.start()
    acct = await gw.account('test')
    other = await gw.account('test')
  })
  afterEach(async () => {
    await gw.admin('DELETE', '/faults')
  })
  after(() => gw.close())

  const productCount = async (account: Account) => (await account.app('GET', '/products?limit=100')).body.data.length as number

  it('answers a faulted write with a 429 envelope and Retry-After, writes nothing, and the keyed retry runs as if it never happened', async () => {
    const rule = await gw.admin('POST', '/faults', {route: 'POST /v1/app/products', status: 429, retry_after: 2, count: 1})
    expect(rule.status, rule.text).to.equal(201)
    expect(rule.body).to.include({object: 'fault', status: 429, remaining: 1, retry_after: 2})
    const before = await productCount(acct)

    const faulted = await acct.app('POST', '/products', {body: {name: 'Retried'}, idempotencyKey: 'fault-retry-1'})
    const err = expectError(faulted, 429, 'rate_limited')
    expect(err.type).to.equal('rate_limit_error')
    expect(err.message).to.include(rule.body.id)
    expect(faulted.headers.get('retry-after')).to.equal('2')
    expect(await productCount(acct)).to.equal(before)

    const retry = await acct.app('POST', '/products', {body: {name: 'Retried'}, idempotencyKey: 'fault-retry-1'})
    expect(retry.status, retry.text).to.equal(201)
    expect(retry.headers.get('idempotent-replayed')).to.equal(null)
    const replay = await acct.app('POST', '/products', {body: {name: 'Retried'}, idempotencyKey: 'fault-retry-1'})
    expect(replay.body.id).to.equal(retry.body.id)
    expect(await productCount(acct)).to.equal(before + 1)

    const listed = await gw.admin('GET', `/faults/${rule.body.id}`)
    expect(listed.body).to.include({hits: 1, remaining: 0})
  })

  it('matches by endpoint id on both doors, with a custom error, for exactly `count` requests', async () => {
    await gw.admin('POST', '/faults', {route: 'products.list', status: 503, error: {type: 'api_error', code: 'maintenance'}, count: 2})
    const first = await acct.app('GET', '/products')
    expectError(first, 503, 'maintenance')
    expect(first.headers.get('retry-after')).to.equal('1')
    expectError(await acct.store('GET', '/products'), 503, 'maintenance')
    expect((await acct.app('GET', '/products')).status).to.equal(200)
    // Other routes were never affected.
    expect((await acct.app('GET', '/store')).status).to.equal(200)
  })

  it("limits a rule to one merchant's requests", async () => {
    await gw.admin('POST', '/faults', {merchant: other.merchant.id, status: 500})
    expectError(await other.app('GET', '/products'), 500, 'internal_error')
    expect((await acct.app('GET', '/products')).status).to.equal(200)
  })

  it('strikes the next request with a rule added while a re-read of the rules (another process changed them) was under way', async () => {
    const {platform} = gw.gw
    // The re-read a process makes when the shared version moved: it reads before the rule exists and answers after.
    const held = holdNextRead(platform.storage.reads.faults, 'all')
    const rereading = platform.faults.refresh()
    await held.read
    expect((await gw.admin('POST', '/faults', {merchant: other.merchant.id, status: 500})).status).to.equal(201)
    held.release()
    await rereading
    expectError(await other.app('GET', '/products'), 500, 'internal_error')
  })

  it('matches "METHOD /path" under both doors, with {param} patterns', async () => {
    const product = await acct.app('POST', '/products', {body: {name: 'Target'}})
    await gw.admin('POST', '/faults', {route: 'GET /products/{id}', status: 500})
    expectError(await acct.app('GET', `/products/${product.body.id}`), 500)
    expectError(await acct.store('GET', `/products/${product.body.id}`), 500)
    expect((await acct.app('GET', '/products')).status).to.equal(200)
  })

  it('delays without failing when only latency_ms is given', async () => {
    const rule = await gw.admin('POST', '/faults', {route: 'products.list', latency_ms: 50, count: 1})
    expect(rule.body.status).to.equal(null)
    const res = await acct.app('GET', '/products')
    expect(res.status).to.equal(200)
    expect((await gw.admin('GET', `/faults/${rule.body.id}`)).body.hits).to.equal(1)
  })

  it('faults the same requests on every run with the same seed', async () => {
    const run = async () => {
      await gw.admin('POST', '/faults', {route: 'products.list', status: 500, probability: 0.5, seed: 42})
      const statuses: number[] = []
      for (let i = 0; i < 20; i++) statuses.push((await acct.app('GET', '/products')).status)
      await gw.admin('DELETE', '/faults')
      return statuses
    }
    const first = await run()
    expect(first).to.include(500).and.include(200)
    expect(await run()).to.deep.equal(first)
  })

  it('lists, reads and deletes rules, and refuses bad ones with a 400', async () => {
    const a = await gw.admin('POST', '/faults', {status: 500})
    const b = await gw.admin('POST', '/faults', {route: 'products.create', status: 429})
    expect((await gw.admin('GET', '/faults')).body.data.map((f: {id: string}) => f.id)).to.deep.equal([a.body.id, b.body.id])
    expect((await gw.admin('DELETE', `/faults/${a.body.id}`)).body).to.deep.equal({id: a.body.id, object: 'fault', deleted: true})
    expectError(await gw.admin('GET', `/faults/${a.body.id}`), 404)
    expect((await gw.admin('DELETE', '/faults')).body).to.deep.equal({object: 'faults_cleared', deleted: 1})

    expect(expectError(await gw.admin('POST', '/faults', {status: 404}), 400).param).to.equal('status')
    expect(expectError(await gw.admin('POST', '/faults', {route: 'no.such.endpoint'}), 400).param).to.equal('route')
    expect(expectError(await gw.admin('POST', '/faults', {probability: 2}), 400).param).to.equal('probability')
    expect(expectError(await gw.admin('POST', '/faults', {merchant: 'mch_nope'}), 404).param).to.equal('merchant')
    // The admin API itself is never faulted.
    await gw.admin('POST', '/faults', {status: 500})
    expect((await gw.admin('GET', '/clock')).status).to.equal(200)
  })

  it('starts with the rules given to startGateway (gateway start --faults)', async () => {
    const seeded = await TestGateway.start({faults: [{route: 'store.retrieve', status: 503, retry_after: 0}]})
    try {
      const account = await seeded.account('test')
      const res = await account.app('GET', '/store')
      expectError(res, 503, 'service_unavailable')
      expect(res.headers.get('retry-after')).to.equal('0')
    } finally {
      await seeded.close()
    }
  })
})
