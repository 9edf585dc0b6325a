/**
 * One active price per merchant, environment and lookup_key (spec-gaps: as the best-known payments API):
 * a second one is a 409 `lookup_key_exists`, and `transfer_lookup_key: true` on create moves the key in
 * the same write. The rule is the storage's (a unique partial index), not only a check before the write.
 */
import {expect} from 'chai'

import {expectError, TestGateway, type Account} from '../helpers/gateway.js'

describe('prices: one active price per lookup_key', function () {
  this.timeout(20_000)
  let gw: TestGateway
  before(async () => {
    gw = await TestGateway.start()
  })
  after(() => gw.close())

  async function product(acct: Account, name = 'Tee') {
    const res = await acct.store('POST', '/products', {body: {name, price: {currency: 'eur', unit_amount: 2500}}})
    expect(res.status, res.text).to.equal(201)
    return res.body
  }
  const createPrice = (acct: Account, productId: string, body: Record<string, unknown>) =>
    acct.store('POST', `/products/${productId}/prices`, {body: {currency: 'eur', unit_amount: 2700, ...body}})

  it('a second active price with a lookup_key is a 409 lookup_key_exists naming lookup_key, on any product of the merchant', async () => {
    const acct = await gw.account()
    const tee = await product(acct)
    const mug = await product(acct, 'Mug')
    expect((await createPrice(acct, tee.id, {lookup_key: 'std'})).status).to.equal(201)
    expect(expectError(await createPrice(acct, tee.id, {lookup_key: 'std'}), 409, 'lookup_key_exists').param).to.equal('lookup_key')
    expectError(await createPrice(acct, mug.id, {lookup_key: 'std'}), 409, 'lookup_key_exists')
    // Through the App API too, and through an inline price: no product is left behind by the refused create.
    expectError(await acct.app('POST', `/products/${tee.id}/prices`, {body: {currency: 'eur', unit_amount: 3000, lookup_key: 'std'}}), 409, 'lookup_key_exists')
    const before = (await acct.store('GET', '/products?limit=100')).body.data.length
    expectError(await acct.store('POST', '/products', {body: {name: 'Cap', price: {currency: 'eur', unit_amount: 2500, lookup_key: 'std'}}}), 409, 'lookup_key_exists')
    expect((await acct.store('GET', '/products?limit=100')).body.data).to.have.length(before)
    const prices = (await acct.store('GET', `/products/${tee.id}/prices?limit=100`)).body.data
    expect(prices.filter((p: any) => p.lookup_key === 'std')).to.have.length(1)
  })

  it('another merchant, or an archived price, does not hold the key', async () => {
    const a = await gw.account()
    const b = await gw.account()
    const ta = await product(a)
    const tb = await product(b)
    const first = (await createPrice(a, ta.id, {lookup_key: 'k'})).body
    expect((await createPrice(b, tb.id, {lookup_key: 'k'})).status).to.equal(201)
    expect((await a.store('PATCH', `/products/${ta.id}/prices/${first.id}`, {body: {active: false}})).status).to.equal(200)
    expect((await createPrice(a, ta.id, {lookup_key: 'k'})).status).to.equal(201)
    // Reactivating the old one would make two: refused.
    expectError(await a.store('PATCH', `/products/${ta.id}/prices/${first.id}`, {body: {active: true}}), 409, 'lookup_key_exists')
  })

  it('setting a held key with PATCH is a 409; transfer_lookup_key: true on create moves it atomically', async () => {
    const acct = await gw.account()
    const tee = await product(acct)
    const old = (await createPrice(acct, tee.id, {lookup_key: 'std'})).body
    const other = (await createPrice(acct, tee.id, {unit_amount: 2900})).body
    expectError(await acct.store('PATCH', `/products/${tee.id}/prices/${other.id}`, {body: {lookup_key: 'std'}}), 409, 'lookup_key_exists')
    const moved = await createPrice(acct, tee.id, {unit_amount: 3100, lookup_key: 'std', transfer_lookup_key: true})
    expect(moved.status, moved.text).to.equal(201)
    expect(moved.body.lookup_key).to.equal('std')
    const after = (await acct.store('GET', `/products/${tee.id}/prices?limit=100`)).body.data
    expect(after.find((p: any) => p.id === old.id)).to.include({lookup_key: null, active: true})
    expect(after.filter((p: any) => p.lookup_key === 'std').map((p: any) => p.id)).to.deep.equal([moved.body.id])
    // transfer_lookup_key without a lookup_key names what is missing.
    expectError(await createPrice(acct, tee.id, {transfer_lookup_key: true}), 400)
  })

  it('the storage itself refuses a second active price with the key (a unique index, not only a check)', async () => {
    const acct = await gw.account()
    const tee = await product(acct)
    const held = (await createPrice(acct, tee.id, {lookup_key: 'std'})).body
    const scope = {merchant: acct.merchant.id, env: 'test' as const}
    const platform = gw.gw.platform
    const copy = {...(await platform.storage.reads.get('price', scope, held.id))!, id: 'price_duplicate0000000000000'}
    const refused = await platform.write((tx) => tx.insert('price', scope, copy, {parent: tee.id, created: copy.created})).catch((error: Error) => error)
    expect(refused).to.be.instanceOf(Error).with.property('message').match(/unique/i)
  })
})
