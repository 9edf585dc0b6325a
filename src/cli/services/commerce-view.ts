/**
 * Human views of the account and commerce resources: which columns matter in a table, and the fields
 * of one object as a key/value block. Live and sandbox payments have different shapes; each column
 * reads both, so one table serves either environment.
 */
import type {Customer, FraudWarning} from '@payapp/sdk/schemas/billing'
import type {
  AnalyticsSummary,
  Balance,
  CheckoutSession,
  RefundRecord,
  Dispute,
  Invoice,
  LivePayment,
  Merchant,
  Order,
  Payment,
  Payout,
  SandboxPayment,
  SandboxRefund,
  StoreCheckout,
  Subscription,
  SubscriptionLink,
} from '@payapp/sdk/schemas/commerce'
import {type Column, date, money, table} from '../output.js'
import {block} from './catalog-view.js'

const isLive = (p: Payment): p is LivePayment => p.livemode === true
/** The non-empty values, space-separated. */
const words = (...values: Array<string | null | undefined>) => values.filter(Boolean).join(' ')
const mode = (livemode: boolean | undefined) => (livemode ? 'live' : 'test')

// ---------------------------------------------------------------- merchant, balance

export function merchantDetails(m: Merchant): string {
  return block([
    ['ID', m.id],
    ['Company', m.company],
    ['Country', m.country],
    ['VAT number', m.vat_number],
    ['Status', m.status],
    ['Mode', mode(m.livemode)],
    ['Created', date(m.created)],
  ])
}

/** One row per currency, available and pending side by side. */
export function balanceRows(b: Balance): Array<{currency: string; available: string; pending: string}> {
  const currencies = [...new Set([...b.available, ...b.pending].map((m) => m.currency))]
  const sum = (list: Balance['available'], currency: string) => list.filter((m) => m.currency === currency).reduce((a, m) => a + m.amount, 0)
  return currencies.map((currency) => ({
    currency: currency.toUpperCase(),
    available: money(sum(b.available, currency), currency),
    pending: money(sum(b.pending, currency), currency),
  }))
}
export const balanceColumns: Column<ReturnType<typeof balanceRows>[number]>[] = [
  {key: 'currency'},
  {key: 'available', align: 'right'},
  {key: 'pending', align: 'right'},
]

// ---------------------------------------------------------------- payments and refunds

const paymentMethod = (p: Payment) =>
  isLive(p) ? (p.payment_method_type ?? '') : p.card ? `${p.card.brand} •••• ${p.card.last4}` : p.payment_method

const paymentCustomer = (p: Payment) => (isLive(p) ? words(p.customer_name, p.customer_email ? `<${p.customer_email}>` : '') : words(p.customer?.name, p.customer?.email ? `<${p.customer.email}>` : ''))

export const paymentColumns: Column<Payment>[] = [
  {key: 'id'},
  {key: 'amount', align: 'right', get: (p) => money(p.amount, p.currency)},
  {key: 'refunded', align: 'right', get: (p) => (p.amount_refunded ? money(p.amount_refunded, p.currency) : '')},
  {key: 'status'},
  {key: 'method', get: paymentMethod},
  {key: 'customer', get: paymentCustomer},
  {key: 'created', get: (p) => date(p.created)},
]

export function paymentDetails(p: Payment): string {
  const common: Array<[string, unknown]> = [
    ['ID', p.id],
    ['Status', p.status],
    ['Amount', money(p.amount, p.currency)],
    ['Refunded', money(p.amount_refunded, p.currency)],
    ['Customer', paymentCustomer(p)],
    ['Method', paymentMethod(p)],
  ]
  if (isLive(p)) {
    return block([
      ...common,
      ['Mode', 'live'],
      ['Charge', p.charge],
      ['Payment intent', p.payment_intent],
      ['Checkout session', p.checkout_session],
      ['Application fee', p.application_fee_amount === null ? null : money(p.application_fee_amount, p.currency)],
      ['Description', p.description],
      ['Reference', p.reference],
      ['Source', p.source],
      ['Created', date(p.created)],
      ['Succeeded', date(p.succeeded_at)],
    ])
  }
  const s = p as SandboxPayment
  return block([
    ...common,
    ['Mode', 'test'],
    ['Checkout session', s.session_id],
    ['Invoice', s.invoice_id],
    ['Service fee', s.fee ? money(s.fee.service_fee_charge_currency, s.currency) : null],
    ['Failure', words(s.failure_code, s.failure_message ? `(${s.failure_message})` : '')],
    ['Reference', s.reference],
    ['Created', date(s.created)],
  ])
}

