/**
 * Checkout sessions and what follows a sale: stock reservations, payment outcomes, store orders,
 * refunds and disputes. Every function runs inside the caller's transaction and appends its events
 * there, so a state change and its event exist together or not at all.
 */
import {timingSafeEqual} from 'node:crypto'

import type {Statement} from 'better-sqlite3'

import type {CheckoutSession, Dispute, LivePayment, Order, SandboxPayment} from '../sdk/schemas/commerce.js'
import {getVariant, saveVariant, stockAvailable, type VariantDoc} from './catalog.js'
import type {Scope, Storage} from './db.js'
import {ApiError, invalidState} from './errors.js'
import {newId, randomText} from './ids.js'
import type {PaymentDoc, RefundDoc} from './models.js'
import type {Platform} from './platform.js'

// ---------------------------------------------------------------- stored documents

/** A checkout session as stored: the public object plus the stock it holds while open. */
export type SessionDoc = CheckoutSession & {
  client_secret: string
  customer_details: {name: string | null; email: string | null} | null
  /** Units held on a stock-tracked variant; held while open, then consumed (paid) or released. */
  reservation: {variant_id: string; quantity: number} | null
}

/** Kind `dispute`; `past_due` is recomputed from the clock on every read. */
export type DisputeDoc = Dispute

/** Store-created sessions live 30 minutes, others 24 hours (spec: Limits). */
export const STORE_SESSION_SECONDS = 30 * 60
export const API_SESSION_SECONDS = 24 * 3600

// ---------------------------------------------------------------- SQL beyond the document store

const statements = new WeakMap<Storage, Map<string, Statement>>()

/** A cached prepared statement on the gateway's database. */
export function sql(gw: Platform, text: string): Statement {
  let cache = statements.get(gw.storage)
  if (!cache) statements.set(gw.storage, (cache = new Map()))
  let stmt = cache.get(text)
  if (!stmt) cache.set(text, (stmt = gw.storage.db.prepare(text)))
  return stmt
}

/** A document by id in whatever merchant and environment holds it (admin routes carry no credential). */
export function findAnywhere<T>(gw: Platform, kind: string, id: string): {scope: Scope; doc: T} | undefined {
  const row = sql(gw, 'SELECT merchant, env, data FROM objects WHERE id = ? AND kind = ?').get(id, kind) as
    | {merchant: string; env: Scope['env']; data: string}
    | undefined
  return row ? {scope: {merchant: row.merchant, env: row.env}, doc: JSON.parse(row.data) as T} : undefined
}

// ---------------------------------------------------------------- stock

/** Holds `quantity` units of a tracked variant, or 409 `out_of_stock` when fewer are unreserved. */
export function reserveStock(gw: Platform, variant: VariantDoc, quantity: number): void {
  const available = stockAvailable(variant) ?? 0
  if (available < quantity) {
    throw new ApiError(409, 'resource_conflict', 'out_of_stock', `Only ${Math.max(0, available)} unit(s) of this variant are available`, 'quantity')
  }
  variant.stock_reserved += quantity
  saveVariant(gw, variant)
}

function moveStock(gw: Platform, scope: Scope, variantId: string, change: {qty?: number; reserved?: number}): void {
  const v = getVariant(gw, scope, variantId)
  if (!v) return // deleted since the sale: nothing left to count against
  if (change.reserved) v.stock_reserved = Math.max(0, v.stock_reserved + change.reserved)
  if (change.qty && v.stock_qty !== null) v.stock_qty = Math.max(0, v.stock_qty + change.qty)
  saveVariant(gw, v)
}

// ---------------------------------------------------------------- sessions

export function sessionView(s: SessionDoc, withSecret: boolean): CheckoutSession {
  const {reservation: _held, client_secret, ...rest} = s
  return withSecret ? {...rest, client_secret} : rest
}

export interface NewSession {
  source: 'store' | 'api'
  lifetimeSeconds: number
  line: CheckoutSession['line_items'][number]
  amount: number
  currency: string
  successUrl: string | null
  cancelUrl: string | null
  metadata?: Record<string, string>
  /** A stock-tracked variant to hold `line.quantity` units of, in this same transaction. */
  reserve?: VariantDoc
}

