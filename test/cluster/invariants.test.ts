/**
 * Three `gateway start` processes on one database behind HAProxy (docs/shared-gateway.md) behave as one
 * gateway: the storage invariants of a single process hold across processes, because storage (locks,
 * conditional updates, unique constraints) guarantees them, not a process's memory.
 * Engine: PAYAPP_TEST_DB (see test/helpers/cluster.ts); a shared SQLite file by default.
 */
import {expect} from 'chai'

import {clusterForSuite, servedBy} from '../helpers/cluster.js'
import {sellable} from '../helpers/commerce.js'
import {expectError, type HttpResult} from '../helpers/gateway.js'

describe('cluster: three processes behind the balancer are one gateway', function () {
  this.timeout(60_000)
  const suite = clusterForSuite({processes: 3})

  it('spreads requests over all three processes', async () => {
    const acct = await suite.gw.account()
    const answers = await Promise.all(Array.from({length: 12}, () => acct.store('GET', '/products')))
    expect(answers.map((r) => r.status)).to.deep.equal(Array(12).fill(200))
    expect(servedBy(answers)).to.deep.equal(['gw1', 'gw2', 'gw3'])
  })

  it('the same Idempotency-Key sent to two processes at once writes once and replays the same answer', async () => {
    const acct = await suite.gw.account()
    const body = {name: 'Keyed Tee', price: {currency: 'eur', unit_amount: 2500}}
    const send = (i: number) => suite.direct(i).request('POST', '/v1/store/products', {token: acct.secretKey, body, idempotencyKey: 'one-write'})
    // Each process gets the key several times, all in flight together.
    let answers: HttpResult[] = await Promise.all(Array.from({length: 10}, (_, n) => send(n % 2)))
    const inFlight = answers.filter((r) => r.status === 409)
    for (const r of inFlight) expectError(r, 409, 'idempotency_in_flight')
    // A client told "in flight" retries: it gets the first answer too.
    answers = [...answers.filter((r) => r.status !== 409), ...(await Promise.all(inFlight.map((_, n) => send(n % 2))))]
    expect(answers.map((r) => r.status)).to.deep.equal(Array(10).fill(201))
    const ids = new Set(answers.map((r) => r.body.id))
    expect(ids.size, 'one product id in every answer').to.equal(1)
    expect(new Set(answers.map((r) => r.text)).size, 'byte-identical replays').to.equal(1)
    // Through the balancer, from whichever process: one product.
    const listed = await suite.direct(2).request('GET', '/v1/store/products?limit=100', {token: acct.secretKey})
    expect(listed.body.data.map((p: {id: string}) => p.id)).to.deep.equal([...ids])
  })

  it('60 concurrent checkouts for 10 units, spread over three processes: exactly 10 paid, 50 out_of_stock', async () => {
    const acct = await suite.gw.account()
    const item = await sellable(acct, {stock: 10})
    const tries = await Promise.all(
      Array.from({length: 60}, () => acct.store('POST', '/checkouts', {body: {product_id: item.product.id, variant_id: item.variant.id, quantity: 1}})),
    )
    expect(servedBy(tries)).to.deep.equal(['gw1', 'gw2', 'gw3'])
    const opened = tries.filter((r) => r.status === 201)
    const refused = tries.filter((r) => r.status !== 201)
    expect(opened, tries.filter((r) => r.status >= 500).map((r) => r.text).join('\n')).to.have.length(10)
    for (const r of refused) expectError(r, 409, 'out_of_stock')
    const paid = await Promise.all(opened.map((r) => suite.gw.admin('POST', `/checkouts/${r.body.session_id}/complete`, {outcome: 'paid'})))
    expect(paid.map((r) => r.status)).to.deep.equal(Array(10).fill(200))
    const payments = await acct.v1('GET', '/payments?limit=100')
    expect(payments.status, payments.text).to.equal(200)
    expect(payments.body.data.filter((p: {status: string}) => p.status === 'succeeded')).to.have.length(10)
    // Nothing is left to sell, on any process.
    for (let i = 0; i < 3; i++) {
      expectError(
        await suite.direct(i).request('POST', '/v1/store/checkouts', {token: acct.secretKey, body: {product_id: item.product.id, variant_id: item.variant.id, quantity: 1}}),
        409,
        'out_of_stock',
      )
    }
  })

  it('concurrent creates of a price with one lookup_key across processes: one active price holds it', async () => {
    const acct = await suite.gw.account()
    const made = await acct.store('POST', '/products', {body: {name: 'Tee', price: {currency: 'eur', unit_amount: 2500}}})
    expect(made.status, made.text).to.equal(201)
    const tries = await Promise.all(
      Array.from({length: 30}, (_, n) => acct.store('POST', `/products/${made.body.id}/prices`, {body: {currency: 'eur', unit_amount: 2600 + n, lookup_key: 'standard'}})),
    )
    expect(servedBy(tries)).to.deep.equal(['gw1', 'gw2', 'gw3'])
    const created = tries.filter((r) => r.status === 201)
    expect(created).to.have.length(1)
    for (const r of tries.filter((t) => t.status !== 201)) expectError(r, 409, 'lookup_key_exists')
    const prices = await acct.store('GET', `/products/${made.body.id}/prices?limit=100`)
    expect(prices.body.data.filter((p: {lookup_key: string | null}) => p.lookup_key === 'standard').map((p: {id: string}) => p.id)).to.deep.equal([created[0]!.body.id])
  })
})
