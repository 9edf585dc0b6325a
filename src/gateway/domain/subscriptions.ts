/**
 * Subscriptions, their customers and invoices, on the gateway clock (spec: Subscription states).
 *
 *   (new) → incomplete ─ confirm paid → active ─ renewal fails → past_due ─ retries exhausted → unpaid
 *                      ├ confirm (trial) → trialing ─ trial end: first charge → active | past_due
 *                      └ 23 h unconfirmed → incomplete_expired
 *   any live state ─ cancel now → canceled; cancel at period end → canceled when the period ends
 *
 * Every function runs inside the caller's transaction and appends its events there. Time-driven moves
 * are scheduler jobs (see JOBS), scheduled in the transaction of the change that makes them due, so a
 * test clock jump and real time passing run the same code. Nothing here knows about HTTP.
 */
import {timingSafeEqual} from 'node:crypto'

import type {z} from 'zod'

import type * as admin from '@payapp/sdk/schemas/admin'
import {conflict, invalid, notFound} from '../errors.js'
import {newId, randomText} from '../ids.js'
import type {Tx} from './context.js'
import type {BillingDoc, CustomerDoc, InvoiceDoc, PaymentDoc, Scope, SubscriptionDoc} from '../storage/documents.js'
import type {Job} from '../storage/storage.js'
import {resolveCustomer} from './customers.js'
import {createInvoice, emitPaid} from './invoices.js'
import {paymentView, recordPayment, SANDBOX_CARDS, settledFields} from './payments.js'
import {requireDoc, stamp} from './shared.js'

type Subscription = SubscriptionDoc
type Invoice = InvoiceDoc

export const DAY = 86_400
/** How long a subscription's first payment may stay unconfirmed (spec: Limits). */
export const FIRST_PAYMENT_SECONDS = 23 * 3600
/** `customer.subscription.trial_will_end` comes this long before the trial ends (spec: Limits). */
export const TRIAL_REMINDER_SECONDS = 3 * DAY
/**
 * Dunning after a failed renewal charge (spec: not shown): the failure itself is the `notice` stage;
 * a retry 3 days later is `warning`, another 4 days after that (day 7) is `final`. When the final
 * retry fails, retries are exhausted and the subscription becomes `unpaid`.
 */
export const DUNNING = [
  {stage: 'notice', after: 0},
  {stage: 'warning', after: 3 * DAY},
  {stage: 'final', after: 7 * DAY},
] as const
export type DunningStage = (typeof DUNNING)[number]['stage']

export type Interval = 'day' | 'week' | 'month' | 'year'
export type RenewalOutcome = 'succeed' | 'fail'

/** Job kinds this module runs. */
export const JOBS = {
  expireIncomplete: 'subscription.expire_incomplete',
  trialReminder: 'subscription.trial_reminder',
  periodEnd: 'subscription.period_end',
  retryInvoice: 'invoice.retry',
} as const

/** The stored card by how its renewals go: the sandbox's paying card, or one whose later charges decline. */
const CARDS = {
  succeed: SANDBOX_CARDS.paid,
  fail: {brand: 'visa', last4: '0341', country: 'DE', funding: 'credit'},
}

const LIVE_STATES = new Set<Subscription['status']>(['incomplete', 'trialing', 'active', 'past_due', 'unpaid'])
const ENDED = new Set<Subscription['status']>(['canceled', 'incomplete_expired'])

// ---------------------------------------------------------------- calendar

/** `t` moved `count` intervals on the UTC calendar; a month end clamps (31 Jan + 1 month = 28/29 Feb). */
export function addInterval(t: number, interval: Interval, count: number): number {
  const d = new Date(t * 1000)
  if (interval === 'day') d.setUTCDate(d.getUTCDate() + count)
  else if (interval === 'week') d.setUTCDate(d.getUTCDate() + 7 * count)
  else {
    const months = interval === 'year' ? 12 * count : count
    const day = d.getUTCDate()
    d.setUTCDate(1)
    d.setUTCMonth(d.getUTCMonth() + months)
    const last = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate()
    d.setUTCDate(Math.min(day, last))
  }
  return Math.floor(d.getTime() / 1000)
}

const periodEnd = (b: BillingDoc, cycle: number) => addInterval(b.anchor, b.interval, b.interval_count * (cycle + 1))

// ---------------------------------------------------------------- reads

export async function getBilling(tx: Tx, scope: Scope, sub: Subscription): Promise<BillingDoc> {
  const doc = (await tx.all('subscription_billing', scope, sub.id))[0]
  if (!doc) throw new Error(`subscription ${sub.id} has no billing record`)
  return doc
}

