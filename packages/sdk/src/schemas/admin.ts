/**
 * The gateway's admin API (`/_admin`, `Authorization: Bearer <admin_key>`): a fixed contract that users'
 * test suites script against to set up merchants, credentials, the test clock and simulated buyers.
 */
import * as z from 'zod'

import {store} from './catalog.js'
import {checkoutSession, dispute, invoice, order, payment, sandboxRefund, subscription} from './commerce.js'
import {amount, currency, environment, resource, scope, timestamp, webUrl} from './common.js'

// ---------------------------------------------------------------- request bodies and queries

export const adminMerchantCreate = z.strictObject({
  company: z.string().trim().min(1).max(200).optional(),
  status: z.enum(['active', 'not_ready']).default('active').describe('not_ready: creates answer 409 merchant_not_ready'),
  plan: z
    .strictObject({
      product_limit: z.number().int().min(0).optional().describe('Products the merchant may create (then 402)'),
      checkout_limit: z.number().int().min(0).optional().describe('Checkout sessions the merchant may create per environment (then 402)'),
    })
    .optional(),
  country: z.string().regex(/^[A-Za-z]{2}$/).optional(),
  vat_number: z.string().max(40).nullable().optional(),
  store: z
    .strictObject({
      slug: z.string().regex(/^[a-z0-9][a-z0-9-]{1,62}$/).optional(),
      display_name: z.string().trim().min(1).max(120).optional(),
      status: z.enum(['draft', 'live', 'paused']).optional(),
      approval: z.enum(['pending', 'approved', 'rejected']).optional(),
    })
    .optional(),
})
export type AdminMerchantCreate = z.input<typeof adminMerchantCreate>
export type AdminMerchantCreateOut = z.output<typeof adminMerchantCreate>

export const adminInstallationCreate = z.strictObject({
  merchant: z.string().min(1),
  env: environment,
  scopes: z.array(scope).default([]),
  app_name: z.string().max(120).optional(),
})
export type AdminInstallationCreate = z.input<typeof adminInstallationCreate>
export type AdminInstallationCreateOut = z.output<typeof adminInstallationCreate>

/** A browser origin as the `Origin` header carries it: scheme, host and optional port, no path. */
const origin = z.string().regex(/^https?:\/\/[a-z0-9.-]+(:\d{1,5})?$/i, {message: 'must be an origin such as https://shop.example.com'})

export const adminKeyCreate = z
  .strictObject({
    merchant: z.string().min(1),
    mode: environment,
    scopes: z.array(scope).default([]),
    type: z.enum(['secret', 'publishable']).default('secret'),
    allowed_origins: z.array(origin).max(50).default([]),
  })
  .refine((k) => k.type === 'publishable' || k.allowed_origins.length === 0, {
    message: 'allowed_origins is for publishable keys; secret keys are server-side only',
    path: ['allowed_origins'],
  })
export type AdminKeyCreate = z.input<typeof adminKeyCreate>
export type AdminKeyCreateOut = z.output<typeof adminKeyCreate>

/** No cap worth the name: a century, so a jump can never overflow the clock's arithmetic. */
export const MAX_CLOCK_ADVANCE_SECONDS = 100 * 366 * 86400

/** Whose clock: each merchant has one; without a merchant, the shared clock (every merchant that never moved alone). */
const clockMerchant = z.string().min(1).describe("Merchant id (mch_…): that merchant's clock alone; omitted: every clock")

/**
 * Moves the merchant's clock (every clock without `merchant`) by `advance_seconds`, or to the Unix time
 * `advance_to` (never backwards); one of the two.
 */
export const adminClockAdvance = z
  .strictObject({
    merchant: clockMerchant.optional(),
    advance_seconds: z.number().int().min(0).max(MAX_CLOCK_ADVANCE_SECONDS).optional(),
    advance_to: z.number().int().min(0).optional(),
  })
  .refine((b) => (b.advance_seconds === undefined) !== (b.advance_to === undefined), {
    message: 'send exactly one of advance_seconds and advance_to',
    path: ['advance_seconds'],
    params: {code: 'parameter_missing'},
  })

