/**
 * Refunds (spec: Refund; created here by the admin API's simulated outside world until the merchant
 * API's POST /v1/refunds lands). Rules:
 * - only a succeeded or partly refunded payment is refunded; a disputed one is 422 `charge_disputed`,
 *   a fully refunded one 422 `already_refunded`;
 * - the amount defaults to what is left and never exceeds it (400 `amount_too_large`);
 * - the refund that makes the payment whole restores the stock the sale consumed and marks its order
 *   refunded; events: `refund.created`, `charge.refunded`, `payment.refunded`; a full refund moves the
 *   charge's open fraud warnings to `refunded` (fraud-warnings.ts).
 */
import type {LivePayment, RefundRecord, SandboxPayment} from '@payapp/sdk/schemas/commerce'
import {ApiError, invalid, invalidState, notFound} from '../errors.js'
import {newId} from '../ids.js'
import type {Tx} from './context.js'
import type {OrderDoc, PaymentDoc, RefundDoc, Scope} from '../storage/documents.js'
import {onChargeRefunded} from './fraud-warnings.js'
import {saveOrder} from './orders.js'
import {aboutPayment, findPayment, paymentView} from './payments.js'
import {requireDoc} from './shared.js'
import {moveStock} from './stock.js'

export interface RefundResult {
  refund: RefundDoc
  payment: SandboxPayment | LivePayment
  order: OrderDoc | null
}

/** Stores a refund of `amount` of a payment; the caller has checked it and moves the payment. */
export async function insertRefund(tx: Tx, scope: Scope, payment: PaymentDoc, input: {amount: number; reason: string | null; created?: number}): Promise<RefundDoc> {
  const refund: RefundDoc = {
    ...aboutPayment(tx, scope, payment, 'refund', newId('re', 24), input.created),
    amount: input.amount,
    status: 'succeeded',
    reason: input.reason,
  }
  return await tx.insert('refund', scope, refund, {parent: payment.id, created: refund.created})
}

/** Refunds all or part of the rest of a payment. */
export async function refundPayment(tx: Tx, scope: Scope, payment: PaymentDoc, input: {amount?: number; reason?: string}): Promise<RefundResult> {
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

  const refund = await insertRefund(tx, scope, payment, {amount, reason: input.reason ?? null})
  payment.amount_refunded += amount
  const full = payment.amount_refunded === payment.amount
  payment.status = full ? 'refunded' : 'partially_refunded'
  await tx.save(payment)

  await tx.emit(scope, 'refund.created', {...refund})
  await tx.emit(scope, 'charge.refunded', paymentView(payment))
  await tx.emit(scope, 'payment.refunded', paymentView(payment))
  await onChargeRefunded(tx, scope, payment)

  let order = payment.order ? (await tx.get('order', scope, payment.order) ?? null) : null
  if (full) {
    const session = payment.session_id ? await tx.get('checkout_session', scope, payment.session_id) : undefined
    if (session?.reservation) await moveStock(tx, scope, session.reservation.variant_id, {qty: session.reservation.quantity})
    if (order) {
      order.status = 'refunded'
      order = await saveOrder(tx, scope, order)
    }
  }
  return {refund: {...refund}, payment: paymentView(payment), order}
}

// ---------------------------------------------------------------- the merchant API's refunds

/** `POST /v1/refunds`: the same refund the admin API simulates, through `refundPayment`. */
export async function createRefund(tx: Tx, scope: Scope, body: {payment: string; amount?: number; reason?: string}): Promise<RefundRecord> {
  const payment = await findPayment(tx, scope, body.payment)
  if (!payment) throw notFound('payment', body.payment, 'resource_missing', 'payment')
  return (await refundPayment(tx, scope, payment, body)).refund
}

/** `GET /v1/refunds?charge=…|payment_intent=…`: the refunds of one payment, newest first. */
export async function listRefundsOf(tx: Tx, scope: Scope, query: {limit: number; offset: number; starting_after?: string; charge?: string; payment_intent?: string}) {
  const ref = query.charge ?? query.payment_intent
  if (ref === undefined) throw invalid('parameter_missing', 'Filter refunds by charge or payment_intent', 'charge')
  const payment = await findPayment(tx, scope, ref)
  if (!payment) return {object: 'list' as const, has_more: false, data: []}
  const {docs, hasMore} = await tx.page('refund', scope, {...query, parent: payment.id})
  return {object: 'list' as const, has_more: hasMore, data: docs}
}

export const requireRefund = async (tx: Tx, scope: Scope, id: string) => requireDoc(tx, 'refund', scope, id, 'refund')