/** What a client secret opens: nothing (unknown secret), an ended confirmation, or the incomplete subscription. */
export async function subscriptionForClientSecret(tx: Tx, secret: string): Promise<{state: 'unknown'} | {state: 'ended'} | {state: 'open'; scope: Scope; sub: Subscription}> {
  const found = await tx.find('subscription_billing', secret.split('_secret_')[0])
  const a = Buffer.from(found?.doc.client_secret ?? '')
  const b = Buffer.from(secret)
  if (!found || a.length !== b.length || !timingSafeEqual(a, b)) return {state: 'unknown'}
  const sub = await tx.get('subscription', found.scope, found.doc.subscription)
  return sub?.status === 'incomplete' ? {state: 'open', scope: found.scope, sub} : {state: 'ended'}
}

export const requireSubscription = async (tx: Tx, scope: Scope, id: string) => requireDoc(tx, 'subscription', scope, id, 'subscription', 'subscription_not_found')

/**
 * The merchant API's view: while the first payment is open it carries the client secret and the
 * gateway's page that confirms it (the stand-in for the platform's browser script).
 */
export async function subscriptionView(tx: Tx, scope: Scope, sub: Subscription): Promise<Subscription> {
  if (sub.status !== 'incomplete') return sub
  const secret = (await getBilling(tx, scope, sub)).client_secret
  return {...sub, client_secret: secret, confirmation_url: `${tx.baseUrl}/subscriptions/confirm?client_secret=${encodeURIComponent(secret)}`}
}

// ---------------------------------------------------------------- create

export interface Plan {
  price_id: string | null
  unit_amount: number
  currency: string
  interval: Interval
  interval_count: number
  trial_period_days: number | null
}

/** The recurring price a subscription bills: 404 `price_not_found`, 400 for a one-time price, 409 when archived. */
export async function planOfPrice(tx: Tx, scope: Scope, priceId: string): Promise<Plan> {
  const price = await tx.get('price', scope, priceId)
  if (!price) throw notFound('price', priceId, 'price_not_found', 'price_id')
  if (price.type !== 'recurring' || !price.recurring) throw invalid('price_not_recurring', `Price ${priceId} is one-time; a subscription needs a recurring price`, 'price_id')
  if (!price.active) throw conflict('price_unavailable', `Price ${priceId} is archived`, 'price_id')
  const recurring = price.recurring as {interval: Interval; interval_count?: number; trial_period_days?: number | null}
  return {
    price_id: price.id,
    unit_amount: price.unit_amount,
    currency: price.currency,
    interval: recurring.interval,
    interval_count: recurring.interval_count ?? 1,
    trial_period_days: recurring.trial_period_days ?? null,
  }
}

export interface NewSubscription {
  plan: Plan
  customer?: string
  customer_name?: string
  customer_email?: string
  quantity: number
  trial_days?: number
  metadata?: Record<string, string>
}

/**
 * A new subscription, `incomplete` until its first payment (or, with a trial, its card) is confirmed
 * with the client secret; `subscription.created` at once (spec). It expires 23 hours later unless confirmed.
 */
export async function createSubscription(tx: Tx, scope: Scope, input: NewSubscription): Promise<Subscription> {
  const merchant = await tx.merchant(scope.merchant)
  if (merchant && merchant.status !== 'active') throw conflict('merchant_not_ready', `Merchant ${merchant.id} is ${merchant.status}; it cannot bill yet`)
  const now = tx.now(scope)
  const {plan} = input
  const customer = await resolveCustomer(tx, scope, input)
  const trialDays = input.trial_days ?? plan.trial_period_days ?? undefined
  const trialEnd = trialDays === undefined ? null : now + trialDays * DAY
  const anchor = trialEnd ?? now
  const intent = newId(trialEnd === null ? 'pi' : 'seti', 24)

  const sub: Subscription = {
    ...stamp(tx, scope, 'subscription', newId('sub', 24), now),
    status: 'incomplete',
    customer: customer.id,
    price_id: plan.price_id,
    quantity: input.quantity,
    currency: plan.currency,
    amount: plan.unit_amount * input.quantity,
    current_period_start: now,
    current_period_end: trialEnd ?? addInterval(anchor, plan.interval, plan.interval_count),
    latest_invoice: null,
    intent_type: trialEnd === null ? 'payment' : 'setup',
    trial_end: trialEnd,
    cancel_at_period_end: false,
    canceled_at: null,
    metadata: input.metadata ?? {},
  }
  await tx.insert('subscription', scope, sub, {created: now})
  const billing: BillingDoc = {
    id: intent,
    object: 'subscription_billing',
    subscription: sub.id,
    client_secret: `${intent}_secret_${randomText(24)}`,
    interval: plan.interval,
    interval_count: plan.interval_count,
    anchor,
    // A trial's period is cycle -1: the first paid period (cycle 0) starts when it ends.
    cycle: trialEnd === null ? 0 : -1,
    renewals: 'succeed',
    card: null,
  }
  await tx.insert('subscription_billing', scope, billing, {parent: sub.id, created: now})
  await tx.emit(scope, 'subscription.created', sub)
  await tx.schedule(scope, JOBS.expireIncomplete, sub.id, now + FIRST_PAYMENT_SECONDS)
  return sub
}