export const adminSandboxReset = z.strictObject({merchant: z.string().min(1)})

export const adminCheckoutComplete = z.strictObject({
  /** `processing`: the payment starts and stays unconfirmed (updates then get `confirmation_in_progress`) until paid or declined. */
  outcome: z.enum(['paid', 'declined', 'processing']).default('paid'),
  customer_name: z.string().trim().min(2).max(120).optional(),
  customer_email: z.email().optional(),
})

export const adminRefundCreate = z.strictObject({
  amount: z.number().int().min(1).optional().describe('Minor units; default: the rest of the payment'),
  reason: z.string().max(200).optional(),
})

export const adminDisputeCreate = z.strictObject({
  reason: z.string().max(100).default('fraudulent'),
  evidence_due_in_days: z.number().int().min(-365).max(365).default(7),
})

export const adminPayoutCreate = z.strictObject({
  merchant: z.string().min(1),
  env: environment,
  amount: z.number().int().min(1),
  currency,
  status: z.enum(['pending', 'in_transit', 'paid', 'failed']).default('paid'),
})

export const adminInvoiceCreate = z.strictObject({
  merchant: z.string().min(1),
  env: environment,
  subscription: z.string().optional(),
  amount: amount.optional(),
  currency: currency.optional(),
  status: z.enum(['open', 'paid', 'void', 'uncollectible']).default('paid'),
})

export const adminSubscriptionCreate = z.strictObject({
  merchant: z.string().min(1),
  env: environment,
  price_id: z.string().optional(),
  amount: amount.optional(),
  currency: currency.optional(),
  interval: z.enum(['day', 'week', 'month', 'year']).default('month'),
  quantity: z.number().int().min(1).default(1),
  customer_name: z.string().trim().min(2).max(120).default('Test Customer'),
  customer_email: z.email().default('customer@example.com'),
  trial_days: z.number().int().min(1).max(730).optional(),
  status: z.enum(['incomplete', 'trialing', 'active', 'past_due', 'unpaid', 'canceled']).default('active'),
})

export const adminSubscriptionCancel = z.strictObject({
  at_period_end: z.boolean().default(true),
})

/** Plays the buyer on an incomplete subscription's client secret; `renewals: fail` makes later renewal charges decline. */
export const adminSubscriptionConfirm = z.strictObject({
  outcome: z.enum(['paid', 'declined']).default('paid'),
  renewals: z.enum(['succeed', 'fail']).optional(),
})

/** Swaps the stored card of a confirmed subscription: later renewal charges and dunning retries succeed or fail. */
export const adminSubscriptionRenewals = z.strictObject({
  outcome: z.enum(['succeed', 'fail']),
})

/** `POST /_admin/events/{id}/resend`: to one endpoint, or to every endpoint that selects the event's type. */
export const adminEventResend = z.strictObject({
  endpoint: z.string().min(1).optional(),
})

/** An event type, `*` (every type), or a prefix pattern such as `checkout.session.*`. */
export const webhookEventPattern = z.string().regex(/^(\*|[a-z0-9_]+(\.[a-z0-9_]+)*(\.\*)?)$/, 'an event type, a prefix pattern ending in .*, or *')

export const adminWebhookEndpointCreate = z.strictObject({
  merchant: z.string().min(1),
  env: environment,
  url: webUrl(/^https?$/),
  events: z.array(webhookEventPattern).min(1).default(['*']),
  secret: z.string().min(8).max(200).optional(),
  /** An installed app's endpoint (`inst_…` of this merchant and environment): it receives only what the app's scopes may read. */
  installation: z.string().min(1).optional(),
})
export type AdminWebhookEndpointCreate = z.input<typeof adminWebhookEndpointCreate>

