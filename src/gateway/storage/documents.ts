/**
 * What the gateway stores, kind by kind. Each document is the resource's zod schema from packages/sdk/src
 * (z.output, so the served shape and the stored one cannot drift) extended with the fields only the
 * gateway keeps (a session's reservation, a payment's charge and intent ids). `Documents` maps each
 * kind to its type, so `storage.get('variant', …)` is a VariantDoc without a cast.
 */
import {z} from 'zod'

import * as billing from '@payapp/sdk/schemas/billing'
import * as catalog from '@payapp/sdk/schemas/catalog'
import * as commerce from '@payapp/sdk/schemas/commerce'
import type {Environment} from '@payapp/sdk/schemas/common'

/**
 * A response schema's fields as a closed object: responses are loose (clients tolerate new fields), but
 * a stored document has exactly its fields, so types like `Omit<PaymentDoc, …>` keep their keys.
 */
const closed = <S extends z.ZodObject>(schema: S) => z.object(schema.shape as S['shape'])
/** The stored document of a resource kept exactly as served. */
type Stored<S extends z.ZodObject> = z.output<z.ZodObject<S['shape']>>

// ---------------------------------------------------------------- catalogue

/** Kind `product`: the App API's product object, byte for byte (no prices, option groups or variants). */
export const productDoc = closed(catalog.product).omit({prices: true, option_groups: true, variants: true})
export type ProductDoc = z.output<typeof productDoc>

/** Kind `price`, parent its product: the price object as served. */
export const priceDoc = closed(catalog.price).extend({type: z.enum(['one_time', 'recurring'])})
export type PriceDoc = z.output<typeof priceDoc>

/** Kind `option_group`, parent its product; its values are `option_value` documents under it. */
export const optionGroupDoc = closed(catalog.optionGroup).omit({values: true})
export type OptionGroupDoc = z.output<typeof optionGroupDoc>

/** Kind `option_value`, parent its group. */
export const optionValueDoc = closed(catalog.optionValue).extend({group: z.string(), product: z.string()})
export type OptionValueDoc = z.output<typeof optionValueDoc>

/**
 * Kind `variant`, parent its product. `price` is the variant's own price (null: it inherits the
 * product's default); `title` null falls back to its option combination; the combination is stored as
 * ids only (names resolve when served). Units in stock (`stock_qty`) include those held by open
 * checkouts (`stock_reserved`).
 */
export const variantDoc = closed(catalog.variant).omit({price_inherited: true, stock_available: true}).extend({
  options: z.array(z.object({group: z.string(), value: z.string()})),
  title: z.string().nullable(),
})
export type VariantDoc = z.output<typeof variantDoc>

/** Kind `file`: the file object as served; its bytes are a blob next to it. */
export const fileDoc = closed(catalog.file)
export type FileDoc = z.output<typeof fileDoc>

// ---------------------------------------------------------------- checkout and money

/** Kind `checkout_session`: the public object plus its secret, its buyer and the stock it holds while open. */
export const sessionDoc = closed(commerce.checkoutSession).extend({
  client_secret: z.string(),
  customer_details: z.object({name: z.string().nullable(), email: z.string().nullable()}).nullable(),
  /** Units held on a stock-tracked variant; held while open, then consumed (paid) or released. */
  reservation: z.object({variant_id: z.string(), quantity: z.number()}).nullable(),
  /** Created with a raw `amount` (no line_items): only such a session's amount may be updated directly. */
  raw_amount: z.boolean().optional(),
})
export type SessionDoc = z.output<typeof sessionDoc>

export const PAYMENT_STATUSES = ['succeeded', 'processing', 'pending', 'failed', 'refunded', 'partially_refunded', 'disputed'] as const

/**
 * Kind `payment`: one record behind both of the App API's shapes (the sandbox row and the live charge,
 * see domain/payments.ts). `id` is what `/payments/{id}` takes: the charge id in live, the row id (`py_`)
 * in the sandbox.
 */
export const paymentDoc = closed(commerce.sandboxPayment)
  .omit({failure_code: true, failure_message: true})
  .extend(commerce.livePayment.pick({payment_intent: true, charge: true, description: true, succeeded_at: true}).shape)
  .extend({
    livemode: z.boolean(),
    status: z.enum(PAYMENT_STATUSES),
    payment_intent: z.string(),
    customer: z.object({id: z.string().nullable(), name: z.string().nullable(), email: z.string().nullable()}),
    order: z.string().nullable(),
    source: z.enum(['store', 'api', 'invoice', 'payment_link']),
    failure_code: z.string().nullable(),
    failure_message: z.string().nullable(),
  })
