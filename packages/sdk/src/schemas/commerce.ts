/**
 * Money and commerce: merchant, checkout sessions, store checkouts, orders, payments, refunds,
 * disputes, payouts, balance, invoices, subscriptions, subscription links, analytics, events.
 */
import * as z from 'zod'

import {RECURRING_INTERVALS, MAX_INTERVAL_COUNT, immutableField, periodBounds} from './catalog.js'
import {amount, currency, metadata, openEnum, resource, timestamp, webUrl, withOneOf, type IssueParams} from './common.js'

// ---------------------------------------------------------------- merchant

export const merchant = resource('merchant', {
  company: z.string(),
  country: z.string(),
  vat_number: z.string().nullable(),
  status: openEnum(['active', 'restricted', 'pending', 'not_ready']),
  created: timestamp,
})
export type Merchant = z.infer<typeof merchant>

// ---------------------------------------------------------------- checkout sessions

export const SESSION_STATUSES = ['open', 'complete', 'expired'] as const

export const sessionLineItem = z.looseObject({
  name: z.string(),
  quantity: z.number(),
  amount: z.number(),
  currency: z.string(),
  price_id: z.string().nullable(),
  product_id: z.string().nullable(),
  variant_id: z.string().nullable(),
  sku: z.string().nullable(),
})

export const checkoutSession = resource('checkout.session', {
  mode: openEnum(['payment', 'subscription']),
  status: openEnum(SESSION_STATUSES),
  source: openEnum(['api', 'store']),
  amount: z.number(),
  currency: z.string(),
  client_secret: z.string().optional(),
  checkout_url: z.string(),
  embed_url: z.string(),
  expires_at: timestamp,
  created: timestamp,
  line_items: z.array(sessionLineItem),
  payment: z.string().nullable(),
  order: z.string().nullable(),
  /** The subscription a paid subscription-mode session started (`sub_`); null otherwise. */
  subscription: z.string().nullable().optional(),
  success_url: z.string().nullable(),
  cancel_url: z.string().nullable(),
  metadata: z.record(z.string(), z.string()),
  description: z.string().nullable().optional(),
  reference: z.string().nullable().optional(),
  /** Sessions at 5 or higher can be updated (API sessions are 5; store sessions 4, see docs/spec-gaps.md). */
  flow_version: z.number().optional(),
  /** Incremented by each successful update; send it back as `revision` to update only what you read. */
  revision: z.number().optional(),
}, {envelope: ['id', 'object', 'mode', 'livemode']})
export type CheckoutSession = z.infer<typeof checkoutSession>

/** Hosts a browser reaches on the same machine: http to them is accepted in test mode (docs/spec-gaps.md). */
export const isLoopbackHost = (hostname: string) => /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i.test(hostname)

/** A redirect target: https, or http to a loopback host (the gateway refuses the latter in live mode). */
const redirectUrl = webUrl(/^https?$/)
  .refine((u) => !URL.canParse(u) || u.startsWith('https:') || isLoopbackHost(new URL(u).hostname), {
    message: 'must be https (http is accepted only for localhost, 127.0.0.1 or [::1] in test mode)',
    params: {code: 'url_not_https'} satisfies IssueParams,
  })
  // What every mode takes; the sandbox's loopback http is an allowance the document leaves out.
  .meta({pattern: '^https://'})

/** One line of `line_items`: a free line (`name`, `amount`; in the session's `currency`), or a catalogue `variant` whose price decides. */
export const sessionLineItemInput = z.strictObject({
  name: z.string().trim().min(1).max(250).optional().describe('What the buyer pays for (required without variant)'),
  quantity: z.number().int().min(1).max(1000).default(1).describe('Units, default 1'),
  amount: amount.optional().describe('Unit amount in minor units (derived from the variant\'s price for a variant)'),
  currency: currency.optional().describe("Omit: the line is in the session's currency; if sent it must equal it (currency_mismatch)"),
  image_url: webUrl(/^https?$/).optional(),
  price_id: z.string().startsWith('price_').optional().describe('Catalogue link only; the charged amount is amount'),
  product_id: z.string().startsWith('prod_').optional(),
  variant: z.string().min(1).max(100).optional().describe('A variant id: amount and currency come from its price; stock is reserved'),
})
export type SessionLineItemInput = z.output<typeof sessionLineItemInput>