/** Sandbox refund rows, or (live) the refunded charges with their running `amount_refunded`. */
type RefundRow = SandboxRefund | RefundRecord | LivePayment
const isRefundRow = (r: RefundRow): r is SandboxRefund | RefundRecord => r.object === 'refund'
export const refundColumns: Column<RefundRow>[] = [
  {key: 'id'},
  {key: 'payment', get: (r) => (isRefundRow(r) ? r.payment : r.id)},
  {key: 'amount', header: 'REFUNDED', align: 'right', get: (r) => money(isRefundRow(r) ? r.amount : r.amount_refunded, r.currency)},
  {key: 'status'},
  {key: 'reason', get: (r) => (isRefundRow(r) ? r.reason : '')},
  {key: 'created', get: (r) => date(r.created)},
]

// ---------------------------------------------------------------- disputes, payouts

export const disputeColumns: Column<Dispute>[] = [
  {key: 'id'},
  {key: 'payment'},
  {key: 'amount', align: 'right', get: (d) => money(d.amount, d.currency)},
  {key: 'reason'},
  {key: 'status'},
  {key: 'evidence_due_by', header: 'EVIDENCE DUE', get: (d) => `${date(d.evidence_due_by)}${d.past_due ? ' (past due)' : ''}`},
  {key: 'created', get: (d) => date(d.created)},
]

export const payoutColumns: Column<Payout>[] = [
  {key: 'id'},
  {key: 'amount', align: 'right', get: (p) => money(p.amount, p.currency)},
  {key: 'status'},
  {key: 'arrival_date', header: 'ARRIVAL', get: (p) => date(p.arrival_date)},
  {key: 'created', get: (p) => date(p.created)},
]

// ---------------------------------------------------------------- invoices, subscriptions

export const invoiceColumns: Column<Invoice>[] = [
  {key: 'id'},
  {key: 'status'},
  {key: 'amount_due', header: 'DUE', align: 'right', get: (i) => money(i.amount_due, i.currency)},
  {key: 'amount_paid', header: 'PAID', align: 'right', get: (i) => money(i.amount_paid, i.currency)},
  {key: 'customer'},
  {key: 'subscription'},
  {key: 'created', get: (i) => date(i.created)},
]

export function invoiceDetails(i: Invoice): string {
  return block([
    ['ID', i.id],
    ['Status', i.status],
    ['Amount due', money(i.amount_due, i.currency)],
    ['Amount paid', money(i.amount_paid, i.currency)],
    ['Customer', i.customer],
    ['Subscription', i.subscription],
    ['Period', `${date(i.period_start)} – ${date(i.period_end)}`],
    ['Mode', mode(i.livemode)],
    ['Created', date(i.created)],
  ])
}

export const subscriptionColumns: Column<Subscription>[] = [
  {key: 'id'},
  {key: 'customer'},
  {key: 'status'},
  {key: 'amount', align: 'right', get: (s) => money(s.amount, s.currency)},
  {key: 'quantity', header: 'QTY', align: 'right'},
  {key: 'current_period_end', header: 'PERIOD END', get: (s) => `${date(s.current_period_end)}${s.cancel_at_period_end ? ' (cancels)' : ''}`},
  {key: 'trial_end', header: 'TRIAL END', get: (s) => date(s.trial_end)},
  {key: 'created', get: (s) => date(s.created)},
]

// ---------------------------------------------------------------- analytics