// ---------------------------------------------------------------- invoices and charges

/** One charge attempt on an invoice with the stored card: a payment row either way. */
async function attemptCharge(tx: Tx, scope: Scope, invoice: Invoice, customer: CustomerDoc | undefined, outcome: 'paid' | 'declined', card: BillingDoc['card']): Promise<{invoice: Invoice; payment: PaymentDoc}> {
  const now = tx.now(scope)
  const paid = outcome === 'paid'
  const payment = await recordPayment(
    tx,
    scope,
    {
      ...settledFields(outcome, invoice.currency, now),
      ...(card ? {card} : {}),
      amount: invoice.amount_due,
      currency: invoice.currency,
      created: now,
      invoice_id: invoice.id,
      customer: {id: customer?.id ?? null, name: customer?.name ?? null, email: customer?.email ?? null},
      description: invoice.subscription ? `Subscription ${invoice.subscription}` : null,
      reference: invoice.id,
      source: 'invoice',
    },
    invoice.id,
  )
  const next: Invoice = {
    ...invoice,
    attempt_count: (invoice.attempt_count ?? 0) + 1,
    payment: payment.id,
    ...(paid ? {status: 'paid' as const, amount_paid: invoice.amount_due, next_payment_attempt: null} : {}),
  }
  await tx.save(next)
  return {invoice: next, payment}
}

async function saveSubscription(tx: Tx, scope: Scope, sub: Subscription, type: 'subscription.updated' | 'subscription.deleted' = 'subscription.updated'): Promise<Subscription> {
  await tx.save(sub)
  await tx.emit(scope, type, sub)
  return sub
}

// ---------------------------------------------------------------- confirmation

export interface Confirmation {
  outcome: 'paid' | 'declined'
  /** How later renewal charges go; default `succeed`. */
  renewals?: RenewalOutcome
  /** The payment that already paid the first invoice (a checkout session in subscription mode). */
  paidBy?: PaymentDoc
}

/**
 * The buyer confirms the client secret (hosted page or admin helper). Paid: the first invoice is paid
 * and the subscription `active`, or with a trial only the card is stored and it is `trialing` after a
 * zero invoice (spec: the same events). Declined: a failed payment on the first invoice
 * (`invoice.payment_failed`); it stays `incomplete` and may be confirmed again until it expires.
 */