const sessionEditable = {
  description: z.string().max(500).optional().describe('Short text shown on the checkout'),
  reference: z.string().max(200).optional().describe('Merchant order id, echoed on receipts and webhooks'),
  line_items: z.array(sessionLineItemInput).min(1).max(100).optional(),
}

/** Payment line items as JSON Schema: each a variant, or a named line with amount and currency; variants and price_id not mixed. */
const PAYMENT_LINES = {
  items: {anyOf: [{required: ['variant']}, {required: ['name', 'amount', 'currency']}]},
  not: {allOf: [{contains: {required: ['variant']}}, {contains: {required: ['price_id']}}]},
}

/** Body of merchant `POST /checkout/sessions`. */
export const checkoutSessionCreate = z.strictObject({
  amount: amount.optional().describe('Raw amount in minor units (secret keys; omit with line_items and in subscription mode)'),
  currency: currency.optional(),
  customer_name: z.string().trim().min(2).max(120).optional().describe('Buyer name, 2 to 120 characters (required with a raw amount)'),
  customer_email: z.email().optional().describe('Receipt address (required with a raw amount)'),
  mode: z.enum(['payment', 'subscription']).default('payment').describe('payment (default) or subscription (one recurring price)'),
  ...sessionEditable,
  success_url: redirectUrl.optional().describe('Where the browser goes after payment'),
  cancel_url: redirectUrl.optional().describe('Where the browser goes on cancel'),
  metadata: metadata.optional(),
}).meta({
  // The shapes the domain takes (domain/checkout-sessions.ts), as JSON Schema: a raw amount with its
  // buyer, payment line items (each a variant, or a named line with amount and currency; variants and
  // price_id not mixed), or one recurring price_id in subscription mode.
  oneOf: [
    {properties: {mode: {const: 'payment'}}, required: ['amount', 'currency', 'customer_name', 'customer_email'], not: {required: ['line_items']}},
    {properties: {mode: {const: 'payment'}, line_items: PAYMENT_LINES}, required: ['line_items'], not: {required: ['amount']}},
    {
      properties: {mode: {const: 'subscription'}, line_items: {maxItems: 1, items: {required: ['price_id'], not: {required: ['variant']}}}},
      required: ['mode', 'line_items'],
      not: {required: ['amount']},
    },
  ],
})
export type CheckoutSessionCreate = z.input<typeof checkoutSessionCreate>

/** Body of `PATCH /checkout/sessions/{id}` (and `POST …/update`). */
export const checkoutSessionUpdate = z.strictObject({
  amount: amount.optional().describe('New raw amount (raw-amount sessions only)'),
  ...sessionEditable,
  revision: z.number().int().min(0).optional().describe('The revision you read: a stale one is 409 revision_conflict'),
}).meta({
  // The gateway's 400s as JSON Schema (domain/checkout-sessions.ts): a raw amount or payment line items, not both
  // (parameters_exclusive); line items in a payment session's shapes. Not a oneOf: a body of neither is valid.
  not: {required: ['amount', 'line_items']},
  dependentSchemas: {line_items: {properties: {line_items: PAYMENT_LINES}}},
})
export type CheckoutSessionUpdate = z.input<typeof checkoutSessionUpdate>

export const checkoutSessionsListQuery = z.object({
  status: z.enum(SESSION_STATUSES).optional().describe('open, complete or expired'),
})

/** Body of store `POST /checkouts`. */
export const storeCheckoutCreate = z.strictObject({
  product_id: z.string().startsWith('prod_').describe('Product to sell'),
  variant_id: z.string().min(1).optional().describe('Variant of the product (default: its default variant)'),
  quantity: z.number().int().min(1).max(1000).default(1).describe('Units, default 1'),
  success_url: redirectUrl.optional().describe('https URL after payment (default: the storefront)'),
  cancel_url: redirectUrl.optional().describe('https URL on cancel (default: the storefront)'),
})
export type StoreCheckoutCreate = z.input<typeof storeCheckoutCreate>