export const analyticsColumns: Column<AnalyticsSummary['currencies'][number]>[] = [
  {key: 'currency', get: (c) => c.currency.toUpperCase()},
  {key: 'gross_volume', header: 'GROSS', align: 'right', get: (c) => money(c.gross_volume, c.currency)},
  {key: 'refunded_volume', header: 'REFUNDED', align: 'right', get: (c) => money(c.refunded_volume, c.currency)},
  {key: 'net_volume', header: 'NET', align: 'right', get: (c) => money(c.net_volume, c.currency)},
  {key: 'payment_count', header: 'PAYMENTS', align: 'right'},
  {key: 'refund_count', header: 'REFUNDS', align: 'right'},
  {key: 'average_payment', header: 'AVERAGE', align: 'right', get: (c) => money(c.average_payment, c.currency)},
]

export const analyticsHeading = (a: AnalyticsSummary) => `Last ${a.days} days (${date(a.since)} – ${date(a.until)}), ${mode(a.livemode)}`

// ---------------------------------------------------------------- orders

const orderCustomer = (o: Order) => words(o.customer?.name, o.customer?.email ? `<${o.customer.email}>` : '')

export const orderColumns: Column<Order>[] = [
  {key: 'id'},
  {key: 'status'},
  {key: 'item', get: (o) => `${o.quantity} × ${o.name}${o.sku ? ` (${o.sku})` : ''}`},
  {key: 'amount', align: 'right', get: (o) => money(o.amount, o.currency)},
  {key: 'customer', get: orderCustomer},
  {key: 'evidence', align: 'right', get: (o) => o.evidence.length},
  {key: 'created', get: (o) => date(o.created)},
]

export const evidenceColumns: Column<Order['evidence'][number]>[] = [
  {key: 'id'},
  {key: 'type'},
  // Every part the evidence has: a note may come with a tracking number or a file.
  {key: 'detail', get: (e) => [e.carrier, e.tracking_number, e.file, e.note && `"${e.note}"`].filter(Boolean).join(' ')},
  {key: 'created', get: (e) => date(e.created)},
]

export function orderDetails(o: Order): string {
  return block([
    ['ID', o.id],
    ['Status', o.status],
    ['Item', `${o.quantity} × ${o.name}`],
    ['Product', o.product_id],
    ['Variant', o.variant_id],
    ['SKU', o.sku],
    ['Amount', money(o.amount, o.currency)],
    ['Customer', orderCustomer(o)],
    ['Payment', o.payment],
    ['Checkout session', o.checkout_session],
    ['Mode', `${mode(o.livemode)}${o.fixture ? ' (fixture)' : ''}`],
    ['Created', date(o.created)],
    ['Shipped', date(o.shipped_at)],
    ['Completed', date(o.completed_at)],
    ['Canceled', date(o.canceled_at)],
  ])
}

/** An order's fields, then its delivery evidence: what every orders command that answers with an order shows. */
export const orderView = (o: Order) => orderDetails(o) + (o.evidence.length ? `\n\nEvidence\n${table(o.evidence, evidenceColumns)}` : '')

// ---------------------------------------------------------------- subscription links, checkouts

const every = (l: SubscriptionLink) => (l.interval_count === 1 ? `/ ${l.interval}` : `/ ${l.interval_count} ${l.interval}s`)

export const subscriptionLinkColumns: Column<SubscriptionLink>[] = [
  {key: 'id'},
  {key: 'name'},
  {key: 'price', align: 'right', get: (l) => `${money(l.amount, l.currency)} ${every(l)}`},
  {key: 'trial', get: (l) => (l.trial_period_days ? `${l.trial_period_days} days` : '')},
  {key: 'active', get: (l) => (l.archived_at ? 'archived' : l.active ? 'yes' : 'no')},
  {key: 'url'},
  {key: 'created', get: (l) => date(l.created)},
]

export function subscriptionLinkDetails(l: SubscriptionLink): string {
  return block([
    ['ID', l.id],
    ['Name', l.name],
    ['Description', l.description],
    ['Price', `${money(l.amount, l.currency)} ${every(l)}`],
    ['Trial', l.trial_period_days ? `${l.trial_period_days} days` : null],
    ['Active', l.active ? 'yes' : 'no'],
    ['Archived', date(l.archived_at)],
    ['URL', l.url],
    ['Metadata', Object.entries(l.metadata ?? {}).map(([k, v]) => `${k}=${v}`).join(', ')],
    ['Created', date(l.created)],
    ['Updated', date(l.updated)],
  ])
}