export async function confirmSubscription(tx: Tx, scope: Scope, id: string, input: Confirmation): Promise<{subscription: Subscription; invoice: Invoice | null; payment: unknown}> {
  let sub = await requireSubscription(tx, scope, id)
  if (sub.status !== 'incomplete') {
    throw conflict('subscription_not_incomplete', `Subscription ${id} is ${sub.status}; only an incomplete subscription can be confirmed`)
  }
  const billing = await getBilling(tx, scope, sub)
  const customer = await tx.get('customer', scope, sub.customer)
  const trial = sub.intent_type === 'setup'

  if (input.outcome === 'declined' && trial) return {subscription: await subscriptionView(tx, scope, sub), invoice: null, payment: null}

  let invoice = sub.latest_invoice ? await tx.get('invoice', scope, sub.latest_invoice) : undefined
  if (!invoice) {
    invoice = await createInvoice(tx, scope, {
      subscription: sub,
      customer: sub.customer,
      amount: trial ? 0 : sub.amount,
      currency: sub.currency,
      status: 'open',
      period_start: sub.current_period_start,
      period_end: sub.current_period_end,
      billing_reason: 'subscription_create',
    })
    sub = {...sub, latest_invoice: invoice.id}
  }

  if (input.outcome === 'declined') {
    const {invoice: failed, payment} = await attemptCharge(tx, scope, invoice, customer, 'declined', null)
    await tx.emit(scope, 'payment.failed', paymentView(payment))
    await tx.emit(scope, 'invoice.payment_failed', failed)
    return {subscription: await subscriptionView(tx, scope, sub), invoice: failed, payment: paymentView(payment)}
  }

  const card = CARDS[input.renewals ?? 'succeed']
  await tx.save({...billing, renewals: input.renewals ?? 'succeed', card})
  let payment: PaymentDoc | null = null
  if (trial) {
    invoice = {...invoice, status: 'paid', attempt_count: 1}
    await tx.save(invoice)
  } else if (input.paidBy) {
    // Paid through a checkout session: its payment (and its events) already exist.
    payment = input.paidBy
    invoice = {...invoice, status: 'paid', amount_paid: invoice.amount_due, attempt_count: 1, payment: payment.id}
    await tx.save(invoice)
  } else {
    ; ({invoice, payment} = await attemptCharge(tx, scope, invoice, customer, 'paid', card))
    await tx.emit(scope, 'payment.succeeded', paymentView(payment))
  }
  await emitPaid(tx, scope, invoice)
  sub = await saveSubscription(tx, scope, {...sub, status: trial ? 'trialing' : 'active'})
  await tx.cancelJobs(sub.id, JOBS.expireIncomplete)
  await tx.schedule(scope, JOBS.periodEnd, sub.id, sub.current_period_end)
  if (trial && sub.trial_end !== null) {
    const remindAt = sub.trial_end - TRIAL_REMINDER_SECONDS
    // A trial shorter than the reminder's lead time is reminded of at once.
    if (remindAt <= tx.now(scope)) await tx.emit(scope, 'customer.subscription.trial_will_end', sub)
    else await tx.schedule(scope, JOBS.trialReminder, sub.id, remindAt)
  }
  return {subscription: sub, invoice, payment: payment && paymentView(payment)}
}

/**
 * A checkout session in `subscription` mode was paid (spec: a subscription can also be started through
 * a checkout session): the buyer becomes a customer and the subscription starts `active`, its first
 * invoice paid by the session's payment (or `trialing` when the price has a trial). The checkout code
 * calls this when it completes such a session, after its own events.
 */
export async function subscriptionFromCheckout(
  tx: Tx,
  scope: Scope,
  input: {price_id: string; quantity: number; buyer: {name: string; email: string}; payment: PaymentDoc; metadata?: Record<string, string>},
): Promise<Subscription> {
  const sub = await createSubscription(tx, scope, {
    plan: await planOfPrice(tx, scope, input.price_id),
    quantity: input.quantity,
    customer_name: input.buyer.name,
    customer_email: input.buyer.email,
    metadata: input.metadata,
  })
  return (await confirmSubscription(tx, scope, sub.id, {outcome: 'paid', paidBy: input.payment})).subscription
}

/** Changes how later renewal charges of a confirmed subscription go (the admin helper's card swap). */
export async function setRenewalOutcome(tx: Tx, scope: Scope, id: string, renewals: RenewalOutcome): Promise<Subscription> {
  const sub = await requireSubscription(tx, scope, id)
  const billing = await getBilling(tx, scope, sub)
  await tx.save({...billing, renewals, card: CARDS[renewals]})
  return sub
}

// ---------------------------------------------------------------- cancel

/**
 * Cancels now (`subscription.deleted`, no further invoices) or at period end (`subscription.updated`,
 * then `canceled` when the period ends). An incomplete or unpaid subscription has no period to finish,
 * so it ends now either way. A second cancel is 409 `subscription_already_canceled`.
 */
export async function cancelSubscription(tx: Tx, scope: Scope, id: string, atPeriodEnd: boolean): Promise<Subscription> {
  const sub = await requireSubscription(tx, scope, id)
  if (ENDED.has(sub.status)) throw conflict('subscription_already_canceled', `Subscription ${id} has already ended (${sub.status})`)
  if (atPeriodEnd && sub.status !== 'incomplete' && sub.status !== 'unpaid') {
    if (sub.cancel_at_period_end) return sub
    return saveSubscription(tx, scope, {...sub, cancel_at_period_end: true})
  }
  await tx.cancelJobs(sub.id)
  return saveSubscription(tx, scope, {...sub, status: 'canceled', canceled_at: tx.now(scope), cancel_at_period_end: false}, 'subscription.deleted')
}