export const storeCheckout = z.looseObject({
  ok: z.boolean(),
  session_id: z.string(),
  checkout_url: z.string(),
  /** The same session for an iframe (not in the spec's store response; see docs/spec-gaps.md). */
  embed_url: z.string(),
  amount: z.number(),
  currency: z.string(),
  /** ISO-8601, as the spec gives it for store checkouts. */
  expires_at: z.string(),
})
export type StoreCheckout = z.infer<typeof storeCheckout>

export const sessionExpired = z.looseObject({id: z.string(), status: z.literal('expired')})

export const checkoutSessionRetrieveQuery = z.object({
  cs: z.string().optional().describe("The session's client secret, instead of a secret key (the hosted checkout page)"),
})

// ---------------------------------------------------------------- orders

/** Fulfilment statuses (spec: not shown); see docs/spec-gaps.md for the transitions. */
export const ORDER_STATUSES = ['pending', 'paid', 'processing', 'shipped', 'completed', 'canceled', 'refunded'] as const
export const ORDER_UPDATE_STATUSES = ['processing', 'shipped', 'completed', 'canceled'] as const

export const orderEvidence = resource('order_evidence', {
  type: openEnum(['tracking', 'file', 'note']),
  tracking_number: z.string().nullable(),
  carrier: z.string().nullable(),
  file: z.string().nullable(),
  note: z.string().nullable(),
  created: timestamp,
}, {envelope: ['id', 'object']})
export type OrderEvidence = z.infer<typeof orderEvidence>

export const order = resource('order', {
  source: z.literal('store'),
  status: openEnum(ORDER_STATUSES),
  checkout_session: z.string().nullable(),
  payment: z.string().nullable(),
  product_id: z.string(),
  variant_id: z.string().nullable(),
  sku: z.string().nullable(),
  name: z.string(),
  quantity: z.number(),
  amount: z.number(),
  currency: z.string(),
  customer: z.looseObject({name: z.string().nullable(), email: z.string().nullable()}),
  evidence: z.array(orderEvidence),
  fixture: z.boolean(),
  shipped_at: timestamp.nullable(),
  completed_at: timestamp.nullable(),
  canceled_at: timestamp.nullable(),
  created: timestamp,
  updated: timestamp,
})
export type Order = z.infer<typeof order>

/** Body of `PATCH /orders/{id}`. */
export const orderUpdate = z.strictObject({
  status: z.enum(ORDER_UPDATE_STATUSES).describe('New fulfilment status; shipped and completed need evidence first'),
})
export type OrderUpdate = z.input<typeof orderUpdate>

/** Body of `POST /orders/{id}/evidence`: a tracking number with its carrier, a file, or a note. */
export const orderEvidenceCreate = z
  .strictObject({
    tracking_number: z.string().trim().min(1).max(100).optional().describe('Shipment tracking number'),
    carrier: z.string().trim().min(1).max(100).optional().describe('Carrier of the tracking number'),
    file: z.string().regex(/^files\/[\w./-]+$/, {message: 'must be a storage path from POST /files'}).optional().describe('Storage path from POST /files'),
    note: z.string().trim().min(1).max(2000).optional().describe('Free-text delivery note'),
  })
  .refine((e) => e.tracking_number !== undefined || e.file !== undefined || e.note !== undefined, {
    message: 'send tracking_number with carrier, file, or note',
    params: {code: 'parameter_missing'},
  })
  .refine((e) => (e.tracking_number === undefined) === (e.carrier === undefined), {
    message: 'tracking_number and carrier go together',
    path: ['carrier'],
    params: {code: 'parameter_missing'},
  })
  // The two refinements as JSON Schema.
  .meta({
    anyOf: [{required: ['tracking_number']}, {required: ['file']}, {required: ['note']}],
    dependentRequired: {tracking_number: ['carrier'], carrier: ['tracking_number']},
  })
