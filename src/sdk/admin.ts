/**
 * GatewayAdmin: the local gateway's admin API (`/_admin`, the admin key printed at start), for test
 * suites that set up merchants and credentials, move the clock, play the buyer and the outside world.
 * Bodies are typed from schemas/admin.ts; the gateway validates them, so nothing is checked twice here.
 */
import type {z} from 'zod'

import {InvalidRequestError} from './errors.js'
import type {Page} from './pagination.js'
import {path} from './path.js'
import type * as admin from './schemas/admin.js'
import type {Store} from './schemas/catalog.js'
import type {Environment, Scope} from './schemas/common.js'
import type {CheckoutSession, Dispute, Invoice, Order, Payment, Payout, PlatformEvent, SandboxRefund, Subscription} from './schemas/commerce.js'
import type {RequestOptions} from './client.js'
import {Transport, type HttpMethod, type RequestEvent, type ResponseEvent} from './transport.js'

export interface GatewayAdminOptions {
  /** The gateway's address, e.g. `http://127.0.0.1:4242`. */
  baseUrl: string
  /** The admin key the gateway printed at start (`gw.adminKey` in tests). */
  adminKey: string
  /** Default 0: a local gateway that fails will not succeed a second later. */
  maxRetries?: number
  timeout?: number
  onRequest?: (event: RequestEvent) => void
  onResponse?: (event: ResponseEvent) => void
}

export interface AdminMerchant {
  id: string
  object: 'merchant'
  company: string
  country: string
  vat_number: string | null
  status: string
  created: number
  store: Store
}

export interface AdminInstallation {
  id: string
  object: 'installation'
  /** The installation's access token: pass it to `new AppClient({token})`. */
  token: string
  merchant: string
  store: string
  env: Environment
  scopes: Scope[]
}

export interface AdminSecretKey {
  id: string
  object: 'secret_key'
  /** Pass it to `new StoreClient({secretKey})`. */
  secret_key: string
  merchant: string
  mode: Environment
  scopes: Scope[]
}

export interface AdminRevoked {
  id: string
  object: string
  revoked: true
}

export interface AdminClock {
  object: 'clock'
  /** The gateway's current time, Unix seconds. */
  now: number
  offset_seconds: number
}

export interface AdminSandboxReset {
  object: 'sandbox_reset'
  merchant: string
  deleted_objects: number
}

/** What a simulated buyer's payment attempt produced; `order` is set for paid store sessions. */
export interface AdminCheckoutCompletion {
  session: CheckoutSession
  payment: Payment
  order: Order | null
}

export interface AdminRefundResult {
  refund: SandboxRefund
  payment: Payment
  order: Order | null
}

export interface AdminDisputeResult {
  dispute: Dispute
  payment: Payment
}

export interface AdminEventsQuery {
  merchant: string
  env?: Environment
  /** An event type, or a prefix ending in `*` such as `checkout.session.*`. */
  type?: string
  /** Default 100, at most 1000. */
  limit?: number
}

export interface AdminWebhookEndpoint {
  id: string
  object: 'webhook_endpoint'
  merchant: string
  env: Environment
  url: string
  /** Event types, `prefix.*` patterns, or `*`. */
  events: string[]
  /** The signing secret: in full when created, masked in lists. */
  secret: string
  created: number
}

/** One attempt to deliver one event to an endpoint. */
export interface AdminWebhookDeliveryAttempt {
  object: 'webhook_delivery_attempt'
  delivery: number
  event: string
  type: string
  attempt: number
  attempted: number
  /** The receiver's HTTP status, or null when it gave none (see `error`). */
  status: number | null
  error: string | null
  /** Gateway-clock time of the next attempt; null once delivered or given up. */
  next_attempt: number | null
  delivered: boolean
}

export class GatewayAdmin {
  readonly #transport: Transport