// ---------------------------------------------------------------- time-driven moves (jobs)

/** 23 hours without confirmation: `incomplete_expired` (spec), with `subscription.updated`. */
async function expireIncomplete(tx: Tx, scope: Scope, job: Job) {
  const sub = await tx.get('subscription', scope, job.ref)
  if (sub?.status !== 'incomplete') return
  await tx.cancelJobs(sub.id)
  await saveSubscription(tx, scope, {...sub, status: 'incomplete_expired'})
}

async function trialReminder(tx: Tx, scope: Scope, job: Job) {
  const sub = await tx.get('subscription', scope, job.ref)
  if (sub?.status !== 'trialing' || sub.trial_end === null || sub.trial_end - TRIAL_REMINDER_SECONDS !== job.due) return
  await tx.emit(scope, 'customer.subscription.trial_will_end', sub)
}

/**
 * The end of a period: a pending cancel takes effect; otherwise the next period starts with a new
 * invoice charged to the stored card (a trial's end is its first charge). A failed charge starts dunning.
 */
async function periodEndJob(tx: Tx, scope: Scope, job: Job) {
  const sub = await tx.get('subscription', scope, job.ref)
  if (!sub || sub.current_period_end !== job.due || !LIVE_STATES.has(sub.status) || sub.status === 'incomplete' || sub.status === 'unpaid') return
  if (sub.cancel_at_period_end) {
    await tx.cancelJobs(sub.id)
    await saveSubscription(tx, scope, {...sub, status: 'canceled', canceled_at: tx.now(scope), cancel_at_period_end: false}, 'subscription.deleted')
    return
  }
  const billing = await getBilling(tx, scope, sub)
  const cycle = billing.cycle + 1
  const start = sub.current_period_end
  const end = periodEnd(billing, cycle)
  await tx.save({...billing, cycle})
  let next: Subscription = {...sub, current_period_start: start, current_period_end: end}
  await tx.save(next)
  const invoice = await createInvoice(tx, scope, {
    subscription: next,
    customer: sub.customer,
    amount: sub.amount,
    currency: sub.currency,
    status: 'open',
    period_start: start,
    period_end: end,
    billing_reason: 'subscription_cycle',
  })
  next = {...next, latest_invoice: invoice.id}
  await tx.schedule(scope, JOBS.periodEnd, sub.id, end)
  const result = await chargeRenewal(tx, scope, next, billing, invoice, 0)
  // A paid renewal still moved the period (and may end a trial): the merchant hears of the change.
  if (result.status === next.status) await saveSubscription(tx, scope, next)
  else await saveSubscription(tx, scope, {...next, status: result.status})
}

/**
 * Charges an open invoice at dunning step `step` (0 = the renewal itself). Paid: `invoice.paid`; the
 * subscription is active again if no other invoice is in dunning. Failed: `invoice.payment_failed` at
 * this stage and the next retry scheduled; after the final stage the subscription is `unpaid`.
 */
async function chargeRenewal(tx: Tx, scope: Scope, sub: Subscription, billing: BillingDoc, invoice: Invoice, step: number): Promise<{status: Subscription['status']}> {
  const customer = await tx.get('customer', scope, sub.customer)
  const outcome = billing.renewals === 'succeed' ? 'paid' : 'declined'
  const {invoice: charged, payment} = await attemptCharge(tx, scope, invoice, customer, outcome, billing.card)
  if (outcome === 'paid') {
    await tx.emit(scope, 'payment.succeeded', paymentView(payment))
    await emitPaid(tx, scope, charged)
    return {status: await inDunning(tx, scope, sub, charged.id) ? 'past_due' : 'active'}
  }
  const stage = DUNNING[step]
  const retry = DUNNING[step + 1]
  const failed: Invoice = {...charged, dunning_stage: stage.stage, next_payment_attempt: retry ? invoice.created + retry.after : null}
  await tx.save(failed)
  await tx.emit(scope, 'payment.failed', paymentView(payment))
  await tx.emit(scope, 'invoice.payment_failed', failed)
  if (retry) {
    await tx.schedule(scope, JOBS.retryInvoice, invoice.id, failed.next_payment_attempt!)
    return {status: 'past_due'}
  }
  // Retries exhausted: frozen, no further periods or retries.
  await tx.cancelJobs(sub.id)
  for (const other of await tx.all('invoice', scope, sub.id)) await tx.cancelJobs(other.id)
  return {status: 'unpaid'}
}