export type OrderEvidenceCreate = z.input<typeof orderEvidenceCreate>

/** Body of App API `POST /orders`: a sandbox-only order fixture. */
export const orderCreate = z.strictObject({
  product_id: z.string().startsWith('prod_').describe('Product of the order'),
  variant_id: z.string().min(1).optional().describe('Variant (default: the default variant)'),
  quantity: z.number().int().min(1).max(1000).default(1).describe('Units, default 1'),
  customer_name: z.string().trim().min(2).max(120).optional().describe('Buyer name'),
  customer_email: z.email().optional().describe('Buyer e-mail'),
  status: z.enum(['paid', 'pending']).default('paid').describe('Initial status (default paid)'),
})
export type OrderCreate = z.input<typeof orderCreate>

// ---------------------------------------------------------------- payments

const card = z.looseObject({brand: z.string(), last4: z.string(), country: z.string(), funding: z.string()})

/** Sandbox payment rows (the spec's "merchant view"): `id` is the row id (`py_`). */
export const sandboxPayment = resource('payment', {
  session_id: z.string().nullable(),
  invoice_id: z.string().nullable(),
  amount: z.number(),
  amount_refunded: z.number(),
  currency: z.string(),
  status: openEnum(['succeeded', 'processing', 'refunded', 'partially_refunded', 'disputed', 'failed']),
  payment_method: z.string(),
  card,
  fee: z.looseObject({service_fee_eur: z.number(), service_fee_charge_currency: z.number(), psp_fee_eur: z.number(), currency: z.string()}),
  customer: z.looseObject({name: z.string().nullable(), email: z.string().nullable()}),
  failure_code: z.string().nullable().optional(),
  failure_message: z.string().nullable().optional(),
  reference: z.string().nullable(),
  metadata: z.record(z.string(), z.string()),
  created: timestamp,
}, {livemode: z.literal(false).optional()})
export type SandboxPayment = z.infer<typeof sandboxPayment>

export const LIVE_PAYMENT_STATUSES = ['succeeded', 'pending', 'refunded', 'partially_refunded', 'disputed', 'failed'] as const

/** Live payments (the spec's list-style shape): `id` is the charge id (`ch_`). */
export const livePayment = resource('payment', {
  status: openEnum(LIVE_PAYMENT_STATUSES),
  amount: z.number(),
  amount_refunded: z.number(),
  currency: z.string(),
  application_fee_amount: z.number().nullable(),
  payment_intent: z.string().nullable(),
  charge: z.string(),
  checkout_session: z.string().nullable(),
  customer: z.string().nullable(),
  customer_email: z.string().nullable(),
  customer_name: z.string().nullable(),
  description: z.string().nullable(),
  reference: z.string().nullable(),
  payment_method_type: z.string().nullable(),
  metadata: z.record(z.string(), z.string()),
  source: z.string(),
  created: timestamp,
  succeeded_at: timestamp.nullable(),
}, {livemode: z.literal(true)})
export type LivePayment = z.infer<typeof livePayment>

/** A payment as the App API returns it: the token's environment decides the shape. */
export const payment = z.union([livePayment, sandboxPayment])
export type Payment = LivePayment | SandboxPayment

export const paymentsListQuery = z.object({
  status: z.string().optional().describe('Live only: succeeded or pending'),
  customer: z.string().min(1).optional().describe('Merchant API: only payments of this customer (cus_…)'),
})

// ---------------------------------------------------------------- refunds, disputes, payouts, balance

/** Sandbox refund rows. Live refunds are the refunded charges (livePayment) with running `amount_refunded`. */
export const sandboxRefund = resource(
  'refund',
  {
    payment: z.string(),
    amount: z.number(),
    currency: z.string(),
    status: openEnum(['succeeded', 'pending', 'failed']),
    reason: z.string().nullable(),
    created: timestamp,
  },
  {livemode: z.literal(false).optional()},
)
export const refund = z.union([sandboxRefund, livePayment])