/** Opens a session; reserving first, so an `out_of_stock` leaves no session behind. */
export function openSession(gw: Platform, scope: Scope, input: NewSession): SessionDoc {
  if (input.reserve) reserveStock(gw, input.reserve, input.line.quantity)
  const id = newId('cs', 24)
  const secret = `cs_secret_${randomText(32)}`
  const now = gw.now()
  const session: SessionDoc = {
    id,
    object: 'checkout.session',
    mode: 'payment',
    livemode: scope.env === 'live',
    status: 'open',
    source: input.source,
    amount: input.amount,
    currency: input.currency,
    client_secret: secret,
    checkout_url: `${gw.baseUrl}/checkout/${id}?cs=${secret}`,
    embed_url: `${gw.baseUrl}/checkout/${id}/embed?cs=${secret}`,
    expires_at: now + input.lifetimeSeconds,
    created: now,
    line_items: [input.line],
    payment: null,
    order: null,
    success_url: input.successUrl,
    cancel_url: input.cancelUrl,
    metadata: input.metadata ?? {},
    customer_details: null,
    reservation: input.reserve ? {variant_id: input.reserve.id, quantity: input.line.quantity} : null,
  }
  return gw.storage.insert('checkout_session', scope, session, {created: now})
}

/** Ends an open session unpaid: the client secret dies, held stock returns, the merchant hears of it. */
export function expireSession(gw: Platform, scope: Scope, session: SessionDoc): SessionDoc {
  session.status = 'expired'
  if (session.reservation) moveStock(gw, scope, session.reservation.variant_id, {reserved: -session.reservation.quantity})
  gw.storage.save(session)
  gw.emit(scope, 'checkout.session.expired', sessionView(session, false))
  return session
}

/**
 * Expires every open session of a scope whose time is up. Expiry is lazy: each route that touches
 * sessions or stock (and the catalogue's variant reads) calls this first, so a moved test clock
 * releases stock on the next read.
 */
export function sweepExpired(gw: Platform, scope: Scope): number {
  return gw.storage.transaction(() => {
    const due = sql(
      gw,
      `SELECT data FROM objects WHERE merchant = ? AND env = ? AND kind = 'checkout_session'
         AND json_extract(data, '$.status') = 'open' AND json_extract(data, '$.expires_at') <= ?`,
    ).all(scope.merchant, scope.env, gw.now()) as {data: string}[]
    for (const row of due) expireSession(gw, scope, JSON.parse(row.data) as SessionDoc)
    return due.length
  })
}

/** 422 unless the session can still be paid or expired. */
export function requireOpen(session: SessionDoc): void {
  if (session.status === 'expired') throw invalidState('session_expired', `Checkout session ${session.id} has expired`)
  if (session.status !== 'open') throw invalidState('session_already_completed', `Checkout session ${session.id} is already completed`)
}

/** Whether `given` is the session's client secret, compared in constant time. */
export function clientSecretMatches(session: SessionDoc, given: string): boolean {
  const a = Buffer.from(session.client_secret)
  const b = Buffer.from(given)
  return a.length === b.length && timingSafeEqual(a, b)
}

// ---------------------------------------------------------------- fees

/** Minor-unit exponent and EUR per major unit. The gateway has no FX feed, so rates are fixed references. */
const FX: Record<string, [exponent: number, eur: number]> = {
  aud: [2, 0.61], bgn: [2, 0.511], brl: [2, 0.17], cad: [2, 0.68], chf: [2, 1.05], cny: [2, 0.13], czk: [2, 0.04], dkk: [2, 0.134],
  eur: [2, 1], gbp: [2, 1.17], hkd: [2, 0.118], huf: [2, 0.0025], idr: [2, 0.000058], ils: [2, 0.25], inr: [2, 0.011], isk: [0, 0.0067],
  jpy: [0, 0.0062], krw: [0, 0.00068], mxn: [2, 0.05], myr: [2, 0.2], nok: [2, 0.086], nzd: [2, 0.56], php: [2, 0.016], pln: [2, 0.23],
  ron: [2, 0.2], sek: [2, 0.087], sgd: [2, 0.69], thb: [2, 0.026], try: [2, 0.028], usd: [2, 0.92], zar: [2, 0.05], bhd: [3, 2.45], kwd: [3, 3.0],
}
/** The plan fee: 1.4% of the amount plus 0.25 EUR, computed in EUR (spec: fees are computed in EUR). */
export const FEE_PERCENT = 1.4
export const FEE_FIXED_EUR_CENTS = 25