/** Whether another invoice of the subscription than `except` still awaits a dunning retry. */
async function inDunning(tx: Tx, scope: Scope, sub: Subscription, except: string): Promise<boolean> {
  return (await tx.all('invoice', scope, sub.id)).some((i) => i.id !== except && i.status === 'open' && i.next_payment_attempt !== null)
}

async function retryInvoice(tx: Tx, scope: Scope, job: Job) {
  const invoice = await tx.get('invoice', scope, job.ref)
  if (!invoice || invoice.status !== 'open' || invoice.next_payment_attempt !== job.due || !invoice.subscription) return
  const sub = await tx.get('subscription', scope, invoice.subscription)
  if (sub?.status !== 'past_due') return
  const step = DUNNING.findIndex((d) => d.stage === invoice.dunning_stage) + 1
  const result = await chargeRenewal(tx, scope, sub, await getBilling(tx, scope, sub), invoice, step)
  if (result.status !== sub.status) await saveSubscription(tx, scope, {...sub, status: result.status})
}

/** The scheduler handlers of this module, by job kind. */
export function subscriptionJobs(): Record<string, (tx: Tx, job: Job) => Promise<void>> {
  const scoped = (fn: (tx: Tx, scope: Scope, job: Job) => Promise<unknown>) => async (tx: Tx, job: Job) => {
    await fn(tx, {merchant: job.merchant, env: job.env}, job)
  }
  return {
    [JOBS.expireIncomplete]: scoped(expireIncomplete),
    [JOBS.trialReminder]: scoped(trialReminder),
    [JOBS.periodEnd]: scoped(periodEndJob),
    [JOBS.retryInvoice]: scoped(retryInvoice),
  }
}

// ---------------------------------------------------------------- fixtures (admin helper, seeder)

type FixtureInput = z.output<typeof admin.adminSubscriptionCreate>

/**
 * The admin helper's subscription: a price's plan, or a bare amount and interval; moved to `status`
 * through the real transitions where there are some (confirm for trialing and active), set directly for
 * the states only time reaches. `trial_days` needs `trialing` (default 14 days).
 */
export async function subscriptionFixture(tx: Tx, scope: Scope, input: FixtureInput): Promise<Subscription> {
  if (input.trial_days !== undefined && input.status !== 'trialing') throw invalid('parameter_invalid', 'trial_days needs status trialing', 'trial_days')
  const plan: Plan =
    input.price_id === undefined
      ? {price_id: null, unit_amount: input.amount ?? 1500, currency: input.currency ?? 'eur', interval: input.interval, interval_count: 1, trial_period_days: null}
      : await planOfPrice(tx, scope, input.price_id)
  if (input.price_id !== undefined && input.amount !== undefined && input.amount !== plan.unit_amount) throw invalid('amount_mismatch', 'amount differs from the price', 'amount')
  if (input.price_id !== undefined && input.currency !== undefined && input.currency !== plan.currency) throw invalid('currency_mismatch', 'currency differs from the price', 'currency')
  const sub = await createSubscription(tx, scope, {
    plan: {...plan, trial_period_days: null},
    quantity: input.quantity,
    customer_name: input.customer_name,
    customer_email: input.customer_email,
    trial_days: input.status === 'trialing' ? (input.trial_days ?? 14) : undefined,
  })
  if (input.status === 'incomplete') return sub
  if (input.status === 'trialing' || input.status === 'active') return (await confirmSubscription(tx, scope, sub.id, {outcome: 'paid'})).subscription
  if (input.status === 'canceled') return cancelSubscription(tx, scope, sub.id, false)
  await tx.cancelJobs(sub.id)
  if (input.status === 'past_due') await tx.schedule(scope, JOBS.periodEnd, sub.id, sub.current_period_end)
  return saveSubscription(tx, scope, {...sub, status: input.status})
}

/** A page of subscriptions as stored (the App API); the merchant API shows each through `subscriptionView`. */
export const listSubscriptions = async (tx: Tx, scope: Scope, page: {limit: number; offset: number}) => await tx.pageRaw('subscription', scope, page)

/** A subscription's pending work on the clock (its own and its invoices' retries), soonest first. */
export async function subscriptionSchedule(tx: Tx, scope: Scope, id: string) {
  const invoices = (await tx.all('invoice', scope, id)).map((i) => i.id)
  const data = (await tx.pendingJobs([id, ...invoices])).map((j) => ({object: 'scheduled_job' as const, kind: j.kind, ref: j.ref, due: j.due}))
  return {object: 'list' as const, has_more: false, data}
}
