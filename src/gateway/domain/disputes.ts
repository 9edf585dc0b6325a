/**
 * Disputes (spec: Dispute): the buyer's bank opens a chargeback on a succeeded payment, with a deadline
 * for the merchant's evidence; `past_due` follows the clock. A disputed payment's unrefunded amount is
 * withheld from the balance (balance.ts) and it cannot be refunded (refunds.ts); its fraud warnings
 * become `disputed` (fraud-warnings.ts).
 */
import {invalidState} from '../errors.js'
import {newId} from '../ids.js'
import type {Platform} from '../platform.js'
import type {DisputeDoc, PaymentDoc, Scope} from '../storage/documents.js'
import {onChargeDisputed} from './fraud-warnings.js'
import {aboutPayment, paymentView} from './payments.js'

const DAY = 86_400

export const disputeView = (d: DisputeDoc, now: number): DisputeDoc => ({...d, past_due: d.status === 'needs_response' && now > d.evidence_due_by})

export function listDisputes(gw: Platform, scope: Scope, page: {limit: number; offset: number}) {
  const {docs, hasMore} = gw.storage.page('dispute', scope, page)
  const now = gw.now()
  return {object: 'list' as const, has_more: hasMore, data: docs.map((d) => disputeView(d, now))}
}

/** Stores a dispute of the whole payment, due `dueInDays` after `created`, and marks the payment disputed. */
export function insertDispute(gw: Platform, scope: Scope, payment: PaymentDoc, input: {reason: string; evidence_due_by: number; created?: number}): DisputeDoc {
  const dispute: DisputeDoc = {
    ...aboutPayment(gw, scope, payment, 'dispute', newId('dp', 24), input.created),
    amount: payment.amount,
    reason: input.reason,
    status: 'needs_response',
    evidence_due_by: input.evidence_due_by,
    past_due: false,
  }
  gw.storage.insert('dispute', scope, dispute, {parent: payment.id, created: dispute.created})
  payment.status = 'disputed'
  gw.storage.save(payment)
  return dispute
}

/** The buyer's bank disputes a payment: a chargeback with a deadline for the merchant's evidence. */
export function disputePayment(gw: Platform, scope: Scope, payment: PaymentDoc, input: {reason: string; evidence_due_in_days: number}) {
  if (payment.status === 'disputed') throw invalidState('charge_disputed', `Payment ${payment.id} is already disputed`)
  if (payment.status === 'failed' || payment.status === 'pending' || payment.status === 'processing') {
    throw invalidState('payment_not_succeeded', `Payment ${payment.id} has status ${payment.status}; only a succeeded payment can be disputed`)
  }
  const now = gw.now()
  const dispute = insertDispute(gw, scope, payment, {reason: input.reason, evidence_due_by: now + input.evidence_due_in_days * DAY})
  const view = disputeView(dispute, now)
  gw.emit(scope, 'charge.dispute.created', view)
  gw.emit(scope, 'payment.disputed', paymentView(payment))
  onChargeDisputed(gw, scope, payment)
  return {dispute: view, payment: paymentView(payment)}
}
