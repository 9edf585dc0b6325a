/**
 * What three processes behind the balancer must share beyond rows: rate limits counted once for the whole
 * gateway, caches that see another process's write on the next request (a revoked credential, a new fault
 * rule, a changed catalogue), webhook deliveries claimed by one process each, and clock advances that run
 * each due job once wherever they are sent.
 */
import {expect} from 'chai'

import {clusterForSuite, servedBy} from '../helpers/cluster.js'
import {sellable} from '../helpers/commerce.js'
import {expectError} from '../helpers/gateway.js'
import {receiver, sleep, until} from '../helpers/receiver.js'

describe('cluster: rate limits are counted once for the whole gateway', function () {
  this.timeout(60_000)
  const suite = clusterForSuite({processes: 3, args: ['--rate-limit', 'writes=12,window=60']})

  it('12 writes a minute allowed: 30 creates spread over three processes get 12 answers and 18 rate_limited', async () => {
    const acct = await suite.gw.account()
    // From the first second of a window, so that a minute boundary cannot fall inside the 30 (one did in 3 of 56
    // runs: 21 or 22 answers, a fresh count after it), as test/gateway/rate-limit.test.ts does in one process.
    const now = (await suite.gw.admin('GET', '/clock')).body.now as number
    expect((await suite.gw.admin('POST', '/clock', {advance_seconds: 60 - (now % 60)})).status).to.equal(200)
    const tries = []
    // One at a time, so the balancer's round robin gives each process ten.
    for (let i = 0; i < 30; i++) tries.push(await acct.store('POST', '/products', {body: {name: `Tee ${i}`, price: {currency: 'eur', unit_amount: 2500}}}))
    expect(servedBy(tries)).to.deep.equal(['gw1', 'gw2', 'gw3'])
    // On a failure, who counted what: a process counting apart shows its own run of X-RateLimit-Remaining.
    const seen = tries.map((r) => `${r.headers.get('x-payapp-process')} ${r.status} ${r.headers.get('x-ratelimit-remaining')}`).join(', ')
    expect(tries.filter((r) => r.status === 201), `writes allowed in the window (process, status, remaining: ${seen})`).to.have.length(12)
    for (const r of tries.filter((t) => t.status !== 201)) expectError(r, 429)
  })
})