export type PaymentDoc = z.output<typeof paymentDoc>

/** Kind `refund`, parent its payment: the sandbox refund row (live shows the refunded payment instead). */
export const refundDoc = closed(commerce.sandboxRefund).extend({livemode: z.boolean(), status: z.enum(['succeeded', 'pending', 'failed'])})
export type RefundDoc = z.output<typeof refundDoc>

/** Kind `dispute`, parent its payment; `past_due` is recomputed from the clock on every read. */
export type DisputeDoc = Stored<typeof commerce.dispute>

/** Kind `order`. */
export type OrderDoc = Stored<typeof commerce.order>

/** Kind `payout`. */
export type PayoutDoc = Stored<typeof commerce.payout>

/** Kind `invoice`, parent its subscription (live only). */
export type InvoiceDoc = Stored<typeof commerce.invoice>

/** Kind `subscription`. */
export type SubscriptionDoc = Stored<typeof commerce.subscription>

/** Kind `customer`: the merchant-side customer a subscription bills (`GET /v1/customers/{id}`). */
export type CustomerDoc = Stored<typeof billing.customer>

/**
 * Kind `subscription_billing`, parent its subscription, id its first intent (`pi_…` / `seti_…`): what
 * the public object does not show — the client secret, the recurrence, how renewal charges will go.
 */
export interface BillingDoc {
  id: string
  object: 'subscription_billing'
  subscription: string
  client_secret: string
  interval: 'day' | 'week' | 'month' | 'year'
  interval_count: number
  /** Periods are counted from here, so month ends do not drift (31 Jan → 28 Feb → 31 Mar). */
  anchor: number
  /** Periods elapsed since the anchor (-1 while a trial runs). */
  cycle: number
  renewals: 'succeed' | 'fail'
  /** Set once the card is stored (confirmation paid). */
  card: {brand: string; last4: string; country: string; funding: string} | null
}

/** Kind `fraud_warning`, parent the payment it names when it names one of the merchant's. */
export type FraudWarningDoc = Stored<typeof billing.fraudWarning>

/** Kind `subscription_link`. */
export type SubscriptionLinkDoc = Stored<typeof commerce.subscriptionLink>

/** Kind `event`: the spec's event envelope, appended in the transaction of the change it reports. */
export interface EventDoc {
  id: string
  object: 'event'
  type: string
  livemode: boolean
  created: number
  data: {object: unknown}
}

/** Every kind of document and its type. */
export interface Documents {
  product: ProductDoc
  price: PriceDoc
  option_group: OptionGroupDoc
  option_value: OptionValueDoc
  variant: VariantDoc
  file: FileDoc
  checkout_session: SessionDoc
  payment: PaymentDoc
  refund: RefundDoc
  dispute: DisputeDoc
  order: OrderDoc
  payout: PayoutDoc
  invoice: InvoiceDoc
  subscription: SubscriptionDoc
  customer: CustomerDoc
  subscription_billing: BillingDoc
  fraud_warning: FraudWarningDoc
  subscription_link: SubscriptionLinkDoc
  event: EventDoc
}
export type Kind = keyof Documents

// ---------------------------------------------------------------- outside the document table

/** A merchant and its one store; kept apart from the documents because credentials reference it. */
export const merchantDoc = closed(commerce.merchant).omit({livemode: true}).extend({
  /** `not_ready`: onboarding unfinished, creates answer 409 `merchant_not_ready`. */
  status: z.enum(['active', 'restricted', 'pending', 'not_ready']),
  /** Plan limits; a create beyond one answers 402 (absent: unlimited). */
  plan: z.object({product_limit: z.number().optional(), checkout_limit: z.number().optional()}).optional(),
  store: closed(catalog.store).omit({object: true, livemode: true, url: true}).extend({
    status: z.enum(['draft', 'live', 'paused']),
    approval: z.enum(['pending', 'approved', 'rejected']),
  }),
})
export type MerchantDoc = z.output<typeof merchantDoc>

export type Env = Environment

/** Whose data a query may see: the credential's merchant and environment. */
export interface Scope {
  merchant: string
  env: Env
}
