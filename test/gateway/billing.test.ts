/**
 * Subscriptions on the test clock, over real HTTP: the merchant API creates them, the admin helper
 * confirms them, `POST /_admin/clock` walks renewals, dunning, reminders and expiries in time order,
 * and every assertion on events reads what a real local webhook receiver got by the time the clock
 * call returned — no polling.
 */
import {expect} from 'chai'

import {verifyWebhook} from '@payapp/sdk/webhooks-node'
import {subscriptionFromCheckout} from '../../src/gateway/domain/subscriptions.js'
import {sale, sellable} from '../helpers/commerce.js'
import {expectError, TestGateway, type Account} from '../helpers/gateway.js'
import {receiverPool, until, type Receiver} from '../helpers/receiver.js'

const DAY = 86_400
const BILLING_EVENTS = ['subscription.*', 'invoice.*', 'customer.*', 'payment.*']

describe('gateway: subscriptions on the clock', () => {
  let gw: TestGateway
  const receivers = receiverPool()
  before(async () => (gw = await TestGateway.start()))
  after(async () => {
    await receivers.closeAll()
    await gw.close()
  })

  /** Moves the gateway clock; everything due has happened (and been delivered) when it resolves. */
  async function clock(seconds: number) {
    const res = await gw.admin('POST', '/clock', {advance_seconds: seconds})
    expect(res.status, res.text).to.equal(200)
    return res.body as {now: number; jobs_run: number}
  }

  /** Moves the gateway clock to `t` exactly, whatever real time passed since `t` was computed. */
  async function clockTo(t: number) {
    const res = await gw.admin('POST', '/clock', {advance_to: t})
    expect(res.status, res.text).to.equal(200)
    return res.body as {now: number; jobs_run: number}
  }

  interface Setup {
    acct: Account
    rx: Receiver
    price: string
    secret: string
    /** Event types the receiver got since the last call, in delivery order. */
    take(): string[]
    /** Full events the receiver got since the last call. */
    takeEvents(): any[]
  }

  async function setup(opts: {env?: 'test' | 'live'; interval?: string; status?: () => number; trial_period_days?: number} = {}): Promise<Setup> {
    const acct = await gw.account(opts.env ?? 'test')
    const res = await acct.store('POST', '/products', {
      body: {name: 'Pro plan', price: {currency: 'eur', unit_amount: 1500, recurring: {interval: opts.interval ?? 'month', ...(opts.trial_period_days ? {trial_period_days: opts.trial_period_days} : {})}}},
    })
    expect(res.status, res.text).to.equal(201)
    const rx = await receivers.open(opts.status)
    const we = await gw.admin('POST', '/webhook_endpoints', {merchant: acct.merchant.id, env: opts.env ?? 'test', url: rx.url, events: BILLING_EVENTS})
    expect(we.status, we.text).to.equal(201)
    let seen = 0
    const takeEvents = () => {
      const out = rx.got.slice(seen).map((r) => r.event)
      seen = rx.got.length
      return out
    }
    return {acct, rx, price: res.body.default_price, secret: we.body.secret, take: () => takeEvents().map((e) => e.type), takeEvents}
  }

  async function subscribe(s: Setup, body: Record<string, unknown> = {}) {
    const res = await s.acct.api('POST', '/v1/subscriptions', {
      body: {price_id: s.price, customer_name: 'Ada Lovelace', customer_email: 'ada@example.com', ...body},
    })
    expect(res.status, res.text).to.equal(201)
    return res.body
  }

  async function confirm(id: string, body: Record<string, unknown> = {outcome: 'paid'}) {
    const res = await gw.admin('POST', `/subscriptions/${id}/confirm`, body)
    expect(res.status, res.text).to.equal(200)
    return res.body
  }

  const read = async (s: Setup, id: string) => (await s.acct.api('GET', `/v1/subscriptions/${id}`)).body

  it('creates an incomplete subscription with subscription.created at once, and validates the request', async () => {
    const s = await setup()
    const sub = await subscribe(s, {quantity: 2, metadata: {plan: 'pro'}})
    expect(sub).to.include({object: 'subscription', status: 'incomplete', livemode: false, price_id: s.price, quantity: 2, amount: 3000, currency: 'eur', intent_type: 'payment', latest_invoice: null})
    expect(sub.id).to.match(/^sub_/)
    expect(sub.customer).to.match(/^cus_/)
    expect(sub.client_secret).to.match(/^pi_\w+_secret_\w+$/)
    expect(sub.metadata).to.deep.equal({plan: 'pro'})
    await clock(0)
    const delivered = s.takeEvents()
    expect(delivered.map((e) => e.type)).to.deep.equal(['customer.created', 'subscription.created'])
    expect(delivered[1].data.object).to.include({id: sub.id, status: 'incomplete'})
    expect(delivered[1].data.object).not.to.have.property('client_secret')
    verifyWebhook(s.rx.got[1].body, s.rx.got[1].signature, s.secret)

    // The customer is reused by id, its name and e-mail taken from it.
    const again = await subscribe(s, {customer: sub.customer, customer_name: undefined, customer_email: undefined})
    expect(again.customer).to.equal(sub.customer)
    const customer = await s.acct.api('GET', `/v1/customers/${sub.customer}`)
    expect(customer.body).to.include({id: sub.customer, object: 'customer', name: 'Ada Lovelace', email: 'ada@example.com'})

    expectError(await s.acct.api('POST', '/v1/subscriptions', {body: {price_id: 'price_missing', customer_name: 'Ada', customer_email: 'a@example.com'}}), 404, 'price_not_found')
    const oneTime = await sellable(s.acct)
    expectError(await s.acct.api('POST', '/v1/subscriptions', {body: {price_id: oneTime.price, customer_name: 'Ada', customer_email: 'a@example.com'}}), 400, 'price_not_recurring')
    expectError(await s.acct.api('POST', '/v1/subscriptions', {body: {price_id: s.price, customer_email: 'a@example.com'}}), 400, 'parameter_missing')
    expectError(await s.acct.api('POST', '/v1/subscriptions', {body: {price_id: s.price, customer: 'cus_missing'}}), 404, 'resource_missing')
    expectError(await s.acct.api('POST', '/v1/subscriptions', {body: {price_id: s.price, customer: sub.customer, customer_name: 'Someone Else'}}), 400, 'customer_mismatch')
    expectError(await s.acct.api('POST', '/v1/subscriptions', {body: {price_id: s.price, customer: sub.customer, colour: 'red'}}), 400, 'parameter_unknown')
    expectError(await s.acct.api('GET', '/v1/subscriptions/sub_missing'), 404, 'subscription_not_found')
    expectError(await gw.request('GET', '/v1/subscriptions', {token: s.acct.token}), 401, 'wrong_credential_type')

    // A repeated Idempotency-Key replays the first subscription; nothing is created twice.
    const body = {price_id: s.price, customer_name: 'Grace Hopper', customer_email: 'grace@example.com'}
    const once = await s.acct.api('POST', '/v1/subscriptions', {body, idempotencyKey: 'sub-once'})
    const twice = await s.acct.api('POST', '/v1/subscriptions', {body, idempotencyKey: 'sub-once'})
    expect(twice.status).to.equal(201)
    expect(twice.headers.get('idempotent-replayed')).to.equal('true')
    expect(twice.body.id).to.equal(once.body.id)
    await clock(0)
    expect(s.take().filter((t) => t === 'subscription.created')).to.have.length(2)

    const list = await s.acct.api('GET', '/v1/subscriptions?limit=1')
    expect(list.body).to.include({object: 'list', has_more: true})
    expect(list.body.data.map((x: any) => x.id)).to.deep.equal([once.body.id])
    // An incomplete subscription is listed with what confirms it, like its retrieve.
    expect(list.body.data[0]).to.include({client_secret: once.body.client_secret, confirmation_url: once.body.confirmation_url})
    const rest = await s.acct.api('GET', '/v1/subscriptions?offset=1')
    expect(rest.body.data.map((x: any) => x.id)).to.deep.equal([again.id, sub.id])
  })

  it('confirms a paid first payment: active, a paid invoice and its payment, then renews a year of months as 12 invoices in order in one jump', async () => {
    const s = await setup()
    const sub = await subscribe(s)
    await clock(0)
    s.take()
    const confirmed = await confirm(sub.id)
    expect(confirmed.subscription).to.include({id: sub.id, status: 'active'})
    expect(confirmed.invoice).to.include({status: 'paid', amount_paid: 1500, billing_reason: 'subscription_create', period_start: sub.current_period_start, period_end: sub.current_period_end})
    await clock(0)
    expect(s.take()).to.deep.equal(['invoice.created', 'payment.succeeded', 'invoice.paid', 'invoice.payment_succeeded', 'subscription.updated'])
    expect((await read(s, sub.id)).client_secret).to.equal(undefined)

    const jump = await clock(365 * DAY)
    // Delivered before the clock call returned: no waiting here.
    const events = s.takeEvents()
    const cycle = ['invoice.created', 'payment.succeeded', 'invoice.paid', 'invoice.payment_succeeded', 'subscription.updated']
    expect(events.map((e) => e.type)).to.deep.equal(Array.from({length: 12}, () => cycle).flat())
    const invoices = events.filter((e) => e.type === 'invoice.paid').map((e) => e.data.object)
    expect(invoices).to.have.length(12)
    let start = sub.current_period_end
    for (const inv of invoices) {
      expect(inv).to.include({status: 'paid', amount_paid: 1500, billing_reason: 'subscription_cycle', period_start: start})
      const [a, b] = [new Date(inv.period_start * 1000), new Date(inv.period_end * 1000)]
      expect((b.getUTCFullYear() - a.getUTCFullYear()) * 12 + b.getUTCMonth() - a.getUTCMonth()).to.equal(1)
      start = inv.period_end
    }
    // Objects carry clock time: each renewal's events are dated at its period start.
    for (const e of events) expect(e.created).to.equal(e.type === 'subscription.updated' ? e.data.object.current_period_start : (e.data.object.period_start ?? e.created))
    const created = events.filter((e) => e.type === 'invoice.created').map((e) => e.created)
    expect(created).to.deep.equal([...created].sort((a, b) => a - b))
    expect(jump.jobs_run).to.be.at.least(12)

    const now = await read(s, sub.id)
    expect(now).to.include({status: 'active', current_period_start: invoices[11].period_start, current_period_end: start, latest_invoice: invoices[11].id})
    expect(now.current_period_end).to.be.greaterThan(jump.now)
    // The App API reads the same object.
    const app = await s.acct.app('GET', '/subscriptions')
    expect(app.body.data.find((x: any) => x.id === sub.id)).to.deep.equal(now)
    // The merchant API reads the sandbox's invoices (the App API's sandbox lists none, as the spec says).
    const listed = await s.acct.api('GET', '/v1/invoices?limit=100')
    expect(listed.status, listed.text).to.equal(200)
    expect(listed.body.data.filter((i: any) => i.subscription === sub.id)).to.have.length(13)
    expect((await s.acct.api('GET', `/v1/invoices/${invoices[11].id}`)).body).to.include({id: invoices[11].id, status: 'paid'})
    expect((await s.acct.app('GET', '/invoices')).body.data).to.deep.equal([])
  })

  it('dunning: a failing renewal is past_due with invoice.payment_failed at notice (day 0), warning (day 3), final (day 7), then unpaid and frozen', async () => {
    const s = await setup()
    const sub = await subscribe(s)
    await confirm(sub.id, {outcome: 'paid', renewals: 'fail'})
    await clock(0)
    s.take()
    const periodEnd = sub.current_period_end
    await clockTo(periodEnd - 1)
    expect(s.take()).to.deep.equal([])

    await clockTo(periodEnd)
    let events = s.takeEvents()
    expect(events.map((e) => e.type)).to.deep.equal(['invoice.created', 'payment.failed', 'invoice.payment_failed', 'subscription.updated'])
    const failed = events[2].data.object
    expect(failed).to.include({status: 'open', dunning_stage: 'notice', attempt_count: 1, next_payment_attempt: periodEnd + 3 * DAY})
    expect(events[3].data.object).to.include({status: 'past_due', current_period_start: periodEnd})
    expect((await read(s, sub.id)).status).to.equal('past_due')

    await clockTo(periodEnd + 3 * DAY - 1)
    expect(s.take()).to.deep.equal([])
    await clockTo(periodEnd + 3 * DAY)
    events = s.takeEvents()
    expect(events.map((e) => e.type)).to.deep.equal(['payment.failed', 'invoice.payment_failed'])
    expect(events[1].data.object).to.include({id: failed.id, dunning_stage: 'warning', attempt_count: 2, next_payment_attempt: periodEnd + 7 * DAY})
    expect(events[1].created).to.equal(periodEnd + 3 * DAY)

    await clockTo(periodEnd + 7 * DAY)
    events = s.takeEvents()
    expect(events.map((e) => e.type)).to.deep.equal(['payment.failed', 'invoice.payment_failed', 'subscription.updated'])
    expect(events[1].data.object).to.include({dunning_stage: 'final', attempt_count: 3, next_payment_attempt: null})
    expect(events[2].data.object).to.include({status: 'unpaid'})
    expect(events[2].created).to.equal(periodEnd + 7 * DAY)

    // Frozen: no further periods or invoices.
    await clock(90 * DAY)
    expect(s.take()).to.deep.equal([])
    expect((await read(s, sub.id)).status).to.equal('unpaid')
    expect((await gw.admin('GET', `/subscriptions/${sub.id}/schedule`)).body.data).to.deep.equal([])
  })

  it('dunning recovers: a retry that succeeds pays the invoice and makes the subscription active again', async () => {
    const s = await setup({interval: 'week'})
    const sub = await subscribe(s)
    await confirm(sub.id, {outcome: 'paid', renewals: 'fail'})
    await clockTo(sub.current_period_end)
    expect((await read(s, sub.id)).status).to.equal('past_due')
    s.take()
    expect((await gw.admin('POST', `/subscriptions/${sub.id}/renewals`, {outcome: 'succeed'})).status).to.equal(200)
    await clockTo(sub.current_period_end + 3 * DAY)
    const events = s.takeEvents()
    expect(events.map((e) => e.type)).to.deep.equal(['payment.succeeded', 'invoice.paid', 'invoice.payment_succeeded', 'subscription.updated'])
    expect(events[1].data.object).to.include({status: 'paid', attempt_count: 2})
    expect(events[3].data.object).to.include({status: 'active'})
  })

  it('trial: confirming stores only the card (trialing), reminds exactly 3 days before the end, and charges at the end', async () => {
    const s = await setup({trial_period_days: 10})
    const sub = await subscribe(s)
    expect(sub).to.include({intent_type: 'setup', trial_end: sub.created + 10 * DAY, current_period_end: sub.created + 10 * DAY})
    expect(sub.client_secret).to.match(/^seti_/)
    const confirmed = await confirm(sub.id)
    expect(confirmed.subscription.status).to.equal('trialing')
    expect(confirmed.invoice).to.include({amount_due: 0, status: 'paid'})
    expect(confirmed.payment).to.equal(null)
    await clock(0)
    s.take()

    await clockTo(sub.trial_end - 3 * DAY - 1)
    expect(s.take()).to.deep.equal([])
    await clockTo(sub.trial_end - 3 * DAY)
    const reminder = s.takeEvents()
    expect(reminder.map((e) => e.type)).to.deep.equal(['customer.subscription.trial_will_end'])
    expect(reminder[0].created).to.equal(sub.trial_end - 3 * DAY)
    expect(reminder[0].data.object).to.include({id: sub.id, status: 'trialing'})

    await clockTo(sub.trial_end - 1)
    expect(s.take()).to.deep.equal([])
    await clockTo(sub.trial_end)
    const events = s.takeEvents()
    expect(events.map((e) => e.type)).to.deep.equal(['invoice.created', 'payment.succeeded', 'invoice.paid', 'invoice.payment_succeeded', 'subscription.updated'])
    expect(events[2].data.object).to.include({amount_paid: 1500, period_start: sub.trial_end})
    expect(events[4].data.object).to.include({status: 'active', current_period_start: sub.trial_end})
  })

  it('a trial shorter than 3 days is reminded of at confirmation', async () => {
    const s = await setup()
    const sub = await subscribe(s, {trial_days: 2})
    await clock(0)
    s.take()
    await confirm(sub.id)
    await clock(0)
    expect(s.take()).to.deep.equal(['invoice.created', 'invoice.paid', 'invoice.payment_succeeded', 'subscription.updated', 'customer.subscription.trial_will_end'])
  })

  it('expires a subscription left unconfirmed for 23 hours; a declined confirmation does not save it', async () => {
    const s = await setup()
    const sub = await subscribe(s)
    const declined = await confirm(sub.id, {outcome: 'declined'})
    expect(declined.subscription.status).to.equal('incomplete')
    expect(declined.invoice).to.include({status: 'open', attempt_count: 1})
    await clock(0)
    expect(s.take()).to.deep.equal(['customer.created', 'subscription.created', 'invoice.created', 'payment.failed', 'invoice.payment_failed'])

    await clockTo(sub.created + 23 * 3600 - 1)
    expect(s.take()).to.deep.equal([])
    expect((await read(s, sub.id)).status).to.equal('incomplete')
    await clockTo(sub.created + 23 * 3600)
    const events = s.takeEvents()
    expect(events.map((e) => e.type)).to.deep.equal(['subscription.updated'])
    expect(events[0].data.object.status).to.equal('incomplete_expired')
    expect(events[0].created).to.equal(sub.created + 23 * 3600)
    expectError(await gw.admin('POST', `/subscriptions/${sub.id}/confirm`, {outcome: 'paid'}), 409, 'subscription_not_incomplete')
    expectError(await s.acct.api('POST', `/v1/subscriptions/${sub.id}/cancel`, {body: {}}), 409, 'subscription_already_canceled')
  })

  it('cancels at period end (the default): active until current_period_end, then canceled with subscription.deleted and no invoice', async () => {
    const s = await setup()
    const sub = await subscribe(s)
    await confirm(sub.id)
    const scheduled = await s.acct.api('POST', `/v1/subscriptions/${sub.id}/cancel`, {body: {}})
    expect(scheduled.status, scheduled.text).to.equal(200)
    expect(scheduled.body).to.include({status: 'active', cancel_at_period_end: true})
    await clock(0)
    s.take()
    await clockTo(sub.current_period_end - 1)
    expect(s.take()).to.deep.equal([])
    await clockTo(sub.current_period_end)
    const events = s.takeEvents()
    expect(events.map((e) => e.type)).to.deep.equal(['subscription.deleted'])
    expect(events[0].data.object).to.include({status: 'canceled', canceled_at: sub.current_period_end})
    await clock(60 * DAY)
    expect(s.take()).to.deep.equal([])
  })

  it('cancels now: canceled with subscription.deleted, no further invoices; a second cancel is 409', async () => {
    const s = await setup()
    const sub = await subscribe(s)
    await confirm(sub.id)
    const canceled = await s.acct.api('POST', `/v1/subscriptions/${sub.id}/cancel`, {body: {at_period_end: false}})
    expect(canceled.body).to.include({status: 'canceled', cancel_at_period_end: false})
    await clock(0)
    expect(s.take().slice(-1)).to.deep.equal(['subscription.deleted'])
    await clock(60 * DAY)
    expect(s.take()).to.deep.equal([])
    const again = expectError(await s.acct.api('POST', `/v1/subscriptions/${sub.id}/cancel`, {body: {at_period_end: false}}), 409, 'subscription_already_canceled')
    expect(again.type).to.equal('resource_conflict')
  })

  it('runs every webhook attempt due in the jump, in time order, each finished and logged before the clock call returns', async () => {
    let answer = 500
    const s = await setup({status: () => answer})
    const sub = await subscribe(s)
    const we = (await gw.admin('GET', `/webhook_endpoints?merchant=${s.acct.merchant.id}`)).body.data[0]
    // The first attempts (customer.created, subscription.created) fail; an hour covers all six retries.
    await clock(3600)
    const log = (await gw.admin('GET', `/webhook_endpoints/${we.id}/deliveries`)).body.data as any[]
    expect(log.filter((a) => a.type === 'subscription.created').map((a) => a.attempt)).to.deep.equal([1, 2, 3, 4, 5, 6, 7])
    expect(s.rx.got.filter((r) => r.event.type === 'subscription.created')).to.have.length(7)
    // Each retry waited its backoff on the gateway clock (the first ones may have run in real time).
    const times = log.filter((a) => a.type === 'subscription.created').map((a) => a.attempted)
    const waits = [1, 5, 30, 120, 600, 1800]
    times.slice(1).forEach((t, i) => expect(t - times[i]).to.be.at.least(waits[i]))
    expect(times[0]).to.be.at.least(sub.created)
    expect(times[6]).to.be.at.most(sub.created + 3600 + 5)

    answer = 200
    await confirm(sub.id)
    await clock(0)
    expect(s.rx.got.slice(-5).map((r) => r.event.type)).to.deep.equal(['invoice.created', 'payment.succeeded', 'invoice.paid', 'invoice.payment_succeeded', 'subscription.updated'])
  })

  it('the hosted confirmation page confirms the client secret: decline keeps it incomplete, pay makes it active, then the secret is spent', async () => {
    const s = await setup()
    const sub = await subscribe(s)
    expect(sub.confirmation_url).to.equal(`${gw.url}/subscriptions/confirm?client_secret=${encodeURIComponent(sub.client_secret)}`)
    const page = await fetch(sub.confirmation_url)
    expect(page.status).to.equal(200)
    expect(await page.text()).to.include('Pay €15.00 now')
    // The security headers of every gateway page: the confirmation URL carries the client secret.
    expect(page.headers.get('content-security-policy')).to.include("frame-ancestors 'none'")
    expect(page.headers.get('referrer-policy')).to.equal('no-referrer')
    const post = (outcome: string) =>
      fetch(sub.confirmation_url, {method: 'POST', headers: {'content-type': 'application/x-www-form-urlencoded'}, body: `outcome=${outcome}`})
    // A form without its button's value pays nothing; an oversized form is the client's error, not a 500.
    expect((await post('')).status).to.equal(400)
    expect((await post(`paid&pad=${'x'.repeat(8192)}`)).status).to.equal(413)
    expect((await read(s, sub.id)).status).to.equal('incomplete')
    expect((await post('declined')).status).to.equal(402)
    expect((await read(s, sub.id)).status).to.equal('incomplete')
    expect((await post('paid')).status).to.equal(200)
    expect((await read(s, sub.id)).status).to.equal('active')
    expect((await fetch(sub.confirmation_url)).status).to.equal(410)
    const wrong = sub.client_secret.slice(0, -1) + (sub.client_secret.endsWith('x') ? 'y' : 'x')
    expect((await fetch(`${gw.url}/subscriptions/confirm?client_secret=${wrong}`)).status).to.equal(404)
    await clock(0)
    expect(s.take()).to.include.members(['payment.failed', 'invoice.payment_failed', 'invoice.paid', 'subscription.updated'])
  })

  it('the clock moves forward only: advance_to in the past is 400, and one of advance_seconds / advance_to is required', async () => {
    const now = (await gw.admin('GET', '/clock')).body.now
    expectError(await gw.admin('POST', '/clock', {advance_to: now - 3600}), 400, 'clock_in_past')
    expectError(await gw.admin('POST', '/clock', {}), 400, 'parameter_missing')
    expectError(await gw.admin('POST', '/clock', {advance_seconds: 1, advance_to: now + 5}), 400, 'parameter_missing')
    expectError(await gw.admin('POST', '/clock', {advance_seconds: -1}), 400, 'number_too_small')
  })

  it('runs due work as real time passes, without a clock call (the background tick)', async () => {
    const s = await setup({interval: 'day'})
    const sub = await subscribe(s)
    await confirm(sub.id)
    await clockTo(sub.current_period_end - 1)
    s.take()
    // No clock call from here: a second of real time makes the renewal due.
    await until(() => s.rx.got.some((r) => r.event.type === 'invoice.paid' && r.event.data.object.billing_reason === 'subscription_cycle'), 'the renewal', 10_000)
    expect((await read(s, sub.id)).current_period_start).to.equal(sub.current_period_end)
  })

  it('keeps scheduled work across a restart of the gateway on the same database file', async () => {
    const file = TestGateway.tempDbFile()
    const first = await TestGateway.start({db: file})
    const acct = await first.account('test')
    const price = (await acct.store('POST', '/products', {body: {name: 'Plan', price: {currency: 'eur', unit_amount: 900, recurring: {interval: 'month'}}}})).body.default_price
    const sub = (await acct.api('POST', '/v1/subscriptions', {body: {price_id: price, customer_name: 'Ada Lovelace', customer_email: 'ada@example.com'}})).body
    await first.admin('POST', `/subscriptions/${sub.id}/confirm`, {outcome: 'paid'})
    await first.close()

    const second = await TestGateway.start({db: file})
    try {
      expect((await second.admin('GET', `/subscriptions/${sub.id}/schedule`)).body.data.map((j: any) => [j.kind, j.due])).to.deep.equal([['subscription.period_end', sub.current_period_end]])
      await second.admin('POST', '/clock', {advance_to: sub.current_period_end})
      const renewed = (await second.request('GET', `/v1/subscriptions/${sub.id}`, {token: acct.secretKey})).body
      expect(renewed.current_period_start).to.equal(sub.current_period_end)
    } finally {
      await second.close()
    }
  })

  it('a paid checkout session in subscription mode starts an active subscription whose first invoice that payment paid (domain hook)', async () => {
    const s = await setup()
    const {payment} = await sale(gw, s.acct, await sellable(s.acct))
    await clock(0)
    s.take()
    const platform = gw.gw.platform
    const scope = {merchant: s.acct.merchant.id, env: 'test' as const}
    const stored = (await platform.storage.reads.get('payment', scope, payment.id))!
    const sub = await platform.write((tx) => subscriptionFromCheckout(tx, scope, {price_id: s.price, quantity: 1, buyer: {name: 'Ada Buyer', email: 'ada@example.com'}, payment: stored}))
    expect(sub).to.include({status: 'active', price_id: s.price})
    await clock(0)
    const events = s.takeEvents()
    expect(events.map((e) => e.type)).to.deep.equal(['customer.created', 'subscription.created', 'invoice.created', 'invoice.paid', 'invoice.payment_succeeded', 'subscription.updated'])
    expect(events[3].data.object).to.include({status: 'paid', payment: payment.id, billing_reason: 'subscription_create'})
    await clockTo(sub.current_period_end)
    expect(s.take()).to.deep.equal(['invoice.created', 'payment.succeeded', 'invoice.paid', 'invoice.payment_succeeded', 'subscription.updated'])
  })

  it('live: renewal invoices are readable on the App API', async () => {
    const s = await setup({env: 'live', interval: 'week'})
    const sub = await subscribe(s)
    await confirm(sub.id)
    await clock(14 * DAY)
    const invoices = await s.acct.app('GET', '/invoices')
    expect(invoices.status, invoices.text).to.equal(200)
    const mine = invoices.body.data.filter((i: any) => i.subscription === sub.id)
    expect(mine.map((i: any) => i.billing_reason)).to.deep.equal(['subscription_cycle', 'subscription_cycle', 'subscription_create'])
    expect((await s.acct.app('GET', `/invoices/${mine[0].id}`)).body).to.deep.equal(mine[0])
  })
})
