/**
 * App API reads of the merchant's account and money (spec: App API, read endpoints): the merchant
 * profile, payouts and balance, invoices (live only), subscriptions and the analytics summary. Every
 * figure is computed from the stored documents of the token's merchant and environment.
 */
import type {Balance, Invoice, Payout, Subscription} from '../../sdk/schemas/commerce.js'
import {rawList, type Handlers} from '../app.js'
import type {Scope} from '../db.js'
import {notFound} from '../errors.js'
import type {PaymentDoc} from '../models.js'
import type {Platform} from '../platform.js'

const DAY = 86_400
/** A payment counts as pending for this long before it joins the available balance (spec: not shown). */
export const SETTLEMENT_SECONDS = 2 * DAY
/** How long a subscription's first payment may stay unconfirmed (spec: States). */
const FIRST_PAYMENT_SECONDS = 23 * 3600

/** Payments whose money reached the merchant; processing, pending and failed ones never did. */
const CAPTURED = new Set<PaymentDoc['status']>(['succeeded', 'partially_refunded', 'refunded', 'disputed'])
/** Payouts whose amount has left the balance; a failed payout returns it. */
const PAID_OUT = new Set<Payout['status']>(['pending', 'in_transit', 'paid'])

export const accountHandlers: Partial<Handlers> = {
  'merchant.retrieve'({gw, scope}) {
    const m = gw.merchant(scope.merchant)
    if (!m) throw notFound('merchant', scope.merchant)
    return {id: m.id, object: 'merchant', livemode: scope.env === 'live', company: m.company, country: m.country, vat_number: m.vat_number, status: m.status, created: m.created}
  },

  'payouts.list'({gw, scope, query}) {
    const {rows, hasMore} = gw.storage.pageRaw('payout', scope, query.limit, query.offset)
    return rawList(rows, hasMore)
  },

  'balance.retrieve'({gw, scope}): Balance {
    const settledBy = gw.now() - SETTLEMENT_SECONDS
    const available = new Map<string, number>()
    const pending = new Map<string, number>()
    for (const p of gw.storage.all<PaymentDoc>('payment', scope)) {
      if (CAPTURED.has(p.status)) add(p.created > settledBy ? pending : available, p.currency, netOfPayment(p))
    }
    for (const payout of gw.storage.all<Payout>('payout', scope)) {
      if (PAID_OUT.has(payout.status)) add(available, payout.currency, -payout.amount)
    }
    const currencies = [...new Set([...available.keys(), ...pending.keys()])].sort()
    const amounts = (sums: Map<string, number>) => currencies.map((currency) => ({amount: sums.get(currency) ?? 0, currency}))
    return {object: 'balance', livemode: scope.env === 'live', available: amounts(available), pending: amounts(pending)}
  },

  // Invoices exist in live only: the sandbox lists none rather than refusing the token.
  'invoices.list'({gw, scope, query}) {
    if (scope.env !== 'live') return rawList([], false)
    const {rows, hasMore} = gw.storage.pageRaw('invoice', scope, query.limit, query.offset)
    return rawList(rows, hasMore)
  },

  'invoices.retrieve'({gw, scope, params}) {
    const invoice = scope.env === 'live' ? gw.storage.get<Invoice>('invoice', scope, params.id) : undefined
    if (!invoice) throw notFound('invoice', params.id)
    return invoice
  },

  'subscriptions.list'({gw, scope, query}) {
    settleSubscriptions(gw, scope)
    const {rows, hasMore} = gw.storage.pageRaw('subscription', scope, query.limit, query.offset)
    return rawList(rows, hasMore)
  },

  'analytics.summary'({gw, scope, query}) {
    const until = gw.now()
    const since = until - query.days * DAY
    const totals = new Map<string, {gross: number; refunded: number; disputed: number; payments: number; refunds: number}>()
    for (const p of gw.storage.all<PaymentDoc>('payment', scope)) {
      if (!CAPTURED.has(p.status) || p.created < since || p.created > until) continue
      let t = totals.get(p.currency)
      if (!t) totals.set(p.currency, (t = {gross: 0, refunded: 0, disputed: 0, payments: 0, refunds: 0}))
      t.gross += p.amount
      t.payments += 1
      if (p.amount_refunded > 0) {
        t.refunded += p.amount_refunded
        t.refunds += 1
      }
      if (p.status === 'disputed') t.disputed += p.amount - p.amount_refunded
    }
    const currencies = [...totals.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([currency, t]) => ({
        currency,
        gross_volume: t.gross,
        refunded_volume: t.refunded,
        net_volume: t.gross - t.refunded - t.disputed,
        payment_count: t.payments,
        refund_count: t.refunds,
        average_payment: Math.round(t.gross / t.payments),
      }))
    return {object: 'analytics_summary', livemode: scope.env === 'live', days: query.days, since, until, currencies}
  },
}

/** What a captured payment leaves in the balance, in its own currency. */
function netOfPayment(p: PaymentDoc): number {
  // A disputed payment's unrefunded amount is withheld while the dispute runs.
  const kept = p.status === 'disputed' ? 0 : p.amount - p.amount_refunded
  return kept - p.fee.service_fee_charge_currency
}

function add(sums: Map<string, number>, currency: string, amount: number) {
  sums.set(currency, (sums.get(currency) ?? 0) + amount)
}

/**
 * Applies the subscription moves that time makes (spec: States): a cancel at period end takes effect
 * once `current_period_end` passes, and a first payment unconfirmed for 23 hours expires the subscription.
 */
export function settleSubscriptions(gw: Platform, scope: Scope): void {
  const now = gw.now()
  gw.storage.transaction(() => {
    for (const sub of gw.storage.all<Subscription>('subscription', scope)) {
      if (sub.cancel_at_period_end && sub.status !== 'canceled' && sub.status !== 'incomplete_expired' && now >= sub.current_period_end) {
        gw.emit(scope, 'subscription.deleted', gw.storage.save({...sub, status: 'canceled'}))
      } else if (sub.status === 'incomplete' && now >= sub.created + FIRST_PAYMENT_SECONDS) {
        gw.emit(scope, 'subscription.updated', gw.storage.save({...sub, status: 'incomplete_expired'}))
      }
    }
  })
}
