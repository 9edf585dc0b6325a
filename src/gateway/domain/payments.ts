/**
 * Payments (spec: Payment): created by the platform when a session completes or a payment link is used,
 * never by clients. One stored record, two shapes: the sandbox's payment row (`py_` id) and live's
 * charge (`ch_` id, `processing` shown as `pending`). Live lists filter by the status they show.
 */
import {LIVE_PAYMENT_STATUSES, type LivePayment, type SandboxPayment} from '@payapp/sdk/schemas/commerce'
import {invalid} from '../errors.js'
import {newId} from '../ids.js'
import type {Tx} from './context.js'
import type {PaymentDoc, Scope, SessionDoc} from '../storage/documents.js'
import type {Condition} from '../storage/storage.js'
import {computeFee, noFee} from './fees.js'
import {requireDoc, stamp} from './shared.js'

const LIVE_STATUSES: readonly string[] = LIVE_PAYMENT_STATUSES

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

/** The fields a document about one payment starts with (a refund, a dispute): its stamp, the payment, its mode and currency. */
export const aboutPayment = <const O extends string>(tx: Tx, scope: Scope, payment: PaymentDoc, object: O, id: string, created?: number) => ({
  ...stamp(tx, scope, object, id, created),
  livemode: payment.livemode,
  payment: payment.id,
  currency: payment.currency,
})

/** A live payment is stored under its charge id and a sandbox one under its row id: the id the route takes. */
export const requirePayment = async (tx: Tx, scope: Scope, id: string) => requireDoc(tx, 'payment', scope, id, 'payment')

/** A payment by its id, its charge or its payment intent (the merchant API takes any of the three). */
export async function findPayment(tx: Tx, scope: Scope, ref: string): Promise<PaymentDoc | undefined> {
  const byId = await tx.get('payment', scope, ref)
  if (byId) return byId
  const field = ref.startsWith('pi_') ? 'payment_intent' : ref.startsWith('ch_') ? 'charge' : undefined
  return field ? (await tx.where('payment', scope, [{field, eq: ref}]))[0] : undefined
}

/** A page of payments as served; live filters by the status it shows, the sandbox ignores the filter (spec). */
export async function listPayments(tx: Tx, scope: Scope, query: {limit: number; offset: number; status?: string; customer?: string}) {
  const status = scope.env === 'live' ? query.status : undefined
  if (status !== undefined && !LIVE_STATUSES.includes(status)) {
    throw invalid('parameter_invalid_enum', `status must be one of ${LIVE_STATUSES.join(', ')}`, 'status')
  }
  // The live view shows a processing payment as pending: the filter matches what the list shows.
  const where: Condition[] = status === undefined ? [] : [{field: 'status', in: status === 'pending' ? [status, 'processing'] : [status]}]
  if (query.customer !== undefined) where.push({field: 'customer.id', eq: query.customer})
  return viewPage(tx, scope, where, query)
}

/** Live refunds are the refunded charges themselves, each with its running amount_refunded. */
export const listRefundedPayments = async (tx: Tx, scope: Scope, page: {limit: number; offset: number}) =>
  viewPage(tx, scope, [{field: 'amount_refunded', gt: 0}], page)

async function viewPage(tx: Tx, scope: Scope, where: Condition[], page: {limit: number; offset: number}) {
  const {docs, hasMore} = await tx.page('payment', scope, {...page, where})
  return {object: 'list' as const, has_more: hasMore, data: docs.map(paymentView)}
}

export const SANDBOX_CARDS = {
  paid: {brand: 'visa', last4: '4242', country: 'DE', funding: 'credit'},
  declined: {brand: 'visa', last4: '0002', country: 'DE', funding: 'credit'},
}

export interface Buyer {
  name: string
  email: string
}

export type PaymentFields = Partial<PaymentDoc> & Pick<PaymentDoc, 'amount' | 'currency' | 'created'>

/**
 * Stores a payment: by default a succeeded payment-link sale at `created`, its fee charged; a session's
 * payment, the seed and tests override the rest. Live payments are filed under their charge id.
 */
export async function recordPayment(tx: Tx, scope: Scope, fields: PaymentFields, parent: string | null = null): Promise<PaymentDoc> {
  const charge = newId('ch', 24)
  const payment: PaymentDoc = {
    ...stamp(tx, scope, 'payment', scope.env === 'live' ? charge : newId('py', 24), fields.created),
    status: 'succeeded',
    amount_refunded: 0,
    fee: computeFee(fields.amount, fields.currency),
    session_id: null,
    invoice_id: null,
    order: null,
    payment_intent: newId('pi', 24),
    charge,
    customer: {id: null, name: 'Erika Mustermann', email: 'erika@example.com'},
    card: SANDBOX_CARDS.paid,
    payment_method: 'card',
    description: null,
    reference: null,
    metadata: {},
    source: 'payment_link',
    failure_code: null,
    failure_message: null,
    succeeded_at: fields.created,
    ...fields,
  }
  return await tx.insert('payment', scope, payment, {parent, created: payment.created})
}

/** What an attempt settles a payment as: succeeded, or failed with the card's decline (a session's buyer, a renewal). */
export function settledFields(outcome: 'paid' | 'declined', currency: string, now: number): Partial<PaymentDoc> {
  const paid = outcome === 'paid'
  return {
    status: paid ? 'succeeded' : 'failed',
    ...(paid ? {} : {fee: noFee(currency)}),
    card: SANDBOX_CARDS[outcome],
    failure_code: paid ? null : 'card_declined',
    failure_message: paid ? null : 'Your card was declined.',
    succeeded_at: paid ? now : null,
  }
}

/** Settles a session's processing payment with the buyer's outcome. */
export async function settlePayment(tx: Tx, scope: Scope, payment: PaymentDoc, outcome: 'paid' | 'declined'): Promise<PaymentDoc> {
  Object.assign(payment, settledFields(outcome, payment.currency, tx.now(scope)))
  return await tx.save(payment)
}

/**
 * The buyer's attempt on a session: a succeeded payment, a failed one with the card's decline, or
 * (`processing`) one still being confirmed, settled later by `settlePayment`.
 */
export async function paymentForSession(tx: Tx, scope: Scope, session: SessionDoc, buyer: Buyer, outcome: 'paid' | 'declined' | 'processing'): Promise<PaymentDoc> {
  const now = tx.now(scope)
  return recordPayment(
    tx,
    scope,
    {
      ...(outcome === 'processing' ? {status: 'processing', succeeded_at: null} : settledFields(outcome, session.currency, now)),
      amount: session.amount,
      currency: session.currency,
      created: now,
      session_id: session.id,
      customer: {id: null, name: buyer.name, email: buyer.email},
      description: session.line_items[0]?.name ?? null,
      reference: session.reference ?? null,
      metadata: session.metadata,
      source: session.source === 'store' ? 'store' : 'api',
    },
    session.id,
  )
}