/** A refund as the merchant API serves it, in either environment. */
export const refundRecord = sandboxRefund.extend({livemode: z.boolean(), metadata: z.record(z.string(), z.string()).optional()})
export type RefundRecord = z.infer<typeof refundRecord>

/** Body of merchant `POST /refunds`. */
export const refundCreate = z.strictObject({
  payment: z.string().min(1).max(100).describe('The payment (py_… in the sandbox, ch_… in live) or its payment intent (pi_…)'),
  amount: z.number().int().min(1).optional().describe('Minor units; default: the rest of the payment'),
  reason: z.enum(['duplicate', 'fraudulent', 'requested_by_customer']).optional(),
})
export type RefundCreate = z.input<typeof refundCreate>

/** Merchant `GET /refunds`: the refunds of one charge or payment intent. */
export const refundsListQuery = withOneOf(
  'filter',
  ['charge', 'payment_intent'],
  z.object({
    charge: z.string().min(1).optional().describe('Charge id (ch_…) or payment id (py_…)'),
    payment_intent: z.string().min(1).optional().describe('Payment intent id (pi_…)'),
  }),
)
export type SandboxRefund = z.infer<typeof sandboxRefund>

export const dispute = resource('dispute', {
  payment: z.string(),
  amount: z.number(),
  currency: z.string(),
  reason: z.string(),
  status: openEnum(['needs_response', 'under_review', 'won', 'lost']),
  evidence_due_by: timestamp,
  past_due: z.boolean(),
  created: timestamp,
})
export type Dispute = z.infer<typeof dispute>

export const payout = resource('payout', {
  amount: z.number(),
  currency: z.string(),
  status: openEnum(['pending', 'in_transit', 'paid', 'failed']),
  arrival_date: timestamp,
  created: timestamp,
})
export type Payout = z.infer<typeof payout>

const money = z.looseObject({amount: z.number(), currency: z.string()})
export const balance = resource('balance', {available: z.array(money), pending: z.array(money)}, {envelope: ['object', 'livemode']})
export type Balance = z.infer<typeof balance>

// ---------------------------------------------------------------- invoices and subscriptions

export const invoice = resource('invoice', {
  subscription: z.string().nullable(),
  customer: z.string().nullable(),
  amount_due: z.number(),
  amount_paid: z.number(),
  currency: z.string(),
  status: openEnum(['draft', 'open', 'paid', 'void', 'uncollectible']),
  period_start: timestamp,
  period_end: timestamp,
  /** Why it was issued: the first period, a renewal, or by hand (admin). */
  billing_reason: openEnum(['subscription_create', 'subscription_cycle', 'manual']).optional(),
  /** Charge attempts so far. */
  attempt_count: z.number().optional(),
  /** Clock time of the next dunning retry, null when none is planned. */
  next_payment_attempt: timestamp.nullable().optional(),
  /** The dunning stage the last failed attempt reached (notice, warning, final); null while none failed. */
  dunning_stage: openEnum(['notice', 'warning', 'final']).nullable().optional(),
  /** The payment of the latest attempt. */
  payment: z.string().nullable().optional(),
  created: timestamp,
})
export type Invoice = z.infer<typeof invoice>

export const SUBSCRIPTION_STATUSES = ['incomplete', 'incomplete_expired', 'trialing', 'active', 'past_due', 'unpaid', 'canceled'] as const
export const subscription = resource('subscription', {
  status: openEnum(SUBSCRIPTION_STATUSES),
  customer: z.string(),
  price_id: z.string().nullable(),
  quantity: z.number(),
  currency: z.string(),
  amount: z.number(),
  current_period_start: timestamp,
  current_period_end: timestamp,
  latest_invoice: z.string().nullable(),
  intent_type: openEnum(['payment', 'setup']),
  trial_end: timestamp.nullable(),
  cancel_at_period_end: z.boolean(),
  canceled_at: timestamp.nullable().optional(),
  /** Secret of the first payment or setup intent; merchant API only, while the subscription is incomplete. */
  client_secret: z.string().optional(),
  /** The gateway's page that confirms the client secret (merchant API, while incomplete). */
  confirmation_url: z.string().optional(),
  metadata: z.record(z.string(), z.string()).optional(),
  created: timestamp,
})
export type Subscription = z.infer<typeof subscription>