/** `POST /_admin/webhook_endpoints/{id}/rotate_secret`. */
export const adminWebhookSecretRotate = z.strictObject({
  expire_previous_in_seconds: z
    .number()
    .int()
    .min(0)
    .max(7 * 86_400)
    .optional()
    .describe('Seconds of gateway-clock time the previous secret keeps signing (default 86400; 0 ends it at once)'),
  secret: z.string().min(8).max(200).optional().describe('The new secret (default: a new random whsec_…), as when creating an endpoint'),
})
export type AdminWebhookSecretRotate = z.input<typeof adminWebhookSecretRotate>

/** Statuses a fault may answer with: what real platforms answer when they are overloaded or failing. */
export const FAULT_STATUSES = [429, 500, 503] as const

/** Fields only an API rule takes, and fields only a webhook rule takes (`scope` tells them apart). */
export const API_FAULT_FIELDS = ['route', 'status', 'error', 'latency_ms', 'retry_after'] as const
export const WEBHOOK_FAULT_FIELDS = ['endpoint', 'event_type', 'duplicate', 'delay_seconds', 'reorder', 'fail_attempts'] as const
/** What a webhook rule does to a matching delivery; one rule may do several at once. */
export const WEBHOOK_FAULT_EFFECTS = ['duplicate', 'delay_seconds', 'reorder', 'fail_attempts'] as const

/**
 * Body of `POST /_admin/faults`: a rule that makes matching API requests fail (or slow down) before
 * they run (`scope: "api"`, the default), or makes the platform's webhook deliveries misbehave as the
 * spec warns they may (`scope: "webhooks"`: duplicated, delayed on the gateway clock, reordered, failed
 * for their first attempts), so an app's retry, error and webhook handling can be tested on demand.
 */
export const adminFaultCreate = z
  .strictObject({
    scope: z.enum(['api', 'webhooks']).default('api').describe('api: API requests (default); webhooks: webhook deliveries'),
    merchant: z.string().min(1).optional().describe("Only this merchant's requests or events (default: every merchant)"),
    route: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe('An endpoint id (products.create) or "METHOD /path" (POST /v1/app/products, POST /products for both doors, GET /products/{id}); default: every API route'),
    status: z
      .number()
      .int()
      .refine((n) => (FAULT_STATUSES as readonly number[]).includes(n), {message: `one of ${FAULT_STATUSES.join(', ')}`})
      .optional()
      .describe('HTTP status to answer: 429, 500 or 503 (default 500; none with latency_ms alone, which only delays)'),
    error: z
      .strictObject({type: z.string().min(1).max(100), code: z.string().min(1).max(100)})
      .optional()
      .describe("The envelope's error type and code (default: the status's usual ones)"),
    latency_ms: z.number().int().min(0).max(30_000).optional().describe('Delay before answering, in milliseconds (at most 30 000, the SDK\'s default timeout)'),
    endpoint: z.string().min(1).optional().describe('Webhooks: only deliveries to this webhook endpoint (we_…); default: every endpoint'),
    event_type: webhookEventPattern.optional().describe('Webhooks: only events of this type, a "prefix.*" pattern or * (default *)'),
    duplicate: z.boolean().optional().describe('Webhooks: deliver each matching event twice (same body and id, two signed attempts)'),
    delay_seconds: z
      .number()
      .int()
      .min(1)
      .max(30 * 86_400)
      .optional()
      .describe("Webhooks: hold matching deliveries until the gateway clock has moved this far (a clock advance delivers them in time order)"),
    reorder: z.boolean().optional().describe('Webhooks: deliver the matching events of one request or clock step newest first'),
    fail_attempts: z
      .number()
      .int()
      .min(1)
      .max(7)
      .optional()
      .describe('Webhooks: fail the first N attempts of each matching delivery as timeouts, so retries run on the clock (7: given up)'),
    probability: z.number().min(0).max(1).default(1).describe('Chance that a matching request or delivery is faulted (default 1: every one)'),
    count: z.number().int().min(1).optional().describe('Fault only this many matching requests or deliveries, then stop (default: no limit)'),
    retry_after: z.number().int().min(0).max(3600).optional().describe('Retry-After seconds on 429 and 503 (default 1)'),
    seed: z.number().int().optional().describe('Seed of the random choices, so a probability below 1 faults the same requests or deliveries every run'),
  })
  .superRefine((rule, ctx) => {
    const foreign = rule.scope === 'webhooks' ? API_FAULT_FIELDS : WEBHOOK_FAULT_FIELDS
    for (const field of foreign) {
      if (rule[field] !== undefined) ctx.addIssue({code: 'custom', path: [field], message: `${field} belongs to a ${rule.scope === 'webhooks' ? 'scope "api"' : 'scope "webhooks"'} rule`})
    }
    if (rule.scope === 'webhooks' && !WEBHOOK_FAULT_EFFECTS.some((effect) => rule[effect] !== undefined && rule[effect] !== false)) {
      ctx.addIssue({code: 'custom', path: ['duplicate'], message: 'a webhooks rule needs at least one of duplicate, delay_seconds, reorder, fail_attempts'})
    }
  })
