/**
 * `--seed` account data for one environment: a few weeks of money (payments, one partly refunded and
 * one disputed, and payouts) so that payments, refunds, disputes, balance and analytics have something
 * to show, and an active subscription (with its paid invoice in live). No seeded checkout completes,
 * so the payments are stored directly, as a completed sale would have stored them.
 */
import {createPayout, createSubscription} from './admin-account.js'
import {computeFee, type DisputeDoc} from './checkout.js'
import type {Scope} from './db.js'
import {newId} from './ids.js'
import type {PaymentDoc, RefundDoc} from './models.js'
import type {Platform} from './platform.js'
import type {Seeder} from './seed.js'

const DAY = 86_400

export type SamplePayment = Partial<PaymentDoc> & Pick<PaymentDoc, 'amount' | 'currency' | 'created'>

/** Stores a payment as a payment-link sale of `created` would have (tests build fixtures with it too). */
export function insertPayment(gw: Platform, scope: Scope, fields: SamplePayment): PaymentDoc {
  const charge = newId('ch', 24)
  const payment: PaymentDoc = {
    id: scope.env === 'live' ? charge : newId('py', 24),
    object: 'payment',
    livemode: scope.env === 'live',
    status: 'succeeded',
    amount_refunded: 0,
    fee: computeFee(fields.amount, fields.currency),
    session_id: null,
    invoice_id: null,
    order: null,
    payment_intent: newId('pi', 24),
    charge,
    customer: {id: null, name: 'Erika Mustermann', email: 'erika@example.com'},
    card: {brand: 'visa', last4: '4242', country: 'DE', funding: 'credit'},
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
  return gw.storage.insert('payment', scope, payment, {created: payment.created})
}

export const seedAccount: Seeder = (gw, scope) => {
  const now = gw.now()
  const livemode = scope.env === 'live'
  // Oldest first: lists are newest first by insertion order.
  insertPayment(gw, scope, {amount: 4900, currency: 'eur', created: now - 18 * DAY, reference: 'order-1001', description: 'Starter kit'})
  createPayout(gw, scope, {amount: 3000, currency: 'eur', status: 'paid'}, now - 15 * DAY)

  const refunded = insertPayment(gw, scope, {amount: 12900, currency: 'eur', created: now - 12 * DAY, reference: 'order-1002', description: 'Annual plan'})
  const refund: RefundDoc = {id: newId('re', 24), object: 'refund', livemode, payment: refunded.id, amount: 4000, currency: 'eur', status: 'succeeded', reason: 'requested_by_customer', created: now - 10 * DAY}
  gw.storage.insert('refund', scope, refund, {parent: refunded.id, created: refund.created})
  gw.storage.save({...refunded, amount_refunded: refund.amount, status: 'partially_refunded'})

  insertPayment(gw, scope, {amount: 2500, currency: 'usd', created: now - 8 * DAY, reference: 'order-1003', description: 'Sticker pack'})
  const disputed = insertPayment(gw, scope, {amount: 7500, currency: 'eur', created: now - 6 * DAY, reference: 'order-1004', description: 'Pro bundle'})
  const dispute: DisputeDoc = {
    id: newId('dp', 24),
    object: 'dispute',
    livemode,
    payment: disputed.id,
    amount: disputed.amount,
    currency: disputed.currency,
    reason: 'fraudulent',
    status: 'needs_response',
    evidence_due_by: now + 2 * DAY,
    past_due: false,
    created: now - 5 * DAY,
  }
  gw.storage.insert('dispute', scope, dispute, {parent: disputed.id, created: dispute.created})
  gw.storage.save({...disputed, status: 'disputed'})

  createPayout(gw, scope, {amount: 5000, currency: 'eur', status: 'in_transit'}, now - 3 * DAY)
  insertPayment(gw, scope, {amount: 3900, currency: 'eur', created: now - 1 * DAY, reference: 'order-1005', description: 'Starter kit'})

  createSubscription(gw, scope, {
    merchant: scope.merchant,
    env: scope.env,
    amount: 1900,
    currency: 'eur',
    interval: 'month',
    quantity: 1,
    customer_name: 'Max Mustermann',
    customer_email: 'max@example.com',
    status: 'active',
  })
}