describe('cluster: every process sees another process’s change on its next request', function () {
  this.timeout(60_000)
  const suite = clusterForSuite({processes: 3})
  const each = <T>(fn: (i: number) => Promise<T>) => Promise.all([0, 1, 2].map(fn))

  it('a token revoked on one process fails with 401 on every process', async () => {
    const acct = await suite.gw.account()
    // Every process has used the token, so each may remember it.
    for (const r of await each((i) => suite.direct(i).request('GET', '/v1/app/products', {token: acct.token}))) expect(r.status, r.text).to.equal(200)
    const revoked = await suite.direct(0).admin('DELETE', `/installations/${acct.installation.id}`)
    expect(revoked.status, revoked.text).to.equal(200)
    for (const r of await each((i) => suite.direct(i).request('GET', '/v1/app/products', {token: acct.token}))) expectError(r, 401)
  })

  it('a fault rule added on one process applies on every process', async () => {
    const acct = await suite.gw.account()
    for (const r of await each((i) => suite.direct(i).request('GET', '/v1/store/products', {token: acct.secretKey}))) expect(r.status, r.text).to.equal(200)
    const rule = await suite.direct(0).admin('POST', '/faults', {merchant: acct.merchant.id, route: 'GET /products', status: 503, error: {type: 'api_error', code: 'maintenance'}})
    expect(rule.status, rule.text).to.equal(201)
    for (const r of await each((i) => suite.direct(i).request('GET', '/v1/store/products', {token: acct.secretKey}))) expectError(r, 503, 'maintenance')
  })

  it('a product created and renamed on one process is listed as it is by every process', async () => {
    const acct = await suite.gw.account()
    const list = (i: number) => suite.direct(i).request('GET', '/v1/store/products?limit=100', {token: acct.secretKey})
    for (const r of await each(list)) expect(r.body.data).to.deep.equal([])
    const made = await suite.direct(0).request('POST', '/v1/store/products', {token: acct.secretKey, body: {name: 'Tee', price: {currency: 'eur', unit_amount: 2500}}})
    expect(made.status, made.text).to.equal(201)
    for (const r of await each(list)) expect(r.body.data.map((p: {name: string}) => p.name)).to.deep.equal(['Tee'])
    const renamed = await suite.direct(1).request('PATCH', `/v1/store/products/${made.body.id}`, {token: acct.secretKey, body: {name: 'Linen Tee'}})
    expect(renamed.status, renamed.text).to.equal(200)
    for (const r of await each(list)) expect(r.body.data.map((p: {name: string}) => p.name)).to.deep.equal(['Linen Tee'])
  })

  it('each webhook delivery is made by one process: every event reaches the receiver exactly once', async () => {
    const rx = await receiver()
    try {
      const acct = await suite.gw.account()
      const hook = await suite.gw.admin('POST', '/webhook_endpoints', {merchant: acct.merchant.id, env: 'test', url: rx.url, events: ['product.created']})
      expect(hook.status, hook.text).to.equal(201)
      const made = await Promise.all(Array.from({length: 30}, (_, i) => acct.store('POST', '/products', {body: {name: `Tee ${i}`, price: {currency: 'eur', unit_amount: 2500}}})))
      expect(servedBy(made)).to.deep.equal(['gw1', 'gw2', 'gw3'])
      await until(() => new Set(rx.got.map((r) => r.event.id)).size >= 30, 'thirty events delivered', 10_000)
      // Every process polls the outbox: give a second claim the time to show up.
      await sleep(1500)
      const ids = rx.got.map((r) => r.event.id as string)
      expect([...new Set(ids.filter((id, i) => ids.indexOf(id) !== i))], 'events delivered more than once').to.deep.equal([])
      expect(ids.map((id) => rx.got.find((r) => r.event.id === id)!.event.data.object.name).sort()).to.deep.equal(made.map((r) => r.body.name).sort())
    } finally {
      await rx.close()
    }
  })

  it('a clock advance sent to one process runs each due job once and answers when all are done', async () => {
    const acct = await suite.gw.account()
    const item = await sellable(acct, {stock: 5})
    const opened = await Promise.all(Array.from({length: 5}, () => acct.store('POST', '/checkouts', {body: {product_id: item.product.id, variant_id: item.variant.id, quantity: 1}})))
    expect(opened.map((r) => r.status)).to.deep.equal([201, 201, 201, 201, 201])
    expectError(await acct.store('POST', '/checkouts', {body: {product_id: item.product.id, variant_id: item.variant.id, quantity: 1}}), 409, 'out_of_stock')
    // The sessions expire after 30 minutes: their reservations go back to stock.
    const advanced = await suite.direct(2).admin('POST', '/clock', {merchant: acct.merchant.id, advance_seconds: 31 * 60})
    expect(advanced.status, advanced.text).to.equal(200)
    const expired = await suite.direct(0).admin('GET', `/events?merchant=${acct.merchant.id}&env=test&type=checkout.session.expired&limit=100`)
    expect(expired.body.data.map((e: {data: {object: {id: string}}}) => e.data.object.id).sort(), 'one expiry per session').to.deep.equal(
      opened.map((r) => r.body.session_id).sort(),
    )
    // Every process sees the released stock at once.
    for (const r of await each((i) => suite.direct(i).request('POST', '/v1/store/checkouts', {token: acct.secretKey, body: {product_id: item.product.id, variant_id: item.variant.id, quantity: 1}}))) {
      expect(r.status, r.text).to.equal(201)
    }
  })
})