export function computeFee(amount: number, currency: string): PaymentDoc['fee'] {
  const [exponent, eurPerUnit] = FX[currency] ?? [2, 1]
  const eurCents = (amount / 10 ** exponent) * eurPerUnit * 100
  const serviceFeeEur = Math.round((eurCents * FEE_PERCENT) / 100) + FEE_FIXED_EUR_CENTS
  const inCharge = Math.round((serviceFeeEur / 100 / eurPerUnit) * 10 ** exponent)
  return {service_fee_eur: serviceFeeEur, service_fee_charge_currency: inCharge, psp_fee_eur: 0, currency}
}

// ---------------------------------------------------------------- payments

export function sandboxPaymentView(p: PaymentDoc): SandboxPayment {
  return {
    id: p.id,
    object: 'payment',
    livemode: false,
    session_id: p.session_id,
    invoice_id: p.invoice_id,
    amount: p.amount,
    amount_refunded: p.amount_refunded,
    currency: p.currency,
    status: p.status,
    payment_method: p.payment_method,
    card: p.card,
    fee: p.fee,
    customer: {name: p.customer.name, email: p.customer.email},
    failure_code: p.failure_code,
    failure_message: p.failure_message,
    reference: p.reference,
    metadata: p.metadata,
    created: p.created,
  }
}

export function livePaymentView(p: PaymentDoc): LivePayment {
  return {
    id: p.charge,
    object: 'payment',
    livemode: true,
    status: p.status === 'processing' ? 'pending' : p.status,
    amount: p.amount,
    amount_refunded: p.amount_refunded,
    currency: p.currency,
    application_fee_amount: p.status === 'failed' ? null : p.fee.service_fee_charge_currency,
    payment_intent: p.payment_intent,
    charge: p.charge,
    checkout_session: p.session_id,
    customer: p.customer.id,
    customer_email: p.customer.email,
    customer_name: p.customer.name,
    description: p.description,
    reference: p.reference,
    payment_method_type: p.payment_method,
    metadata: p.metadata,
    source: p.source,
    created: p.created,
    succeeded_at: p.succeeded_at,
    failure_code: p.failure_code,
    failure_message: p.failure_message,
  }
}

/** The payment as the token's environment shows it: live and sandbox shapes differ. */
export const paymentView = (p: PaymentDoc) => (p.livemode ? livePaymentView(p) : sandboxPaymentView(p))

export const refundView = (r: RefundDoc): RefundDoc => ({...r})

export const disputeView = (d: DisputeDoc, now: number): Dispute => ({...d, past_due: d.status === 'needs_response' && now > d.evidence_due_by})

const SANDBOX_CARDS = {
  paid: {brand: 'visa', last4: '4242', country: 'DE', funding: 'credit'},
  declined: {brand: 'visa', last4: '0002', country: 'DE', funding: 'credit'},
}

export interface Buyer {
  name: string
  email: string
}