// ---------------------------------------------------------------- subscription links

const subscriptionLinkFields = {
  name: z.string().trim().min(1).max(250).optional().describe('What the buyer subscribes to'),
  description: z.string().max(2000).nullable().optional().describe('Shown on the subscription page'),
  trial_period_days: z.number().int().min(1).max(730).nullable().optional().describe('Free trial in days'),
  metadata: metadata.optional(),
}

/** Body of `POST /subscription_links`. */
export const subscriptionLinkCreate = z
  .strictObject({
    amount,
    currency,
    interval: z.enum(RECURRING_INTERVALS).describe('Billing interval'),
    interval_count: z.number().int().min(1).default(1).describe('Intervals between billings (default 1)'),
    ...subscriptionLinkFields,
  })
  .refine((l) => l.interval_count <= MAX_INTERVAL_COUNT[l.interval], {
    message: 'the billing period may be at most one year',
    path: ['interval_count'],
  })
  .meta(periodBounds())
export type SubscriptionLinkCreate = z.input<typeof subscriptionLinkCreate>

export const SUBSCRIPTION_LINK_IMMUTABLE_FIELDS = ['amount', 'currency', 'interval', 'interval_count'] as const
const fixedOnceCreated = immutableField('parameter_immutable', 'cannot change once the link exists; create a new link and archive this one')

/** Body of `POST /subscription_links/{id}`: amount, currency and interval are fixed once created. */
export const subscriptionLinkUpdate = z.strictObject({
  ...subscriptionLinkFields,
  active: z.boolean().optional().describe('false archives the link, true restores it'),
  ...(Object.fromEntries(SUBSCRIPTION_LINK_IMMUTABLE_FIELDS.map((f) => [f, fixedOnceCreated])) as Record<
    (typeof SUBSCRIPTION_LINK_IMMUTABLE_FIELDS)[number],
    typeof fixedOnceCreated
  >),
})
export type SubscriptionLinkUpdate = z.input<typeof subscriptionLinkUpdate>

export const subscriptionLink = resource('subscription_link', {
  name: z.string(),
  description: z.string().nullable(),
  amount: z.number(),
  currency: z.string(),
  interval: openEnum(RECURRING_INTERVALS),
  interval_count: z.number(),
  trial_period_days: z.number().nullable(),
  url: z.string(),
  active: z.boolean(),
  archived_at: timestamp.nullable(),
  metadata: z.record(z.string(), z.string()),
  created: timestamp,
  updated: timestamp,
})
export type SubscriptionLink = z.infer<typeof subscriptionLink>

// ---------------------------------------------------------------- analytics

export const analyticsQuery = z.object({
  days: z.coerce.number().int().min(1).max(365).default(30).describe('Window in days, 1 to 365'),
})

export const analyticsSummary = resource('analytics_summary', {
  days: z.number(),
  since: timestamp,
  until: timestamp,
  currencies: z.array(
    z.looseObject({
      currency: z.string(),
      gross_volume: z.number(),
      refunded_volume: z.number(),
      net_volume: z.number(),
      payment_count: z.number(),
      refund_count: z.number(),
      average_payment: z.number(),
    }),
  ),
}, {envelope: ['object', 'livemode']})
export type AnalyticsSummary = z.infer<typeof analyticsSummary>

// ---------------------------------------------------------------- events

export const event = resource(
  'event',
  {type: z.string(), created: timestamp, data: z.looseObject({object: z.record(z.string(), z.unknown())})},
  {envelope: ['id', 'object', 'type', 'livemode']},
)
export type PlatformEvent = z.infer<typeof event>

export {amount, currency}
