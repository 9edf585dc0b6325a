/**
 * Every route of the gateway's admin API (`/_admin`, `Authorization: Bearer <admin_key>`), written once
 * like endpoints.ts: the gateway registers one handler per entry behind one auth hook, `GatewayAdmin`
 * derives its methods from it and parses each answer with the entry's response schema.
 */
import type {z} from 'zod'

import {lazyTable, type Schema} from './endpoints.js'
import * as admin from './schemas/admin.js'
import * as commerce from './schemas/commerce.js'

export type AdminMethod = 'GET' | 'POST' | 'DELETE'

export interface AdminEndpointDef {
  method: AdminMethod
  /** Relative to `/_admin`; `{name}` marks a path parameter. */
  path: string
  summary: string
  body?: z.ZodType
  query?: z.ZodType
  /** The item schema for lists, the object schema otherwise. */
  response: z.ZodType
  /** The status of a success: 201 for what the call creates. */
  status: 200 | 201
  list?: boolean
}

/** What an entry may add beyond its method, path, response and summary; schemas named through functions. */
type AdminExtra = Partial<Omit<AdminEndpointDef, 'body' | 'query'>> & {body?: Schema<z.ZodType>; query?: Schema<z.ZodType>}

/** Its schemas are named through functions and built on first read, as the endpoint table's are (lazyTable in endpoints.ts). */
function adminRoute<M extends AdminMethod, R extends z.ZodType, const X extends AdminExtra = object>(
  method: M,
  path: string,
  response: Schema<R>,
  summary: string,
  extra: X = {} as X,
) {
  return {method, path, response, summary, status: method === 'POST' ? 201 : 200, ...extra} as const
}
const ok = {status: 200} as const