export function storeCheckoutDetails(c: StoreCheckout): string {
  return block([
    ['Session', c.session_id],
    ['Amount', money(c.amount, c.currency)],
    ['Checkout URL', c.checkout_url],
    ['Embed URL', c.embed_url],
    // The store API sends an ISO string here: shown in the one date format of every other view.
    ['Expires at', date(Date.parse(c.expires_at) / 1000) || c.expires_at],
  ])
}

// ---------------------------------------------------------------- merchant API: checkout sessions, refunds

export const sessionColumns: Column<CheckoutSession>[] = [
  {key: 'id'},
  {key: 'status'},
  {key: 'mode'},
  {key: 'amount', align: 'right', get: (c) => money(c.amount, c.currency)},
  {key: 'items', align: 'right', get: (c) => String(c.line_items.length)},
  {key: 'reference', get: (c) => c.reference ?? ''},
  {key: 'created', get: (c) => date(c.created)},
]

export function sessionDetails(c: CheckoutSession): string {
  return block([
    ['ID', c.id],
    ['Status', c.status],
    ['Mode', `${c.mode} (${mode(c.livemode)})`],
    ['Amount', money(c.amount, c.currency)],
    ['Revision', c.revision === undefined ? null : `${c.revision} (flow version ${c.flow_version})`],
    ['Reference', c.reference],
    ['Description', c.description],
    ['Payment', c.payment],
    ['Checkout URL', c.checkout_url],
    ['Expires', date(c.expires_at)],
    ['Created', date(c.created)],
  ]) + `\n\nLine items\n${table(c.line_items, lineItemColumns)}`
}

const lineItemColumns: Column<CheckoutSession['line_items'][number]>[] = [
  {key: 'name'},
  {key: 'quantity', header: 'QTY', align: 'right', get: (l) => String(l.quantity)},
  {key: 'amount', align: 'right', get: (l) => money(l.amount, l.currency)},
  {key: 'variant', get: (l) => l.variant_id ?? ''},
  {key: 'sku', get: (l) => l.sku ?? ''},
]

export function refundDetails(r: RefundRecord): string {
  return block([
    ['ID', r.id],
    ['Payment', r.payment],
    ['Amount', money(r.amount, r.currency)],
    ['Status', r.status],
    ['Reason', r.reason],
    ['Mode', mode(r.livemode)],
    ['Created', date(r.created)],
  ])
}

/** A subscription of the merchant API (`subscriptions get|create|cancel`). */
export function merchantSubscriptionDetails(s: Subscription): string {
  return block([
    ['Subscription', s.id],
    ['Status', `${s.status}${s.cancel_at_period_end ? ' (cancels at period end)' : ''}`],
    ['Customer', s.customer],
    ['Amount', `${money(s.amount, s.currency)} × ${s.quantity}`],
    ['Price', s.price_id],
    ['Period', `${date(s.current_period_start)} – ${date(s.current_period_end)}`],
    ['Trial end', date(s.trial_end)],
    ['Latest invoice', s.latest_invoice],
  ])
}

export function customerDetails(c: Customer): string {
  return block([
    ['Customer', c.id],
    ['Name', c.name],
    ['E-mail', c.email],
    ['Created', date(c.created)],
  ])
}

export const fraudWarningColumns: Column<FraudWarning>[] = [
  {key: 'id'},
  {key: 'fraud_type', header: 'TYPE'},
  {key: 'amount', get: (w) => (w.amount === null || w.currency === null ? '' : money(w.amount, w.currency))},
  {key: 'status'},
  {key: 'charge_id', header: 'CHARGE'},
  {key: 'created', get: (w) => date(w.created)},
]

export const fraudWarningDetails = (w: FraudWarning) => table([w], fraudWarningColumns)
