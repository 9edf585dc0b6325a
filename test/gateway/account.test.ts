import {expect} from 'chai'

import {recordPayment as insertPayment, type PaymentFields as SamplePayment} from '../../src/gateway/domain/payments.js'
import {expectError, TestGateway} from '../helpers/gateway.js'

const DAY = 86_400

describe('gateway account reads: merchant, payouts, balance, invoices, subscriptions, analytics', () => {
  let gw: TestGateway
  before(async () => {
    gw = await TestGateway.start()
  })
  after(() => gw.close())

  const now = () => gw.gw.platform.now()
  /** A payment fixture stored directly, as a completed sale would have stored it. */
  const pay = (merchant: string, env: 'live' | 'test', fields: Omit<SamplePayment, 'currency'> & {currency?: string}) =>
    gw.gw.platform.write((tx) => insertPayment(tx, {merchant, env}, {currency: 'eur', ...fields}))
  const fee = (service_fee_charge_currency: number) => ({service_fee_eur: service_fee_charge_currency, service_fee_charge_currency, psp_fee_eur: 0, currency: 'eur'})
  const events = async (merchant: string, env: string, type: string) =>
    (await gw.request('GET', `/_admin/events?merchant=${merchant}&env=${env}&type=${type}`, {token: gw.gw.adminKey})).body.data as Array<{
      type: string
      livemode: boolean
      data: {object: Record<string, unknown>}
    }>

  describe('GET /merchant', () => {
    it('answers the installation’s merchant profile, livemode by the token', async () => {
      const m = await gw.merchant({company: 'Acme SARL', country: 'fr', vat_number: 'FR40303265045'})
      for (const env of ['live', 'test'] as const) {
        const inst = await gw.installation(m.id, env, ['merchant:read'])
        const res = await gw.request('GET', '/v1/app/merchant', {token: inst.token})
        expect(res.status).to.equal(200)
        expect(res.body).to.deep.include({id: m.id, object: 'merchant', company: 'Acme SARL', country: 'FR', vat_number: 'FR40303265045', status: 'active', livemode: env === 'live'})
        expect(res.body).to.not.have.property('store')
      }
    })

    it('needs merchant:read', async () => {
      const m = await gw.merchant()
      const inst = await gw.installation(m.id, 'test', ['payouts:read'])
      expectError(await gw.request('GET', '/v1/app/merchant', {token: inst.token}), 403, 'insufficient_scope')
    })
  })

  describe('GET /payouts', () => {
    it('lists the environment’s payouts newest first, with limit, offset and has_more', async () => {
      const acct = await gw.account('live')
      const ids: string[] = []
      for (const amount of [1000, 2000, 3000]) {
        const res = await gw.admin('POST', '/payouts', {merchant: acct.merchant.id, env: 'live', amount, currency: 'eur', status: 'in_transit'})
        expect(res.status).to.equal(201)
        expect(res.body).to.include({object: 'payout', livemode: true, amount, status: 'in_transit'})
        expect(res.body.arrival_date).to.be.greaterThan(res.body.created)
        ids.push(res.body.id)
      }
      await gw.admin('POST', '/payouts', {merchant: acct.merchant.id, env: 'test', amount: 999, currency: 'eur'})

      const first = await acct.app('GET', '/payouts?limit=2')
      expect(first.body.data.map((p: {id: string}) => p.id)).to.deep.equal([ids[2], ids[1]])
      expect(first.body.has_more).to.equal(true)
      const rest = await acct.app('GET', '/payouts?limit=2&offset=2')
      expect(rest.body.data.map((p: {id: string}) => p.id)).to.deep.equal([ids[0]])
      expect(rest.body.has_more).to.equal(false)
    })

    it('is read-only: other methods are 405', async () => {
      const acct = await gw.account()
      expectError(await acct.app('POST', '/payouts', {body: {amount: 100}}), 405, 'method_not_allowed')
      expectError(await acct.app('POST', '/balance', {body: {}}), 405, 'method_not_allowed')
    })
  })

  describe('GET /balance', () => {
    it('is payments net of refunds and fees, minus payouts, per currency; the last 2 days are pending', async () => {
      const acct = await gw.account('live')
      const m = acct.merchant.id
      await pay(m, 'live', {amount: 10000, fee: fee(300), created: now() - 5 * DAY})
      await pay(m, 'live', {amount: 5000, amount_refunded: 2000, status: 'partially_refunded', fee: fee(100), created: now() - 4 * DAY})
      await pay(m, 'live', {amount: 3000, amount_refunded: 3000, status: 'refunded', fee: fee(50), created: now() - 3 * DAY})
      await pay(m, 'live', {amount: 4000, status: 'disputed', fee: fee(80), created: now() - 3 * DAY})
      await pay(m, 'live', {amount: 9999, status: 'failed', fee: fee(0), created: now() - 3 * DAY})
      await pay(m, 'live', {amount: 2000, fee: fee(40), created: now() - DAY})
      await pay(m, 'live', {amount: 1500, currency: 'usd', fee: {...fee(30), currency: 'usd'}, created: now() - 10 * DAY})
      await pay(m, 'test', {amount: 777_777, fee: fee(0), created: now() - 10 * DAY})
      for (const [amount, status] of [[1000, 'paid'], [500, 'in_transit'], [700, 'failed']] as const) {
        await gw.admin('POST', '/payouts', {merchant: m, env: 'live', amount, currency: 'eur', status})
      }

      const res = await acct.app('GET', '/balance')
      expect(res.status).to.equal(200)
      // eur: 9700 + 2900 − 50 (refunded: fee only) − 80 (disputed: withheld, fee stays) − 1000 − 500 paid out.
      expect(res.body).to.deep.equal({
        object: 'balance',
        livemode: true,
        available: [
          {amount: 10970, currency: 'eur'},
          {amount: 1470, currency: 'usd'},
        ],
        pending: [
          {amount: 1960, currency: 'eur'},
          {amount: 0, currency: 'usd'},
        ],
      })

      await gw.admin('POST', '/clock', {advance_seconds: 2 * DAY})
      const settled = await acct.app('GET', '/balance')
      expect(settled.body.available[0]).to.deep.equal({amount: 12930, currency: 'eur'})
      expect(settled.body.pending[0]).to.deep.equal({amount: 0, currency: 'eur'})
    })

    it('keeps the sandbox balance apart from live, and is empty without money', async () => {
      const acct = await gw.account('test')
      expect((await acct.app('GET', '/balance')).body).to.deep.equal({object: 'balance', livemode: false, available: [], pending: []})
      await pay(acct.merchant.id, 'test', {amount: 2500, fee: fee(60), created: now() - 3 * DAY})
      await pay(acct.merchant.id, 'live', {amount: 100_000, fee: fee(60), created: now() - 3 * DAY})
      expect((await acct.app('GET', '/balance')).body.available).to.deep.equal([{amount: 2440, currency: 'eur'}])
    })
  })

  describe('GET /invoices', () => {
    it('lists and retrieves live invoices; the sandbox lists none and finds none', async () => {
      const m = await gw.merchant()
      const live = await gw.installation(m.id, 'live', ['invoices:read'])
      const test = await gw.installation(m.id, 'test', ['invoices:read'])
      const created = await gw.admin('POST', '/invoices', {merchant: m.id, env: 'live', amount: 4200, currency: 'eur'})
      expect(created.status).to.equal(201)
      expect(created.body).to.include({object: 'invoice', livemode: true, status: 'paid', amount_due: 4200, amount_paid: 4200, currency: 'eur'})
      expect(created.body.id).to.match(/^in_/)

      const list = await gw.request('GET', '/v1/app/invoices', {token: live.token})
      expect(list.body.data.map((i: {id: string}) => i.id)).to.deep.equal([created.body.id])
      expect((await gw.request('GET', `/v1/app/invoices/${created.body.id}`, {token: live.token})).body).to.deep.equal(created.body)

      const sandbox = await gw.request('GET', '/v1/app/invoices', {token: test.token})
      expect(sandbox.status).to.equal(200)
      expect(sandbox.body).to.deep.equal({object: 'list', has_more: false, data: []})
      expectError(await gw.request('GET', `/v1/app/invoices/${created.body.id}`, {token: test.token}), 404, 'resource_missing')
    })

    it('issues invoices in live only and only for the merchant’s own subscription', async () => {
      const m = await gw.merchant()
      const other = await gw.merchant()
      expectError(await gw.admin('POST', '/invoices', {merchant: m.id, env: 'test', amount: 4200}), 400, 'livemode_required')
      const sub = await gw.admin('POST', '/subscriptions', {merchant: other.id, env: 'live'})
      expectError(await gw.admin('POST', '/invoices', {merchant: m.id, env: 'live', subscription: sub.body.id}), 404, 'subscription_not_found')
      const unpaid = await gw.admin('POST', '/invoices', {merchant: other.id, env: 'live', subscription: sub.body.id, status: 'open'})
      expect(unpaid.body).to.include({subscription: sub.body.id, customer: sub.body.customer, amount_due: sub.body.amount, amount_paid: 0, status: 'open'})
    })
  })

  describe('GET /subscriptions', () => {
    it('lists subscriptions newest first with status and period end', async () => {
      const acct = await gw.account('test')
      const first = await gw.admin('POST', '/subscriptions', {merchant: acct.merchant.id, env: 'test', amount: 990, currency: 'eur', interval: 'week'})
      const second = await gw.admin('POST', '/subscriptions', {merchant: acct.merchant.id, env: 'test', status: 'trialing', trial_days: 7})
      const res = await acct.app('GET', '/subscriptions')
      expect(res.body.data.map((s: {id: string}) => s.id)).to.deep.equal([second.body.id, first.body.id])
      const [trialing, active] = res.body.data
      expect(active).to.include({object: 'subscription', livemode: false, status: 'active', amount: 990, currency: 'eur', intent_type: 'payment'})
      // Sandbox subscriptions are billed too; the App API only lists no sandbox invoices.
      expect(active.latest_invoice).to.match(/^in_/)
      expect(active.current_period_end - active.current_period_start).to.equal(7 * DAY)
      expect(active.customer).to.match(/^cus_/)
      expect(trialing).to.include({status: 'trialing', intent_type: 'setup', trial_end: trialing.created + 7 * DAY, current_period_end: trialing.created + 7 * DAY})
      expect((await acct.app('GET', '/subscriptions?limit=1')).body.has_more).to.equal(true)
    })

    it('gives an active live subscription a paid first invoice and fires the lifecycle events', async () => {
      const acct = await gw.account('live')
      const m = acct.merchant.id
      const sub = (await gw.admin('POST', '/subscriptions', {merchant: m, env: 'live', amount: 2500, quantity: 2, currency: 'eur'})).body
      expect(sub).to.include({status: 'active', amount: 5000, quantity: 2})
      expect(sub.latest_invoice).to.match(/^in_/)
      const invoice = (await acct.app('GET', `/invoices/${sub.latest_invoice}`)).body
      expect(invoice).to.include({subscription: sub.id, customer: sub.customer, status: 'paid', amount_paid: 5000})

      const created = await events(m, 'live', 'subscription.created')
      expect(created.map((e) => [e.data.object.id, e.data.object.status])).to.deep.equal([[sub.id, 'incomplete']])
      expect((await events(m, 'live', 'subscription.updated')).map((e) => e.data.object)).to.deep.equal([sub])
      expect((await events(m, 'live', 'invoice.paid')).map((e) => e.data.object.id)).to.deep.equal([sub.latest_invoice])
    })

    it('cancels now with subscription.deleted, and a second cancel is 409 subscription_already_canceled', async () => {
      const acct = await gw.account('test')
      const sub = (await gw.admin('POST', '/subscriptions', {merchant: acct.merchant.id, env: 'test'})).body
      const canceled = await gw.admin('POST', `/subscriptions/${sub.id}/cancel`, {at_period_end: false})
      expect(canceled.status).to.equal(200)
      expect(canceled.body).to.include({id: sub.id, status: 'canceled'})
      expect((await acct.app('GET', '/subscriptions')).body.data[0].status).to.equal('canceled')
      expect((await events(acct.merchant.id, 'test', 'subscription.deleted')).map((e) => e.data.object.id)).to.deep.equal([sub.id])
      const again = expectError(await gw.admin('POST', `/subscriptions/${sub.id}/cancel`, {at_period_end: false}), 409, 'subscription_already_canceled')
      expect(again.type).to.equal('resource_conflict')
      expectError(await gw.admin('POST', '/subscriptions/sub_missing/cancel', {}), 404, 'subscription_not_found')
    })

    it('cancels at period end: active until current_period_end, then canceled', async () => {
      const acct = await gw.account('test')
      const sub = (await gw.admin('POST', '/subscriptions', {merchant: acct.merchant.id, env: 'test', interval: 'day'})).body
      const scheduled = await gw.admin('POST', `/subscriptions/${sub.id}/cancel`, {})
      expect(scheduled.body).to.include({status: 'active', cancel_at_period_end: true})
      expect((await acct.app('GET', '/subscriptions')).body.data[0].status).to.equal('active')
      expect(await events(acct.merchant.id, 'test', 'subscription.deleted')).to.have.length(0)

      await gw.admin('POST', '/clock', {advance_seconds: sub.current_period_end - now()})
      expect((await acct.app('GET', '/subscriptions')).body.data[0].status).to.equal('canceled')
      expect((await events(acct.merchant.id, 'test', 'subscription.deleted')).map((e) => e.data.object.id)).to.deep.equal([sub.id])
      expectError(await gw.admin('POST', `/subscriptions/${sub.id}/cancel`, {}), 409, 'subscription_already_canceled')
    })

    it('expires a subscription whose first payment stays unconfirmed for 23 hours', async () => {
      const acct = await gw.account('test')
      await gw.admin('POST', '/subscriptions', {merchant: acct.merchant.id, env: 'test', status: 'incomplete'})
      await gw.admin('POST', '/clock', {advance_seconds: 23 * 3600 - 5})
      expect((await acct.app('GET', '/subscriptions')).body.data[0].status).to.equal('incomplete')
      await gw.admin('POST', '/clock', {advance_seconds: 5})
      expect((await acct.app('GET', '/subscriptions')).body.data[0].status).to.equal('incomplete_expired')
    })

    it('rejects a trial on a subscription that is not trialing', async () => {
      const m = await gw.merchant()
      expectError(await gw.admin('POST', '/subscriptions', {merchant: m.id, env: 'test', trial_days: 7}), 400, 'parameter_invalid')
    })
  })

  describe('GET /analytics/summary', () => {
    it('sums the window’s payments per currency, leaving out what is just outside it', async () => {
      // The window ends at the second of the request, and the clock runs with real time: the payments are placed
      // against the second read before them, so a scene whose request fell into a later second (a slow machine) is
      // placed again, for a new merchant.
      const scene = async () => {
        const acct = await gw.account('live')
        const m = acct.merchant.id
        const t = now()
        await pay(m, 'live', {amount: 10000, created: t - 7 * DAY}) // the window's first second
        await pay(m, 'live', {amount: 6000, amount_refunded: 1000, status: 'partially_refunded', created: t - 3 * DAY})
        await pay(m, 'live', {amount: 2000, amount_refunded: 2000, status: 'refunded', created: t - 2 * DAY})
        await pay(m, 'live', {amount: 4000, status: 'disputed', created: t - DAY})
        await pay(m, 'live', {amount: 5000, status: 'failed', created: t - DAY})
        await pay(m, 'live', {amount: 3000, currency: 'usd', created: t - DAY})
        await pay(m, 'live', {amount: 50000, created: t - 7 * DAY - 1}) // one second too old
        await pay(m, 'test', {amount: 70000, created: t - DAY})
        return {acct, t, res: await acct.app('GET', '/analytics/summary?days=7')}
      }
      let {acct, t, res} = await scene()
      for (let again = 0; again < 5 && res.body.until !== t; again++) ({acct, t, res} = await scene())
      expect(res.status).to.equal(200)
      expect(res.body.until, 'a scene placed within one second').to.equal(t)
      expect(res.body).to.include({object: 'analytics_summary', livemode: true, days: 7})
      expect(res.body.until - res.body.since).to.equal(7 * DAY)
      expect(res.body.currencies).to.deep.equal([
        {currency: 'eur', gross_volume: 22000, refunded_volume: 3000, net_volume: 15000, payment_count: 4, refund_count: 2, average_payment: 5500},
        {currency: 'usd', gross_volume: 3000, refunded_volume: 0, net_volume: 3000, payment_count: 1, refund_count: 0, average_payment: 3000},
      ])

      const month = await acct.app('GET', '/analytics/summary')
      expect(month.body.days).to.equal(30)
      expect(month.body.currencies[0]).to.include({gross_volume: 72000, payment_count: 5})
    })

    it('takes days from 1 to 365 only', async () => {
      const acct = await gw.account('test')
      for (const days of ['0', '366', 'abc', '1.5']) {
        const err = expectError(await acct.app('GET', `/analytics/summary?days=${days}`), 400)
        expect(err.param).to.equal('days')
      }
      expect((await acct.app('GET', '/analytics/summary?days=365')).body).to.include({days: 365, livemode: false})
      expect((await acct.app('GET', '/analytics/summary?days=1')).body.currencies).to.deep.equal([])
    })
  })

  describe('--seed', () => {
    it('gives both environments payments, a refund, a dispute, payouts, a balance and a subscription; live also an invoice', async () => {
      const seeded = await TestGateway.start({seed: true})
      try {
        for (const env of ['test', 'live'] as const) {
          const get = async (path: string) => {
            const res = await seeded.request('GET', `/v1/app${path}`, {token: seeded.gw.seed!.installations[env].token})
            expect(res.status, `${env} ${path}: ${res.text}`).to.equal(200)
            return res.body
          }
          expect((await get('/payments')).data.map((p: {status: string}) => p.status)).to.include.members(['succeeded', 'partially_refunded', 'disputed'])
          expect((await get('/refunds')).data).to.have.length(1)
          expect((await get('/disputes')).data).to.have.length(1)
          expect((await get('/payouts')).data).to.have.length(2)
          expect((await get('/subscriptions')).data[0]).to.include({status: 'active'})
          expect((await get('/invoices')).data).to.have.length(env === 'live' ? 1 : 0)
          const balance = await get('/balance')
          expect(balance.available.find((b: {currency: string}) => b.currency === 'eur').amount).to.be.greaterThan(0)
          expect(balance.pending.find((b: {currency: string}) => b.currency === 'eur').amount).to.be.greaterThan(0)
          expect((await get('/analytics/summary')).currencies.map((c: {currency: string}) => c.currency)).to.deep.equal(['eur', 'usd'])
          // Two store sales, sold through the checkout rules: paid orders whose payments point at their sessions.
          const orders = (await get('/orders')).data
          expect(orders.map((o: {status: string}) => o.status)).to.deep.equal(['paid', 'paid'])
          const payments = (await get('/payments')).data
          for (const order of orders) expect(payments.map((p: {id: string}) => p.id)).to.include(order.payment)
          const created = payments.map((p: {created: number}) => p.created)
          expect(created, 'newest first').to.deep.equal([...created].sort((a, b) => b - a))
        }
      } finally {
        await seeded.close()
      }
    })
  })
})
