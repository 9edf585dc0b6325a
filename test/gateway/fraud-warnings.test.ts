/**
 * Fraud warnings over real HTTP: the test helper, every list filter, the state table row by row with
 * the events a real local receiver got (merchant and app endpoints), and who may call what.
 */
import {expect} from 'chai'

import {sale, sellable} from '../helpers/commerce.js'
import {expectError, TestGateway, type Account} from '../helpers/gateway.js'
import {receiverPool} from '../helpers/receiver.js'

describe('gateway: fraud warnings', () => {
  let gw: TestGateway
  const receivers = receiverPool()
  before(async () => (gw = await TestGateway.start()))
  after(async () => {
    await receivers.closeAll()
    await gw.close()
  })

  const drain = () => gw.admin('POST', '/clock', {advance_seconds: 0})

  async function listen(acct: Account, extra: Record<string, unknown> = {}) {
    const rx = await receivers.open()
    const res = await gw.admin('POST', '/webhook_endpoints', {merchant: acct.merchant.id, env: 'test', url: rx.url, events: ['fraud_warning.*'], ...extra})
    expect(res.status, res.text).to.equal(201)
    return rx
  }

  const create = async (acct: Account, body: Record<string, unknown> = {}) => {
    const res = await acct.api('POST', '/v1/test_helpers/fraud_warnings', {body})
    expect(res.status, res.text).to.equal(201)
    return res.body
  }

  it('creates a synthetic warning with the spec defaults, a new one on every call, and fraud_warning.created', async () => {
    const acct = await gw.account('test')
    const rx = await listen(acct)
    const w = await create(acct)
    expect(w).to.include({object: 'fraud_warning', livemode: false, amount: 2500, currency: 'usd', fraud_type: 'unauthorized_use_of_card', status: 'open', actionable: true, resolved: null})
    expect(w.id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    expect(w.charge_id).to.match(/^ch_/)
    expect(w.payment_intent_id).to.match(/^pi_/)
    expect(w.updated).to.equal(w.created)
    const second = await create(acct, {amount: 1, currency: 'eur', fraud_type: 'made_with_stolen_card', charge_id: 'ch_label'})
    expect(second).to.include({amount: 1, currency: 'eur', fraud_type: 'made_with_stolen_card', charge_id: 'ch_label'})
    expect(second.id).not.to.equal(w.id)
    await drain()
    expect(rx.got.map((r) => [r.event.type, r.event.data.object.id])).to.deep.equal([
      ['fraud_warning.created', w.id],
      ['fraud_warning.created', second.id],
    ])

    expect((await create(acct, {amount: 100_000_000})).amount).to.equal(100_000_000)
    expectError(await acct.api('POST', '/v1/test_helpers/fraud_warnings', {body: {amount: 0}}), 400, 'number_too_small')
    expectError(await acct.api('POST', '/v1/test_helpers/fraud_warnings', {body: {amount: 100_000_001}}), 400, 'number_too_large')
    expectError(await acct.api('POST', '/v1/test_helpers/fraud_warnings', {body: {fraud_type: 'alien'}}), 400, 'parameter_invalid_enum')
    const live = await gw.account('live')
    expectError(await live.api('POST', '/v1/test_helpers/fraud_warnings', {body: {}}), 400, 'livemode_forbidden')
  })

  it('lists newest first with every filter and keyset pagination on (created, id)', async () => {
    const acct = await gw.account('test')
    const a = await create(acct)
    await gw.admin('POST', '/clock', {advance_seconds: 10})
    const b = await create(acct)
    const c = await create(acct)
    const item = await sellable(acct)
    const {payment} = await sale(gw, acct, item)
    const d = await create(acct, {charge_id: payment.id})
    await gw.admin('POST', `/payments/${payment.id}/refund`, {})
    const ids = async (query: string) => {
      const res = await acct.api('GET', `/v1/fraud_warnings${query}`)
      expect(res.status, res.text).to.equal(200)
      return res.body.data.map((w: any) => w.id)
    }
    const all = await ids('')
    // Newest first; within one second the id breaks the tie, descending.
    const made = [a, b, c, d]
    expect(all).to.deep.equal(made.sort((x, y) => y.created - x.created || (x.id < y.id ? 1 : -1)).map((w) => w.id))
    expect(all[3]).to.equal(a.id)

    const page = await acct.api('GET', '/v1/fraud_warnings?limit=2')
    expect(page.body.has_more).to.equal(true)
    expect([...page.body.data.map((w: any) => w.id), ...(await ids(`?starting_after=${page.body.data[1].id}`))]).to.deep.equal(all)
    expect(await ids('?offset=1&limit=2')).to.deep.equal(all.slice(1, 3))
    expect(await ids(`?status=refunded`)).to.deep.equal([d.id])
    expect(await ids(`?status=open&actionable=true`)).to.deep.equal(all.filter((id: string) => id !== d.id))
    expect(await ids(`?actionable=false`)).to.deep.equal([d.id])
    expect(await ids(`?created_lte=${a.created}`)).to.deep.equal([a.id])
    expect(await ids(`?created_gte=${b.created}&created_lte=${b.created}`)).to.deep.equal(all.filter((id: string) => made.find((w) => w.id === id)!.created === b.created))
    expect(await ids(`?created_gte=${Math.max(b.created, c.created, d.created) + 1}`)).to.deep.equal([])

    expectError(await acct.api('GET', '/v1/fraud_warnings?actionable=yes'), 400, 'parameter_invalid_enum')
    expectError(await acct.api('GET', '/v1/fraud_warnings?status=closed'), 400, 'parameter_invalid_enum')
    expectError(await acct.api('GET', '/v1/fraud_warnings?limit=101'), 400, 'number_too_large')
    expectError(await acct.api('GET', '/v1/fraud_warnings?starting_after=00000000-0000-4000-8000-000000000000'), 400, 'resource_missing')
    const other = await gw.account('test')
    const foreign = await create(other)
    expectError(await acct.api('GET', `/v1/fraud_warnings?starting_after=${foreign.id}`), 400, 'resource_missing')
    expectError(await acct.api('GET', `/v1/fraud_warnings/${foreign.id}`), 404, 'resource_missing')
    expect((await acct.api('GET', `/v1/fraud_warnings/${a.id}`)).body).to.deep.equal(a)
  })

  it('is read-only (405) and takes merchant secret keys only', async () => {
    const acct = await gw.account('test')
    const w = await create(acct)
    expectError(await acct.api('POST', '/v1/fraud_warnings', {body: {}}), 405, 'method_not_allowed')
    expectError(await acct.api('DELETE', `/v1/fraud_warnings/${w.id}`), 405, 'method_not_allowed')
    expectError(await acct.api('PATCH', `/v1/fraud_warnings/${w.id}`, {body: {}}), 405, 'method_not_allowed')
    expectError(await gw.request('GET', '/v1/fraud_warnings', {token: acct.token}), 401, 'wrong_credential_type')
    const narrow = await gw.secretKey(acct.merchant.id, 'test', ['payments:read'])
    expectError(await gw.request('GET', '/v1/fraud_warnings', {token: narrow.secret_key}), 403, 'insufficient_scope')
    const live = await gw.account('live')
    expectError(await live.api('GET', `/v1/fraud_warnings/${w.id}`), 404, 'resource_missing')
  })

  it('walks the state table: partial refund changes nothing, full refund → refunded, dispute → disputed (over refunded); updated only on change', async () => {
    const acct = await gw.account('test')
    const rx = await listen(acct)
    const item = await sellable(acct, {unit_amount: 4000})

    // open → (partial refund) open → (rest refunded) refunded → (dispute) disputed
    const first = await sale(gw, acct, item)
    const w1 = await create(acct, {charge_id: first.payment.id})
    // Linked to the real payment: its charge, amount and currency.
    expect(w1).to.include({amount: 4000, currency: 'eur', status: 'open'})
    expect(w1.charge_id).to.match(/^ch_/)
    await gw.admin('POST', `/payments/${first.payment.id}/refund`, {amount: 1000})
    await drain()
    expect(rx.got.map((r) => r.event.type)).to.deep.equal(['fraud_warning.created'])
    expect((await acct.api('GET', `/v1/fraud_warnings/${w1.id}`)).body).to.include({status: 'open', actionable: true})
    await gw.admin('POST', `/payments/${first.payment.id}/refund`, {})
    await drain()
    const refunded = rx.got[1].event
    expect(refunded.type).to.equal('fraud_warning.updated')
    expect(refunded.data.object).to.include({id: w1.id, status: 'refunded', actionable: false})
    expect(refunded.data.object.resolved).to.be.a('number')
    await gw.admin('POST', `/payments/${first.payment.id}/dispute`, {})
    await drain()
    expect(rx.got[2].event.type).to.equal('fraud_warning.updated')
    expect(rx.got[2].event.data.object).to.include({id: w1.id, status: 'disputed', actionable: false})

    // open → (dispute) disputed; a later refund is refused and changes nothing
    const second = await sale(gw, acct, item)
    const w2 = await create(acct, {charge_id: second.payment.id})
    await gw.admin('POST', `/payments/${second.payment.id}/dispute`, {})
    expect((await gw.admin('POST', `/payments/${second.payment.id}/refund`, {})).status).to.equal(422)
    await drain()
    expect(rx.got.slice(3).map((r) => [r.event.type, r.event.data.object.id, r.event.data.object.status])).to.deep.equal([
      ['fraud_warning.created', w2.id, 'open'],
      ['fraud_warning.updated', w2.id, 'disputed'],
    ])

    // A warning on an already refunded charge is created refunded, and a dispute still moves it.
    const third = await sale(gw, acct, item)
    await gw.admin('POST', `/payments/${third.payment.id}/refund`, {})
    const w3 = await create(acct, {charge_id: third.payment.id})
    expect(w3).to.include({status: 'refunded', actionable: false})
    await drain()
    expect(rx.got.slice(5).map((r) => r.event.type)).to.deep.equal(['fraud_warning.created'])
  })

  it('delivers fraud_warning.* to an installed app only with fraud_warnings:read and a subscription to the type', async () => {
    const acct = await gw.account('test')
    const withScope = await gw.installation(acct.merchant.id, 'test', ['fraud_warnings:read'])
    const without = await gw.installation(acct.merchant.id, 'test', ['payments:read'])
    const subscribed = await listen(acct, {installation: withScope.id})
    const unscoped = await listen(acct, {installation: without.id})
    const otherTypes = await listen(acct, {installation: withScope.id, events: ['payment.*']})
    const w = await create(acct)
    await drain()
    expect(subscribed.got.map((r) => [r.event.type, r.event.data.object.id])).to.deep.equal([['fraud_warning.created', w.id]])
    expect(unscoped.got).to.have.length(0)
    expect(otherTypes.got).to.have.length(0)

    // A revoked installation hears nothing more.
    await gw.admin('DELETE', `/installations/${withScope.id}`)
    await create(acct)
    await drain()
    expect(subscribed.got).to.have.length(1)
    expectError(await gw.admin('POST', '/webhook_endpoints', {merchant: acct.merchant.id, env: 'live', url: subscribed.url, installation: without.id}), 404, 'resource_missing')
  })
})
