/**
 * The admin API's handlers, one per entry of packages/sdk/src/admin-endpoints.ts: each names the domain function
 * it calls. Admin calls carry no credential, so a body names its merchant and environment, and a path id
 * is found in whichever scope holds it.
 */
import type {AdminHandlers} from '../admin.js'
import {advanceClock, clockView} from '../domain/clock.js'
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
import type {Platform} from '../platform.js'
import type {Scope} from '../storage/documents.js'

/** The merchant and environment an admin body names, checked to exist. */
function scopeOf(gw: Platform, body: {merchant: string; env: Scope['env']}): Scope {
  requireMerchant(gw, body.merchant)
  return {merchant: body.merchant, env: body.env}
}

/** Where a subscription named by a path id lives (admin calls carry no credential). */
const subscriptionScope = (gw: Platform, id: string) => findDoc(gw, 'subscription', id, 'subscription', 'subscription_not_found').scope

function sessionById(gw: Platform, id: string) {
  const found = findSession(gw, id)
  if (!found) throw notFound('checkout session', id)
  return found
}

export const adminHandlers: AdminHandlers = {
  'merchants.create': ({gw, body}) => adminMerchantView(gw, createMerchant(gw, body)),
  'merchants.retrieve': ({gw, params}) => adminMerchantView(gw, requireMerchant(gw, params.id)),

  'installations.create': ({gw, body}) => createInstallation(gw, body),
  'installations.revoke': ({gw, params}) => revokeCredential(gw, 'installation', params.id),
  'keys.create': ({gw, body}) => createApiKey(gw, body),
  'keys.revoke': ({gw, params}) => revokeCredential(gw, 'key', params.id),

  'clock.retrieve': ({gw}) => clockView(gw),
  'clock.advance': ({gw, body}) => advanceClock(gw, body),
  'sandbox.reset': ({gw, body}) => resetSandbox(gw, body.merchant),
  'events.list': ({gw, query}) => listEvents(gw, {merchant: query.merchant, env: query.env}, query),
  'events.resend': ({gw, params, body}) => resendEvent(gw, params.id, body.endpoint),
  'events.resendMany': ({gw, body}) => {
    requireMerchant(gw, body.merchant)
    return resendEvents(gw, body)
  },

  'webhookEndpoints.create': ({gw, body}) => createWebhookEndpoint(gw, body),
  'webhookEndpoints.list': ({gw, query}) => listWebhookEndpoints(gw, query.merchant),
  'webhookEndpoints.delete': ({gw, params}) => deleteWebhookEndpoint(gw, params.id),
  'webhookEndpoints.deliveries': ({gw, params}) => webhookDeliveries(gw, params.id),
  'webhookEndpoints.rotateSecret': ({gw, params, body}) => rotateWebhookSecret(gw, params.id, body),

  'checkouts.complete': ({gw, params, body}) => {
    const {scope, session} = sessionById(gw, params.session_id)
    const buyer = {name: body.customer_name ?? 'Test Customer', email: body.customer_email ?? 'customer@example.com'}
    return completeSession(gw, scope, session, body.outcome, buyer)
  },
  'checkouts.expire': ({gw, params}) => {
    const {scope, session} = sessionById(gw, params.session_id)
    return expireOpenSession(gw, scope, session)
  },
  'payments.refund': ({gw, params, body}) => {
    const {scope, doc} = findDoc(gw, 'payment', params.id, 'payment')
    return refundPayment(gw, scope, doc, body)
  },
  'payments.dispute': ({gw, params, body}) => {
    const {scope, doc} = findDoc(gw, 'payment', params.id, 'payment')
    return disputePayment(gw, scope, doc, body)
  },
  'payouts.create': ({gw, body}) => createPayout(gw, scopeOf(gw, body), body),
  'invoices.create': ({gw, body}) => issueInvoice(gw, scopeOf(gw, body), body),
  'subscriptions.create': ({gw, body}) => subscriptionFixture(gw, scopeOf(gw, body), body),
  'subscriptions.cancel': ({gw, params, body}) => cancelSubscription(gw, subscriptionScope(gw, params.id), params.id, body.at_period_end),
  'subscriptions.confirm': ({gw, params, body}) => confirmSubscription(gw, subscriptionScope(gw, params.id), params.id, body),
  'subscriptions.renewals': ({gw, params, body}) => setRenewalOutcome(gw, subscriptionScope(gw, params.id), params.id, body.outcome),
  'subscriptions.schedule': ({gw, params}) => subscriptionSchedule(gw, subscriptionScope(gw, params.id), params.id),

  'faults.create': ({gw, body}) => {
    if (body.merchant) requireMerchant(gw, body.merchant)
    if (body.endpoint) requireEndpoint(gw, body.endpoint, 'endpoint')
    return gw.faults.add(body)
  },
  'faults.list': ({gw}) => ({object: 'list', has_more: false, data: gw.faults.list()}),
  'faults.retrieve': ({gw, params}) => requireFault(gw.faults, params.id),
  'faults.delete': ({gw, params}) => {
    gw.faults.remove(requireFault(gw.faults, params.id).id)
    return {id: params.id, object: 'fault', deleted: true}
  },
  'faults.clear': ({gw}) => ({object: 'faults_cleared', deleted: gw.faults.clear()}),
}