  constructor(opts: GatewayAdminOptions) {
    if (typeof opts?.adminKey !== 'string' || opts.adminKey.trim() === '') {
      throw new InvalidRequestError({message: 'adminKey is required: the key the gateway printed at start', code: 'invalid_option', param: 'adminKey'})
    }
    this.#transport = new Transport({
      baseUrl: `${String(opts.baseUrl).replace(/\/+$/, '')}/_admin`,
      authorization: `Bearer ${opts.adminKey}`,
      maxRetries: opts.maxRetries ?? 0,
      timeout: opts.timeout,
      onRequest: opts.onRequest,
      onResponse: opts.onResponse,
    })
  }

  async #send<T>(method: HttpMethod, url: string, body?: unknown, opts: RequestOptions = {}, query?: Record<string, string | number | undefined>): Promise<T> {
    const res = await this.#transport.request<T>({method, path: url, body, query, ...opts})
    return res.data
  }

  readonly merchants = {
    /** A merchant with a live, approved store unless `store` says otherwise. */
    create: (body: admin.AdminMerchantCreate = {}, opts?: RequestOptions) => this.#send<AdminMerchant>('POST', '/merchants', body, opts),
    retrieve: (merchantId: string, opts?: RequestOptions) => this.#send<AdminMerchant>('GET', path`/merchants/${merchantId}`, undefined, opts),
  }

  readonly installations = {
    /** An app installation on the merchant's store; its `token` drives an AppClient. */
    create: (body: admin.AdminInstallationCreate, opts?: RequestOptions) => this.#send<AdminInstallation>('POST', '/installations', body, opts),
    /** The token fails with 401 on its very next request. */
    revoke: (installationId: string, opts?: RequestOptions) => this.#send<AdminRevoked>('DELETE', path`/installations/${installationId}`, undefined, opts),
  }

  readonly keys = {
    /** A secret key for the store API; its `secret_key` drives a StoreClient. */
    create: (body: admin.AdminKeyCreate, opts?: RequestOptions) => this.#send<AdminSecretKey>('POST', '/keys', body, opts),
    revoke: (keyId: string, opts?: RequestOptions) => this.#send<AdminRevoked>('DELETE', path`/keys/${keyId}`, undefined, opts),
  }

  readonly clock = {
    retrieve: (opts?: RequestOptions) => this.#send<AdminClock>('GET', '/clock', undefined, opts),
    /** Moves the gateway's time forward: sessions expire, trials end, rate-limit windows roll over. */
    advance: (seconds: number, opts?: RequestOptions) => this.#send<AdminClock>('POST', '/clock', {advance_seconds: seconds}, opts),
  }

  readonly sandbox = {
    /** Wipes the merchant's test-environment data; live data and credentials stay. */
    reset: (merchantId: string, opts?: RequestOptions) => this.#send<AdminSandboxReset>('POST', '/sandbox/reset', {merchant: merchantId}, opts),
  }

  readonly events = {
    /** Events the gateway emitted, newest first (what webhooks would deliver). */
    list: (query: AdminEventsQuery, opts?: RequestOptions) =>
      this.#send<Page<PlatformEvent>>('GET', '/events', undefined, opts, {merchant: query.merchant, env: query.env, type: query.type, limit: query.limit}),
  }

  readonly webhookEndpoints = {
    /** An endpoint the gateway POSTs the merchant's events to, signed with `secret` (generated unless given). */
    create: (body: admin.AdminWebhookEndpointCreate, opts?: RequestOptions) => this.#send<AdminWebhookEndpoint>('POST', '/webhook_endpoints', body, opts),
    /** The merchant's endpoints, secrets masked. */
    list: (merchantId: string, opts?: RequestOptions) =>
      this.#send<Page<AdminWebhookEndpoint>>('GET', '/webhook_endpoints', undefined, opts, {merchant: merchantId}),
    delete: (endpointId: string, opts?: RequestOptions) =>
      this.#send<{id: string; object: 'webhook_endpoint'; deleted: true}>('DELETE', path`/webhook_endpoints/${endpointId}`, undefined, opts),
    /** The attempt log, oldest first. */
    deliveries: (endpointId: string, opts?: RequestOptions) =>
      this.#send<Page<AdminWebhookDeliveryAttempt>>('GET', path`/webhook_endpoints/${endpointId}/deliveries`, undefined, opts),
  }

  readonly checkouts = {
    /** Plays the buyer on an open checkout session: `paid` (default) completes it, `declined` records a failed attempt. */
    complete: (sessionId: string, body: z.input<typeof admin.adminCheckoutComplete> = {}, opts?: RequestOptions) =>
      this.#send<AdminCheckoutCompletion>('POST', path`/checkouts/${sessionId}/complete`, body, opts),
  }

  readonly payments = {
    /** Refunds all (default) or part of what is left of a payment. */
    refund: (paymentId: string, body: z.input<typeof admin.adminRefundCreate> = {}, opts?: RequestOptions) =>
      this.#send<AdminRefundResult>('POST', path`/payments/${paymentId}/refund`, body, opts),
    /** The buyer's bank opens a chargeback. */
    dispute: (paymentId: string, body: z.input<typeof admin.adminDisputeCreate> = {}, opts?: RequestOptions) =>
      this.#send<AdminDisputeResult>('POST', path`/payments/${paymentId}/dispute`, body, opts),
  }

  readonly payouts = {
    create: (body: z.input<typeof admin.adminPayoutCreate>, opts?: RequestOptions) => this.#send<Payout>('POST', '/payouts', body, opts),
  }

  readonly invoices = {
    /** Live only, as the platform issues invoices in live only. */
    create: (body: z.input<typeof admin.adminInvoiceCreate>, opts?: RequestOptions) => this.#send<Invoice>('POST', '/invoices', body, opts),
  }

  readonly subscriptions = {
    /** A subscription already moved to `status` (default active), with its customer. */
    create: (body: z.input<typeof admin.adminSubscriptionCreate>, opts?: RequestOptions) => this.#send<Subscription>('POST', '/subscriptions', body, opts),
    /** At period end (default) or now; a second cancel is 409 `subscription_already_canceled`. */
    cancel: (subscriptionId: string, body: z.input<typeof admin.adminSubscriptionCancel> = {}, opts?: RequestOptions) =>
      this.#send<Subscription>('POST', path`/subscriptions/${subscriptionId}/cancel`, body, opts),
  }
}
