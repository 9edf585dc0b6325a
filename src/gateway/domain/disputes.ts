/**
 * Disputes (spec: Dispute): the buyer's bank opens a chargeback on a succeeded payment, with a deadline
 * for the merchant's evidence; `past_due` follows the clock. A disputed payment's unrefunded amount is
 * withheld from the balance (balance.ts) and it cannot be refunded (refunds.ts); its fraud warnings
 * become `disputed` (fraud-warnings.ts).
 */
import {invalidState} from '../errors.js'
import {newId} from '../ids.js'
import type {Tx} from './context.js'
import type {DisputeDoc, PaymentDoc, Scope} from '../storage/documents.js'
import {onChargeDisputed} from './fraud-warnings.js'
import {aboutPayment, paymentView} from './payments.js'

const DAY = 86_400

export const disputeView = (d: DisputeDoc, now: number): DisputeDoc => ({...d, past_due: d.status === 'needs_response' && now > d.evidence_due_by})

export async function listDisputes(tx: Tx, scope: Scope, page: {limit: number; offset: number}) {
  const {docs, hasMore} = await tx.page('dispute', scope, page)
  const now = tx.now(scope)
  return {object: 'list' as const, has_more: hasMore, data: docs.map((d) => disputeView(d, now))}
}

/** Stores a dispute of the whole payment, due `dueInDays` after `created`, and marks the payment disputed. */
export async function insertDispute(tx: Tx, scope: Scope, payment: PaymentDoc, input: {reason: string; evidence_due_by: number; created?: number}): Promise<DisputeDoc> {
  const dispute: DisputeDoc = {
    ...aboutPayment(tx, scope, payment, 'dispute', newId('dp', 24), input.created),
    amount: payment.amount,
    reason: input.reason,
    status: 'needs_response',
    evidence_due_by: input.evidence_due_by,
    past_due: false,
  }
  await tx.insert('dispute', scope, dispute, {parent: payment.id, created: dispute.created})
  payment.status = 'disputed'
  await tx.save(payment)
  return dispute
}

/** The buyer's bank disputes a payment: a chargeback with a deadline for the merchant's evidence. */
export async function disputePayment(tx: Tx, scope: Scope, payment: PaymentDoc, input: {reason: string; evidence_due_in_days: number}) {
  if (payment.status === 'disputed') throw invalidState('charge_disputed', `Payment ${payment.id} is already disputed`)
  if (payment.status === 'failed' || payment.status === 'pending' || payment.status === 'processing') {
    throw invalidState('payment_not_succeeded', `Payment ${payment.id} has status ${payment.status}; only a succeeded payment can be disputed`)
  }
  const now = tx.now(scope)
  const dispute = await insertDispute(tx, scope, payment, {reason: input.reason, evidence_due_by: now + input.evidence_due_in_days * DAY})
  const view = disputeView(dispute, now)
  await tx.emit(scope, 'charge.dispute.created', view)
  await tx.emit(scope, 'payment.disputed', paymentView(payment))
  await onChargeDisputed(tx, scope, payment)
  return {dispute: view, payment: paymentView(payment)}
}