export const adminEndpoints = lazyTable({
  'merchants.create': adminRoute('POST', '/merchants', () => admin.adminMerchant, 'A merchant with a live, approved store unless `store` says otherwise', {body: () => admin.adminMerchantCreate}),
  'merchants.retrieve': adminRoute('GET', '/merchants/{id}', () => admin.adminMerchant, 'One merchant with its store'),

  'installations.create': adminRoute('POST', '/installations', () => admin.adminInstallation, "An app installation on the merchant's store; its token drives an AppClient", {
    body: () => admin.adminInstallationCreate,
  }),
  'installations.revoke': adminRoute('DELETE', '/installations/{id}', () => admin.adminRevoked, 'Revoke an installation: its token fails with 401 on its very next request'),
  'keys.create': adminRoute('POST', '/keys', () => admin.adminApiKey, 'A secret key (store and merchant APIs) or, with type publishable, a browser key for allow-listed origins', {
    body: () => admin.adminKeyCreate,
  }),
  'keys.revoke': adminRoute('DELETE', '/keys/{id}', () => admin.adminRevoked, 'Revoke a secret or publishable key'),

  'clock.retrieve': adminRoute('GET', '/clock', () => admin.adminClock, "A merchant's time and its test clock's offset (without merchant: the shared clock's)", {
    query: () => admin.adminClockQuery,
  }),
  'clock.advance': adminRoute('POST', '/clock', () => admin.adminClock, "Move a merchant's time forward (without merchant: every merchant's); answers once everything due on the way happened, in time order, webhook attempts included", {
    body: () => admin.adminClockAdvance,
    ...ok,
  }),
  'sandbox.reset': adminRoute('POST', '/sandbox/reset', () => admin.adminSandboxResetResult, "Wipe the merchant's test-environment data; live data and credentials stay", {
    body: () => admin.adminSandboxReset,
    ...ok,
  }),
  'events.list': adminRoute('GET', '/events', () => commerce.event, 'Events the gateway emitted, newest first (what webhooks deliver), by type, time and delivery state', {
    query: () => admin.adminEventsQuery,
    list: true,
  }),
  'events.resendMany': adminRoute('POST', '/events/resend', () => admin.adminEventsResendResult, 'Queue again every logged event a filter selects (type, time, delivery state), oldest first', {
    body: () => admin.adminEventsResend,
    ...ok,
  }),
  'events.resend': adminRoute('POST', '/events/{id}/resend', () => admin.adminEventResendResult, 'Queue a logged event again: to one endpoint, or every endpoint that selects it', {
    body: () => admin.adminEventResend,
    ...ok,
  }),

  'webhookEndpoints.create': adminRoute('POST', '/webhook_endpoints', () => admin.adminWebhookEndpoint, "An endpoint the merchant's events are POSTed to, signed with its secret (shown in full once)", {
    body: () => admin.adminWebhookEndpointCreate,
  }),
  'webhookEndpoints.list': adminRoute('GET', '/webhook_endpoints', () => admin.adminWebhookEndpoint, "The merchant's endpoints, secrets masked", {query: () => admin.adminMerchantQuery, list: true}),
  'webhookEndpoints.delete': adminRoute('DELETE', '/webhook_endpoints/{id}', () => admin.adminWebhookEndpointDeleted, 'Delete an endpoint and stop its deliveries'),
  'webhookEndpoints.deliveries': adminRoute(
    'GET',
    '/webhook_endpoints/{id}/deliveries',
    () => admin.adminWebhookDeliveryAttempt,
    "An endpoint's delivery attempts in the order they were made, with what fault rules injected",
    {list: true},
  ),
  'webhookEndpoints.rotateSecret': adminRoute(
    'POST',
    '/webhook_endpoints/{id}/rotate_secret',
    () => admin.adminWebhookEndpoint,
    'A new signing secret (in full, once); the previous one keeps signing as a second v1 until it expires (default 24 h on the gateway clock, 0: at once)',
    {body: () => admin.adminWebhookSecretRotate, ...ok},
  ),

  'checkouts.complete': adminRoute('POST', '/checkouts/{session_id}/complete', () => admin.adminCheckoutCompletion, 'Play the buyer: pay (default) or decline an open checkout session', {
    body: () => admin.adminCheckoutComplete,
    ...ok,
  }),
  'checkouts.expire': adminRoute('POST', '/checkouts/{session_id}/expire', () => commerce.sessionExpired, 'Play the buyer walking away: expire an open checkout session now', ok),
  'payments.refund': adminRoute('POST', '/payments/{id}/refund', () => admin.adminRefundResult, 'Refund all (default) or part of what is left of a payment', {body: () => admin.adminRefundCreate}),
  'payments.dispute': adminRoute('POST', '/payments/{id}/dispute', () => admin.adminDisputeResult, "The buyer's bank opens a chargeback", {body: () => admin.adminDisputeCreate}),
  'payouts.create': adminRoute('POST', '/payouts', () => commerce.payout, 'A payout of the merchant (payouts are the platform\'s, not reachable by apps)', {body: () => admin.adminPayoutCreate}),
  'invoices.create': adminRoute('POST', '/invoices', () => commerce.invoice, 'An invoice (live only, as the platform issues invoices in live only)', {body: () => admin.adminInvoiceCreate}),
  'subscriptions.create': adminRoute('POST', '/subscriptions', () => commerce.subscription, 'A subscription already moved to `status` (default active), with its customer', {
    body: () => admin.adminSubscriptionCreate,
  }),
  'subscriptions.cancel': adminRoute('POST', '/subscriptions/{id}/cancel', () => commerce.subscription, 'Cancel at period end (default) or now; a second cancel is 409', {
    body: () => admin.adminSubscriptionCancel,
    ...ok,
  }),

  'faults.create': adminRoute('POST', '/faults', () => admin.adminFault, 'Make matching API requests answer 429/500/503 or late, before they run (nothing is written), or webhook deliveries duplicated, delayed, reordered or failed', {
    body: () => admin.adminFaultCreate,
  }),
  'faults.list': adminRoute('GET', '/faults', () => admin.adminFault, 'The fault rules, with their hits and remaining counts', {list: true}),
  'faults.retrieve': adminRoute('GET', '/faults/{id}', () => admin.adminFault, 'One fault rule'),
  'faults.delete': adminRoute('DELETE', '/faults/{id}', () => admin.adminFaultDeleted, 'Remove one fault rule'),
  'faults.clear': adminRoute('DELETE', '/faults', () => admin.adminFaultsCleared, 'Remove every fault rule'),
  'subscriptions.confirm': adminRoute('POST', '/subscriptions/{id}/confirm', () => admin.adminSubscriptionConfirmation, 'Play the buyer on the client secret: pay (or store the card of a trial) or decline', {
    body: () => admin.adminSubscriptionConfirm,
    ...ok,
  }),
  'subscriptions.renewals': adminRoute('POST', '/subscriptions/{id}/renewals', () => commerce.subscription, 'Swap the stored card: later renewal charges and dunning retries succeed or fail', {
    body: () => admin.adminSubscriptionRenewals,
    ...ok,
  }),
  'subscriptions.schedule': adminRoute('GET', '/subscriptions/{id}/schedule', () => admin.adminScheduledJob, "A subscription's pending work on the clock, soonest first", {list: true}),
}) satisfies Record<string, AdminEndpointDef>

export type AdminEndpointId = keyof typeof adminEndpoints
export type AdminEndpoint<Id extends AdminEndpointId> = (typeof adminEndpoints)[Id]

/** Base path of the admin API, relative to the gateway's address. */
export const ADMIN_PREFIX = '/_admin'

/** Request body type of an admin endpoint (what a caller sends). */
export type AdminBodyOf<Id extends AdminEndpointId> = AdminEndpoint<Id> extends {body: infer B extends z.ZodType} ? z.input<B> : never
/** Query type of an admin endpoint (what a caller sends). */
export type AdminQueryOf<Id extends AdminEndpointId> = AdminEndpoint<Id> extends {query: infer Q extends z.ZodType} ? z.input<Q> : never
/** Result type of an admin endpoint (one object, or the item type of a list). */
export type AdminResultOf<Id extends AdminEndpointId> = z.output<AdminEndpoint<Id>['response']>
