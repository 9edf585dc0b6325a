/**
 * GatewayAdmin: the local gateway's admin API (`/_admin`, the admin key printed at start), for test
 * suites that set up merchants and credentials, move the clock, play the buyer and the outside world.
 * Every method names its entry in admin-endpoints.ts, which gives its path, method, body type and the
 * schema its answer is parsed with; the gateway validates bodies, so nothing is checked twice here.
 */
import type {z} from 'zod'

import {adminEndpoints, ADMIN_PREFIX, type AdminBodyOf, type AdminEndpoint, type AdminEndpointDef, type AdminEndpointId, type AdminQueryOf, type AdminResultOf} from './admin-endpoints.js'
import type {ClientOptions} from './client.js'
import {InvalidRequestError} from './errors.js'
import type {Page} from './pagination.js'
import {parsePage, parseResponse} from './parse.js'
import {fillPath} from './path.js'
import type * as admin from './schemas/admin.js'
import {Transport, transportOptions} from './transport.js'
import type {RequestOptions} from './types.js'

export type {
  AdminMerchant,
  AdminInstallation,
  AdminSecretKey,
  AdminPublishableKey,
  AdminRevoked,
  AdminClock,
  AdminSandboxReset,
  AdminCheckoutCompletion,
  AdminRefundResult,
  AdminDisputeResult,
  AdminEventsQuery,
  AdminWebhookEndpoint,
  AdminWebhookDeliveryAttempt,
  AdminFault,
  AdminSubscriptionConfirmation,
  AdminScheduledJob,
  AdminEventResendResult,
} from './schemas/admin.js'

/** The client options that apply to the admin API (ClientOptions documents each). */
export interface GatewayAdminOptions
  extends Pick<ClientOptions, 'baseUrl' | 'maxRetries' | 'timeout' | 'totalTimeout' | 'loopbackRefused' | 'fetch' | 'onRequest' | 'onResponse'> {
  /** The admin key the gateway printed at start (`gw.adminKey` in tests). */
  adminKey: string
  /** Default 0 (not ClientOptions' 4): a local gateway that fails will not succeed a second later. */
  maxRetries?: number
}

interface AdminCall<Id extends AdminEndpointId> {
  params?: Record<string, string>
  body?: AdminBodyOf<Id>
  query?: AdminQueryOf<Id>
  opts?: RequestOptions
}
type AdminResult<Id extends AdminEndpointId> = Promise<AdminEndpoint<Id> extends {list: true} ? Page<AdminResultOf<Id>> : AdminResultOf<Id>>

/** Request options plus whose clock: a merchant id, or none for the shared clock (an advance moves every clock). */
export type ClockOptions = RequestOptions & {merchant?: string}

export class GatewayAdmin {
  readonly #transport: Transport

