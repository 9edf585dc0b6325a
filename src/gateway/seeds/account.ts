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
import type {Tx} from '../domain/context.js'
import type {Scope} from '../storage/documents.js'

const DAY = 86_400

export async function seedAccount(tx: Tx, scope: Scope): Promise<void> {
  const now = tx.now(scope)
  // Oldest first: lists are newest first by insertion order.
  await recordPayment(tx, scope, {amount: 4900, currency: 'eur', created: now - 18 * DAY, reference: 'order-1001', description: 'Starter kit'})
  await createPayout(tx, scope, {amount: 3000, currency: 'eur', status: 'paid'}, now - 15 * DAY)

  const refunded = await recordPayment(tx, scope, {amount: 12900, currency: 'eur', created: now - 12 * DAY, reference: 'order-1002', description: 'Annual plan'})
  const refund = await insertRefund(tx, scope, refunded, {amount: 4000, reason: 'requested_by_customer', created: now - 10 * DAY})
  await tx.save({...refunded, amount_refunded: refund.amount, status: 'partially_refunded'})

  await recordPayment(tx, scope, {amount: 2500, currency: 'usd', created: now - 8 * DAY, reference: 'order-1003', description: 'Sticker pack'})
  const disputed = recordPayment(tx, scope, {amount: 7500, currency: 'eur', created: now - 6 * DAY, reference: 'order-1004', description: 'Pro bundle'})
  await insertDispute(tx, scope, await disputed, {reason: 'fraudulent', evidence_due_by: now + 2 * DAY, created: now - 5 * DAY})

  await createPayout(tx, scope, {amount: 5000, currency: 'eur', status: 'in_transit'}, now - 3 * DAY)
  await recordPayment(tx, scope, {amount: 3900, currency: 'eur', created: now - 1 * DAY, reference: 'order-1005', description: 'Starter kit'})

  await subscriptionFixture(tx, scope, {
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
