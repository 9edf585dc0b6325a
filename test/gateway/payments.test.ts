import {expect} from 'chai'

import {recordPayment as insertPayment} from '../../src/gateway/domain/payments.js'
import {dispute as disputeSchema, livePayment, sandboxPayment, sandboxRefund} from '@payapp/sdk/schemas/commerce'
import {advanceClock, checkout, eventTypes, pay, readVariant, sale, sellable, SALE_EVENTS, type Account} from '../helpers/commerce.js'
import {expectError, TestGateway} from '../helpers/gateway.js'

describe('gateway payments, refunds and disputes', () => {
  let gw: TestGateway
  before(async () => {
    gw = await TestGateway.start()
  })
  after(() => gw.close())

  const refund = (id: string, body: Record<string, unknown> = {}) => gw.admin('POST', `/payments/${id}/refund`, body)
  const dispute = (id: string, body: Record<string, unknown> = {}) => gw.admin('POST', `/payments/${id}/dispute`, body)

  describe('GET /payments', () => {
    it('serves sandbox payment rows (py_) with the plan fee of 1.4% + 0.25 EUR', async () => {
      const acct = await gw.account()
      const {payment} = await sale(gw, acct, await sellable(acct, {unit_amount: 5000}))
      const one = await acct.app('GET', `/payments/${payment.id}`)
      expect(one.status, one.text).to.equal(200)
      const parsed = sandboxPayment.parse(one.body)
      expect(parsed.id).to.match(/^py_/)
      expect(parsed).to.include({status: 'succeeded', amount: 5000, amount_refunded: 0, currency: 'eur', payment_method: 'card', livemode: false})
      expect(parsed.fee).to.deep.equal({service_fee_eur: 95, service_fee_charge_currency: 95, psp_fee_eur: 0, currency: 'eur'})
      expect(parsed.card).to.include({last4: '4242'})
      const list = await acct.app('GET', '/payments')
      expect(list.body.data).to.deep.equal([one.body])
    })

    it('converts the EUR fee into the charge currency', async () => {
      const acct = await gw.account()
      const {payment} = await sale(gw, acct, await sellable(acct, {unit_amount: 10_000, currency: 'usd'}))
      // 100 USD at the gateway's fixed 0.92 EUR/USD: 1.4% of 92 EUR + 0.25 EUR = 1.54 EUR = 1.67 USD.
      expect(payment.fee).to.deep.equal({service_fee_eur: 154, service_fee_charge_currency: 167, psp_fee_eur: 0, currency: 'usd'})
    })

    it('serves live payments as charges (ch_), filters them by status, and keeps each id to its environment', async () => {
      const live = await gw.account('live')
      const item = await sellable(live, {unit_amount: 3000})
      const {payment, session} = await sale(gw, live, item)
      const failed = await checkout(live, {product_id: item.product.id})
      await pay(gw, failed.session_id, {outcome: 'declined'})

      const one = await live.app('GET', `/payments/${payment.id}`)
      expect(one.status, one.text).to.equal(200)
      const parsed = livePayment.parse(one.body)
      expect(parsed.id).to.match(/^ch_/)
      expect(parsed).to.include({id: parsed.charge, livemode: true, status: 'succeeded', amount: 3000, checkout_session: session.id, source: 'store', payment_method_type: 'card'})
      expect(parsed.payment_intent).to.match(/^pi_/)
      expect(parsed.application_fee_amount).to.equal(67)
      expect(parsed.succeeded_at).to.be.a('number')
      expect(parsed).to.include({customer_name: 'Ada Buyer', customer_email: 'ada@example.com'})

      const all = await live.app('GET', '/payments')
      expect(all.body.data.map((p: any) => p.status)).to.deep.equal(['failed', 'succeeded'])
      const succeeded = await live.app('GET', '/payments?status=succeeded')
      expect(succeeded.body.data.map((p: any) => p.id)).to.deep.equal([payment.id])
      expect(expectError(await live.app('GET', '/payments?status=bogus'), 400, 'parameter_invalid_enum').param).to.equal('status')

      const sandbox = await gw.installation(live.merchant.id, 'test')
      expectError(await gw.request('GET', `/v1/app/payments/${payment.id}`, {token: sandbox.token}), 404, 'resource_missing')
      expect((await gw.request('GET', '/v1/app/payments', {token: sandbox.token})).body.data).to.deep.equal([])
    })

    it('filters live payments by the status the list shows: a processing payment is pending', async () => {
      const live = await gw.account('live')
      const processing = await gw.gw.platform.write((tx) => insertPayment(tx, {merchant: live.merchant.id, env: 'live'}, {amount: 3000, currency: 'eur', created: gw.gw.platform.now(), status: 'processing'}))
      const pending = await live.app('GET', '/payments?status=pending')
      expect(pending.body.data.map((p: any) => [p.id, p.status])).to.deep.equal([[processing.id, 'pending']])
    })

    it('ignores the status filter in the sandbox', async () => {
      const acct = await gw.account()
      const item = await sellable(acct)
      await sale(gw, acct, item)
      const co = await checkout(acct, {product_id: item.product.id})
      await pay(gw, co.session_id, {outcome: 'declined'})
      const res = await acct.app('GET', '/payments?status=succeeded')
      expect(res.body.data.map((p: any) => p.status)).to.deep.equal(['failed', 'succeeded'])
      expect(res.body.data[0]).to.include({failure_code: 'card_declined'})
    })

    it('pages newest first with limit, offset and has_more', async () => {
      const acct = await gw.account()
      const item = await sellable(acct)
      const ids: string[] = []
      for (let i = 0; i < 3; i++) ids.push((await sale(gw, acct, item)).payment.id)
      const page = await acct.app('GET', '/payments?limit=2&offset=1')
      expect(page.body.data.map((p: any) => p.id)).to.deep.equal([ids[1], ids[0]])
      expect(page.body.has_more).to.equal(false)
      expect((await acct.app('GET', '/payments?limit=2')).body.has_more).to.equal(true)
    })
  })

  describe('refunds', () => {
    it('refunds partially, then the rest; the full refund restores stock and marks the order refunded', async () => {
      const acct = await gw.account()
      const item = await sellable(acct, {unit_amount: 2000, stock: 5})
      const {payment, order} = await sale(gw, acct, item, 2)
      expect(await readVariant(acct, item.product.id, item.variant.id)).to.include({stock_qty: 3})

      const part = await refund(payment.id, {amount: 1500, reason: 'requested_by_customer'})
      expect(part.status, part.text).to.equal(201)
      expect(part.body.refund).to.include({object: 'refund', payment: payment.id, amount: 1500, status: 'succeeded', reason: 'requested_by_customer'})
      expect(part.body.refund.id).to.match(/^re_/)
      expect(part.body.payment).to.include({status: 'partially_refunded', amount_refunded: 1500})
      expect(part.body.order.status).to.equal('paid')
      expect(await readVariant(acct, item.product.id, item.variant.id)).to.include({stock_qty: 3})

      const err = expectError(await refund(payment.id, {amount: 2501}), 400, 'amount_too_large')
      expect(err.param).to.equal('amount')
      const rest = await refund(payment.id)
      expect(rest.body.refund.amount).to.equal(2500)
      expect(rest.body.payment).to.include({status: 'refunded', amount_refunded: 4000})
      expect(rest.body.order.status).to.equal('refunded')
      expect((await acct.app('GET', `/orders/${order.id}`)).body.status).to.equal('refunded')
      expect(await readVariant(acct, item.product.id, item.variant.id)).to.include({stock_qty: 5, stock_reserved: 0})

      const again = expectError(await refund(payment.id, {amount: 1}), 422, 'already_refunded')
      expect(again.type).to.equal('already_refunded')
      expect(await readVariant(acct, item.product.id, item.variant.id)).to.include({stock_qty: 5})

      const rows = await acct.app('GET', '/refunds')
      expect(rows.body.data.map((r: any) => sandboxRefund.parse(r).amount)).to.deep.equal([2500, 1500])
      expect((await acct.app('GET', `/payments/${payment.id}`)).body).to.include({status: 'refunded', amount_refunded: 4000})
    })

    it('lists live refunds as the refunded charges with their running amount_refunded', async () => {
      const live = await gw.account('live')
      const item = await sellable(live, {unit_amount: 4000})
      const refunded = (await sale(gw, live, item)).payment
      await sale(gw, live, item)
      await refund(refunded.id, {amount: 1000})
      await refund(refunded.id, {amount: 500})
      const res = await live.app('GET', '/refunds')
      expect(res.status, res.text).to.equal(200)
      expect(res.body.data).to.have.length(1)
      expect(livePayment.parse(res.body.data[0])).to.include({id: refunded.id, amount_refunded: 1500, status: 'partially_refunded'})
    })

    it('refuses unknown and failed payments', async () => {
      expectError(await refund('py_nope'), 404, 'resource_missing')
      const acct = await gw.account()
      const co = await checkout(acct, {product_id: (await sellable(acct)).product.id})
      const declined = await pay(gw, co.session_id, {outcome: 'declined'})
      expectError(await refund(declined.body.payment.id), 422, 'payment_not_succeeded')
      expectError(await refund(declined.body.payment.id, {amount: 0}), 400)
    })
  })

  describe('disputes', () => {
    it('opens a dispute: the payment turns disputed, refunds are refused, the deadline shows as past_due once passed', async () => {
      const acct = await gw.account()
      const {payment} = await sale(gw, acct, await sellable(acct, {unit_amount: 2500}))
      const res = await dispute(payment.id, {reason: 'product_not_received', evidence_due_in_days: 3})
      expect(res.status, res.text).to.equal(201)
      const opened = disputeSchema.parse(res.body.dispute)
      expect(opened.id).to.match(/^dp_/)
      expect(opened).to.include({payment: payment.id, amount: 2500, reason: 'product_not_received', status: 'needs_response', past_due: false})
      expect(opened.evidence_due_by).to.equal(opened.created + 3 * 86400)
      expect(res.body.payment.status).to.equal('disputed')

      expectError(await refund(payment.id), 422, 'charge_disputed')
      expectError(await dispute(payment.id), 422, 'charge_disputed')
      expect((await acct.app('GET', `/payments/${payment.id}`)).body.status).to.equal('disputed')

      const before = await acct.app('GET', '/disputes')
      expect(before.body.data).to.have.length(1)
      expect(before.body.data[0]).to.include({id: opened.id, past_due: false})
      await advanceClock(gw, 3 * 86400 + 1)
      expect((await acct.app('GET', '/disputes')).body.data[0]).to.include({id: opened.id, past_due: true})
      expect(await eventTypes(gw, acct.merchant.id, 'test', ['charge.dispute', 'payment.disputed'])).to.deep.equal(['charge.dispute.created', 'payment.disputed'])
    })

    it('keeps disputes to their environment and lists them newest first', async () => {
      const acct = await gw.account()
      const item = await sellable(acct)
      const a = (await sale(gw, acct, item)).payment
      const b = (await sale(gw, acct, item)).payment
      await dispute(a.id)
      await dispute(b.id, {evidence_due_in_days: -1})
      const list = await acct.app('GET', '/disputes?limit=1')
      expect(list.body.has_more).to.equal(true)
      expect(list.body.data[0]).to.include({payment: b.id, past_due: true, reason: 'fraudulent'})
      const live = await gw.installation(acct.merchant.id, 'live')
      expect((await gw.request('GET', '/v1/app/disputes', {token: live.token})).body.data).to.deep.equal([])
    })
  })

  it('records refund and payment events for a refund', async () => {
    const acct: Account = await gw.account()
    const {payment} = await sale(gw, acct, await sellable(acct))
    await refund(payment.id)
    const types = await eventTypes(gw, acct.merchant.id, 'test', SALE_EVENTS)
    expect(types.slice(-4)).to.deep.equal(['refund.created', 'charge.refunded', 'payment.refunded', 'store.order.updated'])
  })
})
