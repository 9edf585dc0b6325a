/**
 * `--seed` account data for one environment: a few weeks of money (payments, one partly refunded and
 * one disputed, and payouts) so that payments, refunds, disputes, balance and analytics have something
 * to show, and an active subscription (with its paid invoice in live). No seeded checkout completes,
 * so the payments are stored directly, as a completed sale would have stored them.
 */
import {insertDispute} from '../domain/disputes.js'
import {recordPayment} from '../domain/payments.js'
import {createPayout} from '../domain/payouts.js'
import {insertRefund} from '../domain/refunds.js'
import {subscriptionFixture} from '../domain/subscriptions.js'
import type {Platform} from '../platform.js'
import type {Scope} from '../storage/documents.js'

const DAY = 86_400

export function seedAccount(gw: Platform, scope: Scope): void {
  const now = gw.now()
  // Oldest first: lists are newest first by insertion order.
  recordPayment(gw, scope, {amount: 4900, currency: 'eur', created: now - 18 * DAY, reference: 'order-1001', description: 'Starter kit'})
  createPayout(gw, scope, {amount: 3000, currency: 'eur', status: 'paid'}, now - 15 * DAY)

  const refunded = recordPayment(gw, scope, {amount: 12900, currency: 'eur', created: now - 12 * DAY, reference: 'order-1002', description: 'Annual plan'})
  const refund = insertRefund(gw, scope, refunded, {amount: 4000, reason: 'requested_by_customer', created: now - 10 * DAY})
  gw.storage.save({...refunded, amount_refunded: refund.amount, status: 'partially_refunded'})

  recordPayment(gw, scope, {amount: 2500, currency: 'usd', created: now - 8 * DAY, reference: 'order-1003', description: 'Sticker pack'})
  const disputed = recordPayment(gw, scope, {amount: 7500, currency: 'eur', created: now - 6 * DAY, reference: 'order-1004', description: 'Pro bundle'})
  insertDispute(gw, scope, disputed, {reason: 'fraudulent', evidence_due_by: now + 2 * DAY, created: now - 5 * DAY})

  createPayout(gw, scope, {amount: 5000, currency: 'eur', status: 'in_transit'}, now - 3 * DAY)
  recordPayment(gw, scope, {amount: 3900, currency: 'eur', created: now - 1 * DAY, reference: 'order-1005', description: 'Starter kit'})

  subscriptionFixture(gw, scope, {
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