export type AdminFaultCreate = z.input<typeof adminFaultCreate>

/** `gateway start --faults FILE`: a list of rules, bare or under `faults`. */
export const adminFaultFile = z.union([z.array(adminFaultCreate), z.strictObject({faults: z.array(adminFaultCreate)})])

/** Delivery states an event may be filtered by (over every delivery of it to any endpoint). */
export const EVENT_DELIVERY_STATES = ['delivered', 'pending', 'failed', 'none'] as const

/** The filter the event log and a resend of many events share. */
const eventFilter = {
  type: z.string().optional().describe('An event type, or a prefix ending in * such as checkout.session.*'),
  since: z
    .string()
    .optional()
    .describe('An event id (the events after it in the log) or a time, Unix seconds or ISO 8601 (events created at or after it, gateway clock)'),
  until: z.string().optional().describe('A time, Unix seconds or ISO 8601: events created at or before it (gateway clock)'),
  delivery: z
    .enum(EVENT_DELIVERY_STATES)
    .optional()
    .describe('failed: an endpoint has not got it after an attempt (retrying or given up); pending: an endpoint has not been tried yet; delivered: every endpoint got it; none: it was queued for no endpoint'),
}

/** Admin queries are lenient, like the platform's: an unknown env means test, a bad limit the default. */
export const adminEventsQuery = z.object({
  merchant: z.string().describe('Merchant id (mch_…)'),
  env: z
    .string()
    .optional()
    .transform((v): 'live' | 'test' => (v === 'live' ? 'live' : 'test'))
    .describe('live or test (default)'),
  ...eventFilter,
  order: z.enum(['asc', 'desc']).optional().describe('desc: newest first (default); asc: oldest first'),
  limit: z
    .union([z.number(), z.string()])
    .optional()
    .transform((v) => Math.min(Math.max(Number(v ?? 100) || 100, 1), 1000))
    .describe('Default 100, at most 1000'),
})
export type AdminEventsQuery = z.input<typeof adminEventsQuery>

/** `POST /_admin/events/resend`: every logged event the filter selects, oldest first (at most 10 000). */
export const adminEventsResend = z.strictObject({
  merchant: z.string().min(1),
  env: environment.default('test'),
  endpoint: z.string().min(1).optional().describe('Webhook endpoint id (we_…); default: every endpoint that selects each event'),
  ...eventFilter,
})
export type AdminEventsResend = z.input<typeof adminEventsResend>

export const adminMerchantQuery = z.object({merchant: z.string().describe('Merchant id (mch_…)')})

// ---------------------------------------------------------------- responses

/** The admin API's records name their environment (`env`, `mode`) rather than carry `livemode`. */
const adminRecord = {envelope: ['id', 'object']} as const

export const adminMerchant = resource('merchant', {
  company: z.string(),
  country: z.string(),
  vat_number: z.string().nullable(),
  status: z.string(),
  created: timestamp,
  store,
}, adminRecord)
export type AdminMerchant = z.output<typeof adminMerchant>

