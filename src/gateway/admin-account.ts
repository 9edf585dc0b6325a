/**
 * Admin helpers for the account resources that no API key or app can create (spec: payouts are not
 * reachable; invoices and subscriptions are the platform's): payouts, invoices (live only) and
 * subscriptions with their cancel. The seeder builds its sample data with the same functions.
 */
import type {z} from 'zod'

import * as admin from '../sdk/schemas/admin.js'
import type {Price} from '../sdk/schemas/catalog.js'
import type {Invoice, Payout, Subscription} from '../sdk/schemas/commerce.js'
import {adminBody, requireMerchant, type AdminRouteDef} from './admin.js'
import type {Scope} from './db.js'
import {findAnywhere} from './checkout.js'
import {conflict, invalid, notFound} from './errors.js'
import {newId} from './ids.js'
import type {Platform} from './platform.js'
import {settleSubscriptions} from './routes/account.js'

const DAY = 86_400
/** A payout not yet paid is expected on the bank account this long after it is created (spec: not shown). */
const PAYOUT_TRANSIT_SECONDS = 2 * DAY
/** The trial of a trialing subscription created without `trial_days` (spec: not shown). */
const DEFAULT_TRIAL_DAYS = 14

type Interval = 'day' | 'week' | 'month' | 'year'

// ---------------------------------------------------------------- payouts

export function createPayout(gw: Platform, scope: Scope, input: {amount: number; currency: string; status: Payout['status']}, created = gw.now()): Payout {
  const settled = input.status === 'paid' || input.status === 'failed'
  const payout: Payout = {
    id: newId('po', 24),
    object: 'payout',
    livemode: scope.env === 'live',
    amount: input.amount,
    currency: input.currency,
    status: input.status,
    arrival_date: settled ? created : created + PAYOUT_TRANSIT_SECONDS,
    created,
  }
  gw.storage.insert('payout', scope, payout, {created})
  gw.emit(scope, 'payout.created', payout)
  if (settled) gw.emit(scope, `payout.${input.status}`, payout)
  return payout
}

// ---------------------------------------------------------------- invoices

export interface InvoiceInput {
  subscription: Subscription | null
  customer: string | null
  amount: number
  currency: string
  status: Invoice['status']
  period_start: number
  period_end: number
}

function requireLive(scope: Scope): Scope {
  if (scope.env !== 'live') throw invalid('livemode_required', 'Invoices exist in live only; the sandbox has none', 'env')
  return scope
}

/** Issues an invoice (live only, as the spec says) and makes it its subscription's latest invoice. */
export function createInvoice(gw: Platform, scope: Scope, input: InvoiceInput): Invoice {
  requireLive(scope)
  const now = gw.now()
  const invoice: Invoice = {
    id: newId('in', 24),
    object: 'invoice',
    livemode: true,
    subscription: input.subscription?.id ?? null,
    customer: input.customer,
    amount_due: input.amount,
    amount_paid: input.status === 'paid' ? input.amount : 0,
    currency: input.currency,
    status: input.status,
    period_start: input.period_start,
    period_end: input.period_end,
    created: now,
  }
  gw.storage.insert('invoice', scope, invoice, {parent: invoice.subscription, created: now})
  if (input.subscription) gw.storage.save({...input.subscription, latest_invoice: invoice.id})
  gw.emit(scope, 'invoice.created', invoice)
  if (invoice.status === 'paid') {
    gw.emit(scope, 'invoice.paid', invoice)
    gw.emit(scope, 'invoice.payment_succeeded', invoice)
  }
  return invoice
}

// ---------------------------------------------------------------- subscriptions

type SubscriptionInput = z.output<typeof admin.adminSubscriptionCreate>

/**
 * Creates a subscription already moved to `status`, with its customer and, when active in live, its
 * paid first invoice. Events follow the spec's lifecycle: `subscription.created` as `incomplete`, then
 * `subscription.updated` (and `invoice.paid`) for the confirmed state.
 */
export function createSubscription(gw: Platform, scope: Scope, input: SubscriptionInput): Subscription {
  const now = gw.now()
  const plan = billingPlan(gw, scope, input)
  if (input.trial_days !== undefined && input.status !== 'trialing') {
    throw invalid('parameter_invalid', 'trial_days needs status trialing', 'trial_days')
  }
  const trialEnd = input.status === 'trialing' ? now + (input.trial_days ?? DEFAULT_TRIAL_DAYS) * DAY : null

  const customer = {id: newId('cus', 14), object: 'customer', livemode: scope.env === 'live', name: input.customer_name, email: input.customer_email, created: now}
  gw.storage.insert('customer', scope, customer, {created: now})

  const sub: Subscription = {
    id: newId('sub', 24),
    object: 'subscription',
    livemode: scope.env === 'live',
    status: 'incomplete',
    customer: customer.id,
    price_id: plan.price_id,
    quantity: input.quantity,
    currency: plan.currency,
    amount: plan.unit_amount * input.quantity,
    current_period_start: now,
    current_period_end: trialEnd ?? addInterval(now, plan.interval, plan.interval_count),
    latest_invoice: null,
    intent_type: trialEnd === null ? 'payment' : 'setup',
    trial_end: trialEnd,
    cancel_at_period_end: false,
    created: now,
  }
  gw.storage.insert('subscription', scope, sub, {created: now})
  gw.emit(scope, 'subscription.created', sub)
  if (input.status === 'incomplete') return sub

  let confirmed: Subscription = gw.storage.save({...sub, status: input.status})
  if (input.status === 'active' && scope.env === 'live') {
    const invoice = createInvoice(gw, scope, {
      subscription: confirmed,
      customer: sub.customer,
      amount: sub.amount,
      currency: sub.currency,
      status: 'paid',
      period_start: sub.current_period_start,
      period_end: sub.current_period_end,
    })
    confirmed = {...confirmed, latest_invoice: invoice.id}
  }
  gw.emit(scope, input.status === 'canceled' ? 'subscription.deleted' : 'subscription.updated', confirmed)
  return confirmed
}

