/**
 * The invariants storage enforces (docs/architecture.md, "Invariants"): each raced through real HTTP
 * with many requests at once, and each checked at the storage level too, where a second write that
 * would break it is refused by the conditional update or unique constraint itself, not by a read before.
 */
import {expect} from 'chai'

import {combinationKey} from '../../src/gateway/storage/storage.js'
import {checkout, optionedVariant, pay, readVariant, sellable} from '../helpers/commerce.js'
import {expectError, TestGateway} from '../helpers/gateway.js'

describe('gateway invariants enforced by storage', () => {
  let gw: TestGateway
  before(async () => {
    gw = await TestGateway.start()
  })
  after(() => gw.close())

  it('stock: the conditional update refuses a reservation beyond the stock, however the caller read it', async () => {
    const acct = await gw.account()
    const item = await sellable(acct, {stock: 2})
    const scope = {merchant: acct.merchant.id, env: 'test' as const}
    const platform = gw.gw.platform
    const take = (n: number) => platform.write((tx) => tx.increment('variant', scope, item.variant.id, {field: 'stock_reserved', by: n, atMost: 'stock_qty'}))
    expect(await take(2)).to.include({stock_reserved: 2})
    // A stale copy that still shows 2 free units does not matter: the stored counts decide.
    expect(await take(1)).to.equal(undefined)
    const results = await Promise.all(Array.from({length: 20}, () => acct.store('POST', '/checkouts', {body: {product_id: item.product.id}})))
    expect(results.map((r) => r.body.error?.code)).to.deep.equal(Array(20).fill('out_of_stock'))
    expect(await readVariant(acct, item.product.id, item.variant.id)).to.include({stock_qty: 2, stock_reserved: 2, stock_available: 0})
  })

  it('one payment per session: 20 simultaneous completions of one session record exactly one payment', async () => {
    const acct = await gw.account()
    const item = await sellable(acct, {stock: 1, unit_amount: 3000})
    const co = await checkout(acct, {product_id: item.product.id})
    const results = await Promise.all(Array.from({length: 20}, () => pay(gw, co.session_id)))
    const paid = results.filter((r) => r.status === 200)
    expect(paid).to.have.length(1)
    // The others take turns behind it and find it completed, on every engine (not the index's 409 concurrent_write).
    for (const r of results.filter((x) => x.status !== 200)) expectError(r, 422, 'session_already_completed')
    const payments = await acct.app('GET', '/payments?limit=100')
    expect(payments.body.data.filter((p: any) => p.session_id === co.session_id)).to.have.length(1)
    expect(await readVariant(acct, item.product.id, item.variant.id)).to.include({stock_qty: 0, stock_reserved: 0})

    // The unique index itself refuses a second payment of the session that is not a failure.
    const scope = {merchant: acct.merchant.id, env: 'test' as const}
    const platform = gw.gw.platform
    const stored = (await platform.storage.reads.get('payment', scope, paid[0]!.body.payment.id))!
    const twin = {...stored, id: 'py_twin_of_the_first'}
    const refused = await platform.write((tx) => tx.insert('payment', scope, twin, {created: twin.created})).catch((error: Error) => error)
    expect(refused).to.be.instanceOf(Error).with.property('name', 'UniqueViolation')
    // A failed attempt of the same session is stored: declines are kept, one row each.
    await platform.write((tx) => tx.insert('payment', scope, {...twin, status: 'failed'}, {created: twin.created}))
  })

  it('idempotency: 30 simultaneous requests with one key create one product; a live claim is never taken over', async () => {
    const acct = await gw.account()
    const results = await Promise.all(
      Array.from({length: 30}, () => acct.app('POST', '/products', {body: {name: 'Once only'}, idempotencyKey: 'race-1'})),
    )
    expect(new Set(results.map((r) => r.body.id)).size).to.equal(1)
    expect(results.map((r) => r.status)).to.deep.equal(Array(30).fill(201))
    const listed = await acct.app('GET', '/products?limit=100')
    expect(listed.body.data.filter((p: any) => p.name === 'Once only')).to.have.length(1)

    const platform = gw.gw.platform
    const now = platform.now()
    const claim = () => platform.write((tx) => tx.idempotency.claim('cred_x', 'key-1', 'fp', now, now - 86_400))
    expect(await claim()).to.equal(true)
    expect(await claim()).to.equal(false)
  })

  it('revisions: of 20 simultaneous updates at one revision exactly one wins; a stale compare-and-set writes nothing', async () => {
    const acct = await gw.account()
    const created = await acct.v1('POST', '/checkout/sessions', {body: {amount: 1000, currency: 'eur', customer_name: 'Ada Buyer', customer_email: 'ada@example.com'}})
    expect(created.status, created.text).to.equal(201)
    const id = created.body.id
    const results = await Promise.all(
      Array.from({length: 20}, (_, i) => acct.v1('PATCH', `/checkout/sessions/${id}`, {body: {revision: created.body.revision, description: `update ${i}`}})),
    )
    expect(results.filter((r) => r.status === 200)).to.have.length(1)
    expect(results.filter((r) => r.status === 409).every((r) => r.body.error.code === 'revision_conflict')).to.equal(true)

    const scope = {merchant: acct.merchant.id, env: 'test' as const}
    const platform = gw.gw.platform
    const stored = (await platform.storage.reads.get('checkout_session', scope, id))!
    const stale = {...stored, description: 'stale'}
    expect(await platform.write((tx) => tx.replaceIf(stale, [{field: 'revision', eq: (stored.revision ?? 0) - 1}]))).to.equal(false)
    expect((await platform.storage.reads.get('checkout_session', scope, id))!.description).to.not.equal('stale')
  })

  it('catalogue uniqueness: the unique indexes themselves refuse a second SKU, option group name or option value, whatever the domain read', async () => {
    const acct = await gw.account()
    const item = await optionedVariant(acct, {sku: 'UNIQ-1'})
    const scope = {merchant: acct.merchant.id, env: 'test' as const}
    const platform = gw.gw.platform
    const reads = platform.storage.reads
    /** What the index named refused: a UniqueViolation naming it. */
    const refusedBy = async (index: string, write: Promise<unknown>) => {
      const error = await write.catch((e: Error) => e)
      expect(error).to.have.property('name', 'UniqueViolation')
      expect((error as Error).message).to.include(index)
    }
    const variant = (await reads.get('variant', scope, item.variant.id))!
    const [group] = await reads.all('option_group', scope, item.product.id)
    const [value] = await reads.all('option_value', scope, group!.id)
    // A second variant with the SKU (another combination: none of the product's), and an update giving one the SKU.
    const twin = {...variant, id: 'var_twin_sku', options: [{group: 'og_none', value: 'ov_none'}]}
    await refusedBy('variants_unique_sku', platform.write((tx) => tx.insert('variant', scope, twin, {parent: item.product.id, created: twin.created})))
    const other = (await reads.all('variant', scope, item.product.id)).find((v) => v.is_default)!
    await refusedBy('variants_unique_sku', platform.write((tx) => tx.save({...other, sku: 'UNIQ-1'})))
    // A group named as another in any case, and a value of a group written as another in any case.
    const group2 = {...group!, id: 'og_twin', name: group!.name.toUpperCase()}
    await refusedBy('option_groups_unique_name', platform.write((tx) => tx.insert('option_group', scope, group2, {parent: item.product.id, created: 0})))
    const value2 = {...value!, id: 'ov_twin', value: value!.value.toLowerCase()}
    await refusedBy('option_values_unique_value', platform.write((tx) => tx.insert('option_value', scope, value2, {parent: group!.id, created: 0})))
    // Another merchant's catalogue may use the same SKU and names.
    const elsewhere = {merchant: (await gw.account()).merchant.id, env: 'test' as const}
    await platform.write((tx) => tx.insert('variant', elsewhere, {...twin, id: 'var_elsewhere'}, {parent: 'prod_elsewhere', created: twin.created}))
  })

  it('variant combination: of 20 simultaneous creations of one combination one is stored; the unique key itself refuses a second', async () => {
    const acct = await gw.account()
    const product = (await acct.store('POST', '/products', {body: {name: 'Raced tee'}})).body
    const size = (await acct.store('POST', `/products/${product.id}/options`, {body: {name: 'Size', values: ['S', 'M']}})).body
    const options = [{group: size.id, value: size.values[0].id}]
    const results = await Promise.all(Array.from({length: 20}, () => acct.store('POST', `/products/${product.id}/variants`, {body: {options}})))
    expect(results.filter((r) => r.status === 201)).to.have.length(1)
    for (const r of results.filter((x) => x.status !== 201)) expect([r.status, r.body.error?.code]).to.deep.equal([409, 'variant_exists'])
    const listed = (await acct.app('GET', `/products/${product.id}/variants?limit=100`)).body.data
    expect(listed.filter((v: any) => v.options[0]?.value === size.values[0].id)).to.have.length(1)

    // The unique index on the combination's key refuses a twin that no check read first.
    const scope = {merchant: acct.merchant.id, env: 'test' as const}
    const platform = gw.gw.platform
    const stored = (await platform.storage.reads.get('variant', scope, results.find((r) => r.status === 201)!.body.id))!
    const twin = {...stored, id: 'var_twin_of_the_first'}
    const insertTwin = (key: string) => platform.write((tx) => tx.insert('variant', scope, twin, {parent: product.id, created: twin.created, key}))
    const refused = await insertTwin(combinationKey(stored.options)).catch((error: Error) => error)
    expect(refused).to.be.instanceOf(Error).with.property('name', 'UniqueViolation')
    // Another combination of the product is stored.
    await insertTwin(combinationKey([{value: size.values[1].id}]))
  })
})