export const adminInstallation = resource('installation', {
  /** The installation's access token: pass it to `new AppClient({token})`. */
  token: z.string(),
  merchant: z.string(),
  store: z.string(),
  env: environment,
  scopes: z.array(scope),
}, adminRecord)
export type AdminInstallation = z.output<typeof adminInstallation>

export const adminSecretKey = resource('secret_key', {
  /** Pass it to `new StoreClient({secretKey})` or `new MerchantClient({secretKey})`. */
  secret_key: z.string(),
  merchant: z.string(),
  mode: environment,
  scopes: z.array(scope),
}, adminRecord)
export type AdminSecretKey = z.output<typeof adminSecretKey>

export const adminPublishableKey = resource('publishable_key', {
  /** For browsers of `allowed_origins`: `new MerchantClient({publishableKey})` creates checkout sessions with line items. */
  publishable_key: z.string(),
  merchant: z.string(),
  mode: environment,
  scopes: z.array(scope),
  allowed_origins: z.array(z.string()),
}, adminRecord)
export type AdminPublishableKey = z.output<typeof adminPublishableKey>

/** What `POST /keys` answers: a secret key, or a publishable key for `type: "publishable"`. */
export const adminApiKey = z.union([adminSecretKey, adminPublishableKey])

export const adminRevoked = z.looseObject({id: z.string(), object: z.string(), revoked: z.literal(true)})
export type AdminRevoked = z.output<typeof adminRevoked>

/** `GET /_admin/clock?merchant=`: one merchant's clock; without it, the shared one. */
export const adminClockQuery = z.object({merchant: clockMerchant.optional()})

export const adminClock = z.looseObject({
  object: z.literal('clock'),
  /** Whose clock this is; null: the shared clock (every merchant that never moved alone). */
  merchant: z.string().nullable(),
  /** The clock's current time, Unix seconds. */
  now: timestamp,
  offset_seconds: z.number(),
  /** Scheduled jobs (renewals, dunning, expiries, reminders) run during an advance. */
  jobs_run: z.number().optional(),
})
export type AdminClock = z.output<typeof adminClock>

export const adminSandboxResetResult = z.looseObject({object: z.literal('sandbox_reset'), merchant: z.string(), deleted_objects: z.number()})
export type AdminSandboxReset = z.output<typeof adminSandboxResetResult>

/** What a simulated buyer's payment attempt produced; `order` is set for paid store sessions. */
export const adminCheckoutCompletion = z.looseObject({session: checkoutSession, payment, order: order.nullable()})
export type AdminCheckoutCompletion = z.output<typeof adminCheckoutCompletion>

export const adminRefundResult = z.looseObject({refund: sandboxRefund, payment, order: order.nullable()})
export type AdminRefundResult = z.output<typeof adminRefundResult>

export const adminDisputeResult = z.looseObject({dispute, payment})
export type AdminDisputeResult = z.output<typeof adminDisputeResult>

export const adminWebhookEndpoint = resource('webhook_endpoint', {
  merchant: z.string(),
  env: environment,
  url: z.string(),
  /** Event types, `prefix.*` patterns, or `*`. */
  events: z.array(z.string()),
  /** The signing secret: in full when created, masked in lists. */
  secret: z.string(),
  /** An installed app's endpoint: it receives only the events the app's scopes may read. */
  installation: z.string().nullable().optional(),
  created: timestamp,
  /** When each earlier secret that still signs (after a rotation) stops signing, gateway clock, newest first. */
  previous_secrets_expire: z.array(timestamp).optional(),
}, adminRecord)
export type AdminWebhookEndpoint = z.output<typeof adminWebhookEndpoint>

export const adminWebhookEndpointDeleted = z.looseObject({id: z.string(), object: z.literal('webhook_endpoint'), deleted: z.literal(true)})

