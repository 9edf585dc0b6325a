/**
 * The admin API's handlers, one per entry of packages/sdk/src/admin-endpoints.ts: each names the domain function
 * it calls. Admin calls carry no credential, so a body names its merchant and environment, and a path id
 * is found in whichever scope holds it.
 */
import type {AdminHandlers} from '../admin.js'
import {advanceClock, clockView, type TestClock} from '../domain/clock.js'
import {createApiKey, createInstallation, revokeCredential} from '../domain/credentials.js'
import {disputePayment} from '../domain/disputes.js'
import {requireFault} from '../domain/faults.js'
import {listEvents, resendEvent, resendEvents} from '../domain/events.js'
import {completeSession, expireOpenSession, findSession} from '../domain/checkout.js'
import {issueInvoice} from '../domain/invoices.js'
import {adminMerchantView, createMerchant, requireMerchant, resetSandbox} from '../domain/merchants.js'
import {createPayout} from '../domain/payouts.js'
import {refundPayment} from '../domain/refunds.js'
import {findDoc} from '../domain/shared.js'
import {cancelSubscription, confirmSubscription, setRenewalOutcome, subscriptionFixture, subscriptionSchedule} from '../domain/subscriptions.js'
import {createWebhookEndpoint, deleteWebhookEndpoint, listWebhookEndpoints, requireEndpoint, rotateWebhookSecret, webhookDeliveries} from '../domain/webhook-endpoints.js'
import {notFound} from '../errors.js'
import type {Tx} from '../domain/context.js'
import type {Platform} from '../platform.js'
import type {Scope} from '../storage/documents.js'

/** The merchant and environment an admin body names, checked to exist. */
async function scopeOf(tx: Tx, body: {merchant: string; env: Scope['env']}): Promise<Scope> {
  await requireMerchant(tx, body.merchant)
  return {merchant: body.merchant, env: body.env}
}

/** Where a subscription named by a path id lives (admin calls carry no credential). */
const subscriptionScope = async (tx: Tx, id: string) => (await findDoc(tx, 'subscription', id, 'subscription', 'subscription_not_found')).scope

async function sessionById(tx: Tx, id: string) {
  const found = await findSession(tx, id)
  if (!found) throw notFound('checkout session', id)
  return found
}

/** A merchant's clock (checked to exist), or the shared one, as the clock's rules see it. */
async function testClock(tx: Tx, gw: Platform, merchant: string | undefined, plans?: Parameters<Platform['advanceClock']>[2]): Promise<TestClock> {
  if (merchant !== undefined) await requireMerchant(tx, merchant)
  return {
    merchant: merchant ?? null,
    now: () => gw.now(merchant),
    get offset() {
      return gw.clock.offset(merchant)
    },
    advance: (by) => gw.advanceClock(by, merchant, plans),
  }
}

export const adminHandlers: AdminHandlers = {
  'merchants.create': async ({tx, body}) => adminMerchantView(tx, await createMerchant(tx, body)),
  'merchants.retrieve': async ({tx, params}) => adminMerchantView(tx, await requireMerchant(tx, params.id)),

  'installations.create': ({tx, body}) => createInstallation(tx, body),
  'installations.revoke': ({tx, params}) => revokeCredential(tx, 'installation', params.id),
  'keys.create': ({tx, body}) => createApiKey(tx, body),
  'keys.revoke': ({tx, params}) => revokeCredential(tx, 'key', params.id),

  'clock.retrieve': async ({tx, gw, query}) => clockView(await testClock(tx, gw, query.merchant)),
  'clock.advance': async ({tx, gw, body, keyed}) => advanceClock(await testClock(tx, gw, body.merchant, keyed?.plans), body, {joined: keyed?.joined}),
  'sandbox.reset': ({tx, body}) => resetSandbox(tx, body.merchant),
  'events.list': ({tx, query}) => listEvents(tx, {merchant: query.merchant, env: query.env}, query),
  'events.resend': ({tx, params, body}) => resendEvent(tx, params.id, body.endpoint),
  'events.resendMany': async ({tx, body}) => {
    await requireMerchant(tx, body.merchant)
    return resendEvents(tx, body)
  },

  'webhookEndpoints.create': ({tx, body}) => createWebhookEndpoint(tx, body),
  'webhookEndpoints.list': ({tx, query}) => listWebhookEndpoints(tx, query.merchant),
  'webhookEndpoints.delete': ({tx, params}) => deleteWebhookEndpoint(tx, params.id),
  'webhookEndpoints.deliveries': ({tx, params}) => webhookDeliveries(tx, params.id),
  'webhookEndpoints.rotateSecret': ({tx, params, body}) => rotateWebhookSecret(tx, params.id, body),

  'checkouts.complete': async ({tx, params, body}) => {
    const {scope, session} = await sessionById(tx, params.session_id)
    const buyer = {name: body.customer_name ?? 'Test Customer', email: body.customer_email ?? 'customer@example.com'}
    return completeSession(tx, scope, session, body.outcome, buyer)
  },
  'checkouts.expire': async ({tx, params}) => {
    const {scope, session} = await sessionById(tx, params.session_id)
    return expireOpenSession(tx, scope, session)
  },
  'payments.refund': async ({tx, params, body}) => {
    const {scope, doc} = await findDoc(tx, 'payment', params.id, 'payment')
    return refundPayment(tx, scope, doc, body)
  },
  'payments.dispute': async ({tx, params, body}) => {
    const {scope, doc} = await findDoc(tx, 'payment', params.id, 'payment')
    return disputePayment(tx, scope, doc, body)
  },
  'payouts.create': async ({tx, body}) => createPayout(tx, await scopeOf(tx, body), body),
  'invoices.create': async ({tx, body}) => issueInvoice(tx, await scopeOf(tx, body), body),
  'subscriptions.create': async ({tx, body}) => subscriptionFixture(tx, await scopeOf(tx, body), body),
  'subscriptions.cancel': async ({tx, params, body}) => cancelSubscription(tx, await subscriptionScope(tx, params.id), params.id, body.at_period_end),
  'subscriptions.confirm': async ({tx, params, body}) => confirmSubscription(tx, await subscriptionScope(tx, params.id), params.id, body),
  'subscriptions.renewals': async ({tx, params, body}) => setRenewalOutcome(tx, await subscriptionScope(tx, params.id), params.id, body.outcome),
  'subscriptions.schedule': async ({tx, params}) => subscriptionSchedule(tx, await subscriptionScope(tx, params.id), params.id),

  'faults.create': async ({tx, gw, body}) => {
    if (body.merchant) await requireMerchant(tx, body.merchant)
    if (body.endpoint) await requireEndpoint(tx, body.endpoint, 'endpoint')
    return gw.faults.add(tx, body)
  },
  'faults.list': async ({tx, gw}) => ({object: 'list', has_more: false, data: await gw.faults.list(tx)}),
  'faults.retrieve': async ({tx, gw, params}) => requireFault(await gw.faults.get(tx, params.id), params.id),
  'faults.delete': async ({tx, gw, params}) => {
    if (!(await gw.faults.remove(tx, params.id))) requireFault(undefined, params.id)
    return {id: params.id, object: 'fault', deleted: true}
  },
  'faults.clear': async ({tx, gw}) => ({object: 'faults_cleared', deleted: await gw.faults.clear(tx)}),
}