function newPayment(gw: Platform, scope: Scope, session: SessionDoc, buyer: Buyer, outcome: 'paid' | 'declined'): PaymentDoc {
  const now = gw.now()
  const charge = newId('ch', 24)
  const paid = outcome === 'paid'
  const line = session.line_items[0]
  const payment: PaymentDoc = {
    id: scope.env === 'live' ? charge : newId('py', 24),
    object: 'payment',
    livemode: scope.env === 'live',
    status: paid ? 'succeeded' : 'failed',
    amount: session.amount,
    amount_refunded: 0,
    currency: session.currency,
    fee: paid ? computeFee(session.amount, session.currency) : {service_fee_eur: 0, service_fee_charge_currency: 0, psp_fee_eur: 0, currency: session.currency},
    session_id: session.id,
    invoice_id: null,
    order: null,
    payment_intent: newId('pi', 24),
    charge,
    customer: {id: null, name: buyer.name, email: buyer.email},
    card: SANDBOX_CARDS[outcome],
    payment_method: 'card',
    description: line?.name ?? null,
    reference: null,
    metadata: session.metadata,
    source: session.source === 'store' ? 'store' : 'api',
    failure_code: paid ? null : 'card_declined',
    failure_message: paid ? null : 'Your card was declined.',
    created: now,
    succeeded_at: paid ? now : null,
  }
  return gw.storage.insert('payment', scope, payment, {parent: session.id, created: now})
}

// ---------------------------------------------------------------- orders

/** Stores a new store order; the caller emits `store.order.created` where it belongs in its sequence. */
export function newOrder(
  gw: Platform,
  scope: Scope,
  input: Pick<Order, 'status' | 'checkout_session' | 'payment' | 'product_id' | 'variant_id' | 'sku' | 'name' | 'quantity' | 'amount' | 'currency' | 'customer' | 'fixture'>,
): Order {
  const now = gw.now()
  const order: Order = {
    id: newId('ord', 24),
    object: 'order',
    livemode: scope.env === 'live',
    source: 'store',
    ...input,
    evidence: [],
    shipped_at: null,
    completed_at: null,
    canceled_at: null,
    created: now,
    updated: now,
  }
  return gw.storage.insert('order', scope, order, {created: now})
}

/** Saves a changed order and tells the merchant (`store.order.updated`). */
export function saveOrder(gw: Platform, scope: Scope, order: Order): Order {
  order.updated = gw.now()
  gw.storage.save(order)
  gw.emit(scope, 'store.order.updated', order)
  return order
}

// ---------------------------------------------------------------- outcomes

export interface Completion {
  session: CheckoutSession
  payment: SandboxPayment | LivePayment
  order: Order | null
}

/**
 * The buyer's payment attempt on an open session. Paid: the session completes, the reservation is
 * consumed, a payment and (store sessions) an order exist. Declined: a failed payment is recorded and
 * the session stays open, its stock still held, for another attempt.
 */
export function completeSession(gw: Platform, scope: Scope, session: SessionDoc, outcome: 'paid' | 'declined', buyer: Buyer): Completion {
  requireOpen(session)
  const payment = newPayment(gw, scope, session, buyer, outcome)
  if (outcome === 'declined') {
    const failed = paymentView(payment)
    gw.emit(scope, 'payment_intent.payment_failed', {...failed, checkout_session: session.id})
    gw.emit(scope, 'payment.failed', failed)
    return {session: sessionView(session, true), payment: failed, order: null}
  }

  if (session.reservation) moveStock(gw, scope, session.reservation.variant_id, {qty: -session.reservation.quantity, reserved: -session.reservation.quantity})
  const line = session.line_items[0]
  const order =
    session.source === 'store' && line?.product_id
      ? newOrder(gw, scope, {
          status: 'paid',
          checkout_session: session.id,
          payment: payment.id,
          product_id: line.product_id,
          variant_id: line.variant_id,
          sku: line.sku,
          name: line.name,
          quantity: line.quantity,
          amount: session.amount,
          currency: session.currency,
          customer: {name: buyer.name, email: buyer.email},
          fixture: false,
        })
      : null
  if (order) {
    payment.order = order.id
    gw.storage.save(payment)
  }
  session.status = 'complete'
  session.payment = payment.id
  session.order = order?.id ?? null
  session.customer_details = {name: buyer.name, email: buyer.email}
  gw.storage.save(session)

  gw.emit(scope, 'checkout.session.completed', sessionView(session, false))
  gw.emit(scope, 'payment.succeeded', paymentView(payment))
  if (order) gw.emit(scope, 'store.order.created', order)
  return {session: sessionView(session, true), payment: paymentView(payment), order}
}