/** One attempt to deliver one event to an endpoint. */
export const adminWebhookDeliveryAttempt = z.looseObject({
  object: z.literal('webhook_delivery_attempt'),
  delivery: z.number(),
  event: z.string(),
  type: z.string(),
  attempt: z.number(),
  attempted: timestamp,
  /** The receiver's HTTP status, or null when it gave none (see `error`). */
  status: z.number().nullable(),
  error: z.string().nullable(),
  /** Gateway-clock time of the next attempt; null once delivered or given up. */
  next_attempt: timestamp.nullable(),
  delivered: z.boolean(),
  /** Where the delivery stands after this attempt: delivered, retrying (next_attempt set) or failed (given up after seven). */
  outcome: z.enum(['delivered', 'retrying', 'failed']),
  /** The webhook fault rule that struck this delivery, or null. */
  fault: z.string().nullable(),
  /**
   * What the rule did to this attempt: `duplicate` (the delivery is the extra copy of `duplicate_of`), `delayed`
   * (held until `held_until` on the gateway clock), `reordered` (sent newest first among its request's or clock
   * step's matching events), `failed` (recorded as a timeout without reaching the receiver).
   */
  injected: z.array(z.enum(['duplicate', 'delayed', 'reordered', 'failed'])),
  duplicate_of: z.number().nullable(),
  held_until: timestamp.nullable(),
})
export type AdminWebhookDeliveryAttempt = z.output<typeof adminWebhookDeliveryAttempt>

/** A fault-injection rule as `/_admin/faults` answers it. */
export const adminFault = resource('fault', {
  /** api: API requests; webhooks: webhook deliveries. */
  scope: z.enum(['api', 'webhooks']),
  merchant: z.string().nullable(),
  route: z.string().nullable(),
  /** null: the rule only delays requests. */
  status: z.number().nullable(),
  error: z.object({type: z.string(), code: z.string()}).nullable(),
  latency_ms: z.number(),
  probability: z.number(),
  count: z.number().nullable(),
  /** Faults left before the rule stops; null: no limit. */
  remaining: z.number().nullable(),
  retry_after: z.number().nullable(),
  seed: z.number().nullable(),
  /** Webhook rules: the endpoint and event types matched, and what the rule does (null/false on API rules). */
  endpoint: z.string().nullable(),
  event_type: z.string().nullable(),
  duplicate: z.boolean(),
  delay_seconds: z.number().nullable(),
  reorder: z.boolean(),
  fail_attempts: z.number().nullable(),
  /** Requests (or webhook deliveries) this rule has faulted so far. */
  hits: z.number(),
  created: timestamp,
}, adminRecord)
export type AdminFault = z.output<typeof adminFault>

export const adminFaultDeleted = z.looseObject({id: z.string(), object: z.literal('fault'), deleted: z.literal(true)})
export const adminFaultsCleared = z.looseObject({object: z.literal('faults_cleared'), deleted: z.number()})
/** What a subscription confirmation produced: `invoice` and `payment` are null for a declined trial. */
export const adminSubscriptionConfirmation = z.looseObject({subscription, invoice: invoice.nullable(), payment: payment.nullable()})
export type AdminSubscriptionConfirmation = z.output<typeof adminSubscriptionConfirmation>

/** A piece of due work on the gateway clock. */
export const adminScheduledJob = z.looseObject({
  object: z.literal('scheduled_job'),
  kind: z.string(),
  ref: z.string(),
  /** Clock time at which it runs. */
  due: timestamp,
})
export type AdminScheduledJob = z.output<typeof adminScheduledJob>

export const adminEventResendResult = z.looseObject({object: z.literal('event_resend'), event: z.string(), queued_deliveries: z.number()})
export type AdminEventResendResult = z.output<typeof adminEventResendResult>

/** What a resend of many events queued: how many events the filter selected, and deliveries in all. */
export const adminEventsResendResult = z.looseObject({
  object: z.literal('event_resend_batch'),
  events: z.number(),
  queued_deliveries: z.number(),
  /** The oldest and newest event resent, or null when none matched. */
  first: z.string().nullable(),
  last: z.string().nullable(),
})
export type AdminEventsResendResult = z.output<typeof adminEventsResendResult>
