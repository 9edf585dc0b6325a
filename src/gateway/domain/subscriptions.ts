/**
 * Subscriptions (spec: Subscription, States). Created by the platform (here the admin API and the seed)
 * already moved to a status, with their customer. Rules:
 * - amount and recurrence come from a recurring price when `price_id` is given (a sent amount or
 *   currency must match it), else from the body; `trial_days` needs status `trialing`;
 * - events follow the lifecycle: `subscription.created` as `incomplete`, then `subscription.updated`
 *   (or `.deleted` for canceled) for the confirmed state; an active live one gets its paid first invoice;
 * - time moves them (`settleSubscriptions`, run before they are read or changed): a cancel at period end
 *   takes effect once the period ends; a first payment unconfirmed for 23 hours expires the subscription;
 * - cancel now (`subscription.deleted`) or at period end (`subscription.updated`); a second cancel of an
 *   ended subscription is 409 `subscription_already_canceled`.
 */
import type {z} from 'zod'

import type * as admin from '../../sdk/schemas/admin.js'
import {conflict, invalid, notFound} from '../errors.js'
import {newId} from '../ids.js'
import type {Platform} from '../platform.js'
import type {CustomerDoc, Scope, SubscriptionDoc} from '../storage/documents.js'
import type {RawPage} from '../storage/storage.js'
import {createInvoice} from './invoices.js'
import {stamp} from './shared.js'

const DAY = 86_400
/** The trial of a trialing subscription created without `trial_days` (spec: not shown). */
const DEFAULT_TRIAL_DAYS = 14
/** How long a subscription's first payment may stay unconfirmed (spec: States). */
const FIRST_PAYMENT_SECONDS = 23 * 3600

type Interval = 'day' | 'week' | 'month' | 'year'
type SubscriptionInput = z.output<typeof admin.adminSubscriptionCreate>

/**
 * Applies the subscription moves that time makes (spec: States): a cancel at period end takes effect
 * once `current_period_end` passes, and a first payment unconfirmed for 23 hours expires the subscription.
 */
export function settleSubscriptions(gw: Platform, scope: Scope): void {
  const now = gw.now()
  gw.storage.transaction(() => {
    for (const sub of gw.storage.all('subscription', scope)) {
      if (sub.cancel_at_period_end && sub.status !== 'canceled' && sub.status !== 'incomplete_expired' && now >= sub.current_period_end) {
        gw.emit(scope, 'subscription.deleted', gw.storage.save({...sub, status: 'canceled'}))
      } else if (sub.status === 'incomplete' && now >= sub.created + FIRST_PAYMENT_SECONDS) {
        gw.emit(scope, 'subscription.updated', gw.storage.save({...sub, status: 'incomplete_expired'}))
      }
    }
  })
}

export function listSubscriptions(gw: Platform, scope: Scope, page: {limit: number; offset: number}): RawPage {
  settleSubscriptions(gw, scope)
  return gw.storage.pageRaw('subscription', scope, page)
}

/** Creates a subscription already moved to `status`, with its customer and, when active in live, its paid first invoice. */
export function createSubscription(gw: Platform, scope: Scope, input: SubscriptionInput): SubscriptionDoc {
  const now = gw.now()
  const plan = billingPlan(gw, scope, input)
  if (input.trial_days !== undefined && input.status !== 'trialing') {
    throw invalid('parameter_invalid', 'trial_days needs status trialing', 'trial_days')
  }
  const trialEnd = input.status === 'trialing' ? now + (input.trial_days ?? DEFAULT_TRIAL_DAYS) * DAY : null

  const customer: CustomerDoc = {...stamp(gw, scope, 'customer', newId('cus', 14), now), name: input.customer_name, email: input.customer_email}
  gw.storage.insert('customer', scope, customer, {created: now})

  const sub: SubscriptionDoc = {
    ...stamp(gw, scope, 'subscription', newId('sub', 24), now),
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
  }
  gw.storage.insert('subscription', scope, sub, {created: now})
  gw.emit(scope, 'subscription.created', sub)
  if (input.status === 'incomplete') return sub

  let confirmed: SubscriptionDoc = gw.storage.save({...sub, status: input.status})
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
  const price = gw.storage.get('price', scope, input.price_id)
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
export function cancelSubscription(gw: Platform, scope: Scope, id: string, atPeriodEnd: boolean): SubscriptionDoc {
  settleSubscriptions(gw, scope)
  const sub = gw.storage.get('subscription', scope, id)
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