export interface RefundResult {
  refund: RefundDoc
  payment: SandboxPayment | LivePayment
  order: Order | null
}

/**
 * Refunds all or part of the rest of a payment. The refund that makes it whole restores the stock
 * the sale consumed and marks its order refunded.
 */
export function refundPayment(gw: Platform, scope: Scope, payment: PaymentDoc, input: {amount?: number; reason?: string}): RefundResult {
  if (payment.status === 'disputed') throw invalidState('charge_disputed', `Payment ${payment.id} is disputed and cannot be refunded`)
  if (payment.status === 'refunded' || payment.amount_refunded >= payment.amount) {
    throw new ApiError(422, 'already_refunded', 'already_refunded', `Payment ${payment.id} is already fully refunded`)
  }
  if (payment.status !== 'succeeded' && payment.status !== 'partially_refunded') {
    throw invalidState('payment_not_succeeded', `Payment ${payment.id} has status ${payment.status}; only a succeeded payment can be refunded`)
  }
  const remaining = payment.amount - payment.amount_refunded
  const amount = input.amount ?? remaining
  if (amount > remaining) {
    throw new ApiError(400, 'invalid_request', 'amount_too_large', `Refund amount ${amount} is more than the ${remaining} left to refund on payment ${payment.id}`, 'amount')
  }

  const now = gw.now()
  const refund: RefundDoc = {
    id: newId('re', 24),
    object: 'refund',
    livemode: payment.livemode,
    payment: payment.id,
    amount,
    currency: payment.currency,
    status: 'succeeded',
    reason: input.reason ?? null,
    created: now,
  }
  gw.storage.insert('refund', scope, refund, {parent: payment.id, created: now})
  payment.amount_refunded += amount
  const full = payment.amount_refunded === payment.amount
  payment.status = full ? 'refunded' : 'partially_refunded'
  gw.storage.save(payment)

  gw.emit(scope, 'refund.created', refundView(refund))
  gw.emit(scope, 'charge.refunded', paymentView(payment))
  gw.emit(scope, 'payment.refunded', paymentView(payment))

  let order = payment.order ? (gw.storage.get<Order>('order', scope, payment.order) ?? null) : null
  if (full) {
    const session = payment.session_id ? gw.storage.get<SessionDoc>('checkout_session', scope, payment.session_id) : undefined
    if (session?.reservation) moveStock(gw, scope, session.reservation.variant_id, {qty: session.reservation.quantity})
    if (order) {
      order.status = 'refunded'
      order = saveOrder(gw, scope, order)
    }
  }
  return {refund: refundView(refund), payment: paymentView(payment), order}
}

/** The buyer's bank disputes a payment: a chargeback with a deadline for the merchant's evidence. */
export function disputePayment(gw: Platform, scope: Scope, payment: PaymentDoc, input: {reason: string; evidence_due_in_days: number}) {
  if (payment.status === 'disputed') throw invalidState('charge_disputed', `Payment ${payment.id} is already disputed`)
  if (payment.status === 'failed' || payment.status === 'pending' || payment.status === 'processing') {
    throw invalidState('payment_not_succeeded', `Payment ${payment.id} has status ${payment.status}; only a succeeded payment can be disputed`)
  }
  const now = gw.now()
  const dispute: DisputeDoc = {
    id: newId('dp', 24),
    object: 'dispute',
    livemode: payment.livemode,
    payment: payment.id,
    amount: payment.amount,
    currency: payment.currency,
    reason: input.reason,
    status: 'needs_response',
    evidence_due_by: now + input.evidence_due_in_days * 86400,
    past_due: false,
    created: now,
  }
  gw.storage.insert('dispute', scope, dispute, {parent: payment.id, created: now})
  payment.status = 'disputed'
  gw.storage.save(payment)
  const view = disputeView(dispute, now)
  gw.emit(scope, 'charge.dispute.created', view)
  gw.emit(scope, 'payment.disputed', paymentView(payment))
  return {dispute: view, payment: paymentView(payment)}
}