  constructor(opts: GatewayAdminOptions) {
    if (typeof opts?.adminKey !== 'string' || opts.adminKey.trim() === '') {
      throw new InvalidRequestError({message: 'adminKey is required: the key the gateway printed at start', code: 'invalid_option', param: 'adminKey'})
    }
    this.#transport = new Transport({
      ...transportOptions(opts),
      baseUrl: `${String(opts.baseUrl).replace(/\/+$/, '')}${ADMIN_PREFIX}`,
      authorization: `Bearer ${opts.adminKey}`,
      maxRetries: opts.maxRetries ?? 0,
    })
  }

  /** Calls any admin endpoint by its id in the admin table; the namespaces below are built on it. */
  async call<Id extends AdminEndpointId>(id: Id, args: AdminCall<Id> = {}): AdminResult<Id> {
    const def: AdminEndpointDef = adminEndpoints[id]
    const query = args.query as Record<string, string | number | undefined> | undefined
    const res = await this.#transport.request({method: def.method, path: fillPath(def.path, args.params), body: args.body, query, ...args.opts})
    return (def.list ? parsePage(def.response, res.data, `admin ${id}`) : parseResponse(def.response, res.data, `admin ${id}`)) as Awaited<AdminResult<Id>>
  }

  readonly merchants = {
    /** A merchant with a live, approved store unless `store` says otherwise. */
    create: (body: admin.AdminMerchantCreate = {}, opts?: RequestOptions) => this.call('merchants.create', {body, opts}),
    retrieve: (merchantId: string, opts?: RequestOptions) => this.call('merchants.retrieve', {params: {id: merchantId}, opts}),
  }

  readonly installations = {
    /** An app installation on the merchant's store; its `token` drives an AppClient. */
    create: (body: admin.AdminInstallationCreate, opts?: RequestOptions) => this.call('installations.create', {body, opts}),
    /** The token fails with 401 on its very next request. */
    revoke: (installationId: string, opts?: RequestOptions) => this.call('installations.revoke', {params: {id: installationId}, opts}),
  }

  readonly keys = {
    /** A secret key (its `secret_key` drives a StoreClient or MerchantClient); with `type: 'publishable'`, a browser key. */
    create: ((body: admin.AdminKeyCreate, opts?: RequestOptions) => this.call('keys.create', {body, opts})) as {
      (body: admin.AdminKeyCreate & {type: 'publishable'}, opts?: RequestOptions): Promise<admin.AdminPublishableKey>
      (body: admin.AdminKeyCreate & {type?: 'secret'}, opts?: RequestOptions): Promise<admin.AdminSecretKey>
    },
    revoke: (keyId: string, opts?: RequestOptions) => this.call('keys.revoke', {params: {id: keyId}, opts}),
  }

  /** Each merchant has its own test clock: `{merchant}` reads or moves that one; without it, the shared one (moving every clock). */
  readonly clock = {
    retrieve: ({merchant, ...opts}: ClockOptions = {}) => this.call('clock.retrieve', {query: {merchant}, opts}),
    /**
     * Moves the merchant's time (every merchant's without one) forward and resolves once everything due
     * up to the new time has happened in time order: expiries, renewals, dunning, trial reminders, webhook attempts.
     * Sent again with its Idempotency-Key like any write when the connection drops: the gateway walks the jump
     * the first request planned to its end, so the clock moves once.
     */
    advance: (seconds: number, {merchant, ...opts}: ClockOptions = {}) => this.call('clock.advance', {body: {merchant, advance_seconds: seconds}, opts}),
    /** Moves the clock to the Unix time `t` exactly (400 `clock_in_past` if it already passed). */
    advanceTo: (t: number, {merchant, ...opts}: ClockOptions = {}) => this.call('clock.advance', {body: {merchant, advance_to: t}, opts}),
  }

  readonly sandbox = {
    /** Wipes the merchant's test-environment data; live data and credentials stay. */
    reset: (merchantId: string, opts?: RequestOptions) => this.call('sandbox.reset', {body: {merchant: merchantId}, opts}),
  }

  readonly events = {
    /** Events the gateway emitted, newest first (what webhooks would deliver). */
    list: (query: admin.AdminEventsQuery, opts?: RequestOptions) => this.call('events.list', {query, opts}),
    /** Queues an event again: to one endpoint, or to every endpoint of its merchant and environment that selects it. */
    resend: (eventId: string, body: z.input<typeof admin.adminEventResend> = {}, opts?: RequestOptions) =>
      this.call('events.resend', {params: {id: eventId}, body, opts}),
    /** Queues again every logged event the filter selects (`delivery: 'failed'`, `since`, `type`…), oldest first. */
    resendMany: (body: admin.AdminEventsResend, opts?: RequestOptions) => this.call('events.resendMany', {body, opts}),
  }

  readonly webhookEndpoints = {
    /** An endpoint the gateway POSTs the merchant's events to, signed with `secret` (generated unless given). */
    create: (body: admin.AdminWebhookEndpointCreate, opts?: RequestOptions) => this.call('webhookEndpoints.create', {body, opts}),
    /** The merchant's endpoints, secrets masked. */
    list: (merchantId: string, opts?: RequestOptions) => this.call('webhookEndpoints.list', {query: {merchant: merchantId}, opts}),
    delete: (endpointId: string, opts?: RequestOptions) => this.call('webhookEndpoints.delete', {params: {id: endpointId}, opts}),
    /** The attempt log in the order attempts were made, with what fault rules injected (`fault`, `injected`). */
    deliveries: (endpointId: string, opts?: RequestOptions) => this.call('webhookEndpoints.deliveries', {params: {id: endpointId}, opts}),
    /**
     * A new signing secret, in full this once; the previous one keeps signing (a second `v1`) for
     * `expire_previous_in_seconds` of gateway-clock time (default 24 h; 0 ends it at once).
     */
    rotateSecret: (endpointId: string, body: admin.AdminWebhookSecretRotate = {}, opts?: RequestOptions) =>
      this.call('webhookEndpoints.rotateSecret', {params: {id: endpointId}, body, opts}),
  }

  readonly checkouts = {
    /** Plays the buyer on an open checkout session: `paid` (default) completes it, `declined` records a failed attempt. */
    complete: (sessionId: string, body: z.input<typeof admin.adminCheckoutComplete> = {}, opts?: RequestOptions) =>
      this.call('checkouts.complete', {params: {session_id: sessionId}, body, opts}),
    /** Plays the buyer walking away: the open session expires now and its held stock returns. */
    expire: (sessionId: string, opts?: RequestOptions) => this.call('checkouts.expire', {params: {session_id: sessionId}, opts}),
  }

  readonly payments = {
    /** Refunds all (default) or part of what is left of a payment. */
    refund: (paymentId: string, body: z.input<typeof admin.adminRefundCreate> = {}, opts?: RequestOptions) =>
      this.call('payments.refund', {params: {id: paymentId}, body, opts}),
    /** The buyer's bank opens a chargeback. */
    dispute: (paymentId: string, body: z.input<typeof admin.adminDisputeCreate> = {}, opts?: RequestOptions) =>
      this.call('payments.dispute', {params: {id: paymentId}, body, opts}),
  }

  readonly payouts = {
    create: (body: z.input<typeof admin.adminPayoutCreate>, opts?: RequestOptions) => this.call('payouts.create', {body, opts}),
  }

  readonly invoices = {
    /** Live only, as the platform issues invoices in live only. */
    create: (body: z.input<typeof admin.adminInvoiceCreate>, opts?: RequestOptions) => this.call('invoices.create', {body, opts}),
  }

  readonly faults = {
    /** Makes matching API requests answer 429/500/503 or late, before they write anything. */
    create: (body: admin.AdminFaultCreate, opts?: RequestOptions) => this.call('faults.create', {body, opts}),
    /** The rules, with how often each struck (`hits`) and how many faults are left (`remaining`). */
    list: (opts?: RequestOptions) => this.call('faults.list', {opts}),
    retrieve: (faultId: string, opts?: RequestOptions) => this.call('faults.retrieve', {params: {id: faultId}, opts}),
    delete: (faultId: string, opts?: RequestOptions) => this.call('faults.delete', {params: {id: faultId}, opts}),
    /** Removes every rule. */
    clear: (opts?: RequestOptions) => this.call('faults.clear', {opts}),
  }

  readonly subscriptions = {
    /** A subscription already moved to `status` (default active), with its customer. */
    create: (body: z.input<typeof admin.adminSubscriptionCreate>, opts?: RequestOptions) => this.call('subscriptions.create', {body, opts}),
    /** At period end (default) or now; a second cancel is 409 `subscription_already_canceled`. */
    cancel: (subscriptionId: string, body: z.input<typeof admin.adminSubscriptionCancel> = {}, opts?: RequestOptions) =>
      this.call('subscriptions.cancel', {params: {id: subscriptionId}, body, opts}),
    /** Plays the buyer on the client secret: `paid` (default) or `declined`; `renewals: 'fail'` makes later renewals decline. */
    confirm: (subscriptionId: string, body: z.input<typeof admin.adminSubscriptionConfirm> = {}, opts?: RequestOptions) =>
      this.call('subscriptions.confirm', {params: {id: subscriptionId}, body, opts}),
    /** Swaps the stored card: later renewal charges and dunning retries succeed or fail. */
    renewals: (subscriptionId: string, outcome: 'succeed' | 'fail', opts?: RequestOptions) =>
      this.call('subscriptions.renewals', {params: {id: subscriptionId}, body: {outcome}, opts}),
    /** The subscription's pending work on the clock (renewal, reminder, expiry, dunning retries), soonest first. */
    schedule: (subscriptionId: string, opts?: RequestOptions) => this.call('subscriptions.schedule', {params: {id: subscriptionId}, opts}),
  }
}