/** Amount and recurrence: the recurring price's when `price_id` is given, otherwise the body's. */
function billingPlan(gw: Platform, scope: Scope, input: SubscriptionInput) {
  if (input.price_id === undefined) {
    return {price_id: null, unit_amount: input.amount ?? 1500, currency: input.currency ?? 'eur', interval: input.interval, interval_count: 1}
  }
  const price = gw.storage.get<Price>('price', scope, input.price_id)
  if (!price) throw notFound('price', input.price_id, 'price_not_found', 'price_id')
  if (price.type !== 'recurring' || !price.recurring) throw invalid('price_not_recurring', 'A subscription needs a recurring price', 'price_id')
  if (input.amount !== undefined && input.amount !== price.unit_amount) throw invalid('amount_mismatch', 'amount differs from the price', 'amount')
  if (input.currency !== undefined && input.currency !== price.currency) throw invalid('currency_mismatch', 'currency differs from the price', 'currency')
  return {
    price_id: price.id,
    unit_amount: price.unit_amount,
    currency: price.currency,
    interval: price.recurring.interval as Interval,
    interval_count: price.recurring.interval_count,
  }
}

/** Unix seconds `count` intervals after `t`, by the calendar (a month from 31 January is 3 March, as Date does). */
function addInterval(t: number, interval: Interval, count: number): number {
  const d = new Date(t * 1000)
  if (interval === 'day') d.setUTCDate(d.getUTCDate() + count)
  if (interval === 'week') d.setUTCDate(d.getUTCDate() + 7 * count)
  if (interval === 'month') d.setUTCMonth(d.getUTCMonth() + count)
  if (interval === 'year') d.setUTCFullYear(d.getUTCFullYear() + count)
  return Math.floor(d.getTime() / 1000)
}

/** Cancels now (`subscription.deleted`) or at period end (`subscription.updated`); a second cancel is a 409. */
export function cancelSubscription(gw: Platform, scope: Scope, id: string, atPeriodEnd: boolean): Subscription {
  settleSubscriptions(gw, scope)
  const sub = gw.storage.get<Subscription>('subscription', scope, id)
  if (!sub) throw notFound('subscription', id, 'subscription_not_found')
  if (sub.status === 'canceled' || sub.status === 'incomplete_expired') {
    throw conflict('subscription_already_canceled', `Subscription ${id} has already ended (${sub.status})`)
  }
  if (atPeriodEnd) {
    if (sub.cancel_at_period_end) return sub
    const scheduled = gw.storage.save({...sub, cancel_at_period_end: true})
    gw.emit(scope, 'subscription.updated', scheduled)
    return scheduled
  }
  const canceled = gw.storage.save({...sub, status: 'canceled'})
  gw.emit(scope, 'subscription.deleted', canceled)
  return canceled
}

// ---------------------------------------------------------------- admin routes

/** The merchant and environment an admin body names, checked to exist. */
function scopeOf(gw: Platform, body: {merchant: string; env: Scope['env']}): Scope {
  requireMerchant(gw, body.merchant)
  return {merchant: body.merchant, env: body.env}
}

export const adminAccountRoutes: AdminRouteDef[] = [
  [
    'POST',
    '/payouts',
    (request, gw) => {
      const body = adminBody(admin.adminPayoutCreate, request)
      return createPayout(gw, scopeOf(gw, body), body)
    },
    201,
  ],
  [
    'POST',
    '/invoices',
    (request, gw) => {
      const body = adminBody(admin.adminInvoiceCreate, request)
      const scope = requireLive(scopeOf(gw, body))
      const sub = body.subscription === undefined ? null : (gw.storage.get<Subscription>('subscription', scope, body.subscription) ?? null)
      if (body.subscription !== undefined && !sub) throw notFound('subscription', body.subscription, 'subscription_not_found', 'subscription')
      if (sub && body.currency !== undefined && body.currency !== sub.currency) throw invalid('currency_mismatch', 'currency differs from the subscription', 'currency')
      const amount = body.amount ?? sub?.amount
      if (amount === undefined) throw invalid('parameter_missing', 'Missing required parameter: amount (or send subscription)', 'amount')
      const now = gw.now()
      return createInvoice(gw, scope, {
        subscription: sub,
        customer: sub?.customer ?? null,
        amount,
        currency: body.currency ?? sub?.currency ?? 'eur',
        status: body.status,
        period_start: sub?.current_period_start ?? now,
        period_end: sub?.current_period_end ?? now,
      })
    },
    201,
  ],
  [
    'POST',
    '/subscriptions',
    (request, gw) => {
      const body = adminBody(admin.adminSubscriptionCreate, request)
      return createSubscription(gw, scopeOf(gw, body), body)
    },
    201,
  ],
  [
    'POST',
    '/subscriptions/:id/cancel',
    (request, gw) => {
      const {id} = request.params as {id: string}
      const body = adminBody(admin.adminSubscriptionCancel, request)
      const found = findAnywhere<Subscription>(gw, 'subscription', id)
      if (!found) throw notFound('subscription', id, 'subscription_not_found')
      return cancelSubscription(gw, found.scope, id, body.at_period_end)
    },
  ],
]
