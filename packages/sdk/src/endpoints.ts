/**
 * Every endpoint of the App API (`/v1/app`), the store API (`/v1/store`) and the merchant API (`/v1`),
 * written once. The gateway registers a handler per entry and derives scope checks, rate-limit buckets
 * and 405s from it; the SDK's namespaces call through it; the CLI's commands and the scope-matrix test
 * iterate it. The gateway's admin API has its own table in admin-endpoints.ts.
 */
import * as z from 'zod'

import * as billing from './schemas/billing.js'
import * as catalog from './schemas/catalog.js'
import * as commerce from './schemas/commerce.js'
import {deleted, listQuery, type Scope} from './schemas/common.js'

/**
 * Which API an endpoint is served under: the App API (installation token), the store API or the
 * merchant API (both secret keys).
 */
export type Door = 'app' | 'store' | 'merchant'
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE'
/** The spec's rate-limit buckets. */
export type Bucket = 'read' | 'write' | 'checkout'

export interface EndpointDef {
  method: HttpMethod
  /** Relative to the door's base; `{name}` marks a path parameter. */
  path: string
  scope: Scope
  doors: readonly Door[]
  bucket: Bucket
  summary: string
  body?: z.ZodType
  query?: z.ZodObject
  /** The item schema for lists, the object schema otherwise. */
  response: z.ZodType
  list?: boolean
  /** Multipart upload instead of a JSON body. */
  multipart?: boolean
  /** Only installations or keys of this environment may call it. */
  env?: 'live' | 'test'
  /**
   * Without an Authorization header, this query parameter (a checkout session's client secret) may
   * authorise the call instead: the hosted checkout page reads its own session with it.
   */
  clientSecret?: string
  /** Answers 201 Created instead of 200. */
  created?: boolean
  /** Error statuses beyond those every route of its shape can give (see errorStatuses in openapi.ts). */
  errors?: readonly number[]
  /** A publishable key (from an allow-listed browser origin) may call it; every other route refuses one. */
  publishable?: boolean
}

const both = ['app', 'store'] as const
const app = ['app'] as const
const merchant = ['merchant'] as const
/** One catalogue, three doors: the App API, the store API and the merchant API. */
const all = ['app', 'store', 'merchant'] as const
const appAndMerchant = ['app', 'merchant'] as const

/**
 * The table names its schemas through functions (`() => catalog.product`), read once on first use: a caller
 * that uses one endpoint builds only the schema modules that endpoint needs (the CLI's bundle builds a schema
 * module on first use; see packages/sdk/scripts/lazy-schemas.js), while every reader still sees plain `body`/`query`/`response`.
 * The admin table (admin-endpoints.ts) and the event table (events.ts, whose `object` is the event's resource) are made the same way.
 */
export type Schema<S> = () => S
type Unwrap<V> = V extends Schema<infer S> ? S : V
const SCHEMA_KEYS = ['body', 'query', 'response', 'object'] as const
type Resolved<T> = {readonly [K in keyof T]: K extends (typeof SCHEMA_KEYS)[number] ? Unwrap<T[K]> : T[K]}

export function lazyTable<const T extends Record<string, object>>(table: T): {readonly [Id in keyof T]: Resolved<T[Id]>} {
  for (const def of Object.values(table) as Record<string, unknown>[]) {
    for (const key of SCHEMA_KEYS) {
      const schema = def[key]
      if (typeof schema !== 'function') continue
      let value: unknown
      Object.defineProperty(def, key, {enumerable: true, get: () => (value ??= schema())})
    }
  }
  return table as {readonly [Id in keyof T]: Resolved<T[Id]>}
}

function get<R extends z.ZodType, const D extends readonly Door[] = typeof both>(path: string, scope: Scope, response: Schema<R>, summary: string, doors: D = both as unknown as D) {
  return {method: 'GET', path, scope, doors, bucket: 'read', response, summary} as const
}

function list<R extends z.ZodType, Q extends Schema<z.ZodObject> | undefined = undefined, const D extends readonly Door[] = typeof both>(
  path: string,
  scope: Scope,
  response: Schema<R>,
  summary: string,
  doors: D = both as unknown as D,
  query?: Q,
) {
  return {method: 'GET', path, scope, doors, bucket: 'read', response, list: true, query, summary} as const
}

function write<M extends HttpMethod, B extends Schema<z.ZodType> | undefined, R extends z.ZodType, const D extends readonly Door[] = typeof both>(
  method: M,
  path: string,
  scope: Scope,
  body: B,
  response: Schema<R>,
  summary: string,
  doors: D = both as unknown as D,
) {
  return {method, path, scope, doors, bucket: 'write', body, response, summary} as const
}

export const endpoints = lazyTable({
  // ---- store surface (both doors)
  'store.retrieve': get('/store', 'store:read', () => catalog.store, "The merchant's store"),

  'products.list': list('/products', 'products:read', () => catalog.product, 'List products, newest first', all, () => catalog.productListQuery),
  'products.create': {...write('POST', '/products', 'products:write', () => catalog.productCreate, () => catalog.product, 'Create a product, optionally with its default price', all), created: true, errors: [402]},
  'products.retrieve': get('/products/{id}', 'products:read', () => catalog.product, 'A product with its option groups and variants', all),
  'products.update': write('PATCH', '/products/{id}', 'products:write', () => catalog.productUpdate, () => catalog.product, 'Update a product (including default_price_id)'),
  'products.archive': write('DELETE', '/products/{id}', 'products:write', undefined, () => catalog.productArchived, 'Archive a product and all its prices', all),

  'prices.list': list('/products/{id}/prices', 'products:read', () => catalog.price, "List a product's prices", all),
  'prices.create': {...write('POST', '/products/{id}/prices', 'products:write', () => catalog.priceCreate, () => catalog.price, 'Create a price for a product', all), created: true},
  'prices.update': write('PATCH', '/products/{id}/prices/{price}', 'products:write', () => catalog.priceUpdate, () => catalog.price, 'Update the mutable fields of a price'),

  'options.list': list('/products/{id}/options', 'products:read', () => catalog.optionGroup, "List a product's option groups"),
  'options.create': {...write('POST', '/products/{id}/options', 'products:write', () => catalog.optionGroupCreate, () => catalog.optionGroup, 'Create an option group with its values'), created: true},
  'options.update': write('PATCH', '/options/{id}', 'products:write', () => catalog.optionGroupUpdate, () => catalog.optionGroup, 'Rename an option group'),
  'options.delete': {...write('DELETE', '/options/{id}', 'products:write', undefined, () => deleted, 'Delete an option group (409 variants_exist while the product has variants)'), errors: [409]},
  'values.create': {...write('POST', '/options/{id}/values', 'products:write', () => catalog.optionValueCreate, () => catalog.optionGroup, 'Add a value to an option group'), created: true},
  'values.delete': {...write('DELETE', '/values/{id}', 'products:write', undefined, () => deleted, 'Delete an option value (409 value_in_use while a variant uses it)'), errors: [409]},

  'variants.list': list('/products/{id}/variants', 'products:read', () => catalog.variant, "List a product's variants, the default variant included"),
  'variants.create': {...write('POST', '/products/{id}/variants', 'products:write', () => catalog.variantCreate, () => catalog.variant, 'Create a variant'), created: true},
  'variants.update': write('PATCH', '/variants/{id}', 'products:write', () => catalog.variantUpdate, () => catalog.variant, 'Update a variant (its option combination is immutable)'),
  'variants.delete': {...write('DELETE', '/variants/{id}', 'products:write', undefined, () => deleted, 'Delete a variant (not the default variant)'), errors: [409]},

  'files.create': {...write('POST', '/files', 'files:write', undefined, () => catalog.file, 'Upload a file (multipart field "file", at most 5 MB)'), multipart: true, created: true},

  'orders.list': list('/orders', 'orders:read', () => commerce.order, 'List store orders, newest first'),
  'orders.retrieve': get('/orders/{id}', 'orders:read', () => commerce.order, 'One store order'),
  'orders.update': write('PATCH', '/orders/{id}', 'orders:write', () => commerce.orderUpdate, () => commerce.order, 'Update fulfilment status'),
  'orders.evidence.create': write('POST', '/orders/{id}/evidence', 'orders:write', () => commerce.orderEvidenceCreate, () => commerce.order, 'Attach delivery evidence'),
  'orders.create': {...write('POST', '/orders', 'orders:write', () => commerce.orderCreate, () => commerce.order, 'Create an order fixture (sandbox only)', app), env: 'test', created: true, errors: [404]},

  'checkouts.create': {
    ...write('POST', '/checkouts', 'checkout:write', () => commerce.storeCheckoutCreate, () => commerce.storeCheckout, 'Create a checkout session for a store product or variant', ['store']),
    bucket: 'checkout',
    created: true,
    errors: [404],
  },

  // ---- App API only
  'merchant.retrieve': get('/merchant', 'merchant:read', () => commerce.merchant, 'Merchant profile', app),
  'payments.list': list('/payments', 'payments:read', () => commerce.payment, 'Payments, newest first', appAndMerchant, () => commerce.paymentsListQuery),
  'payments.retrieve': get('/payments/{id}', 'payments:read', () => commerce.payment, 'One payment (charge id in live, row id in sandbox; the merchant API also takes its payment intent)', appAndMerchant),
  'refunds.list': list('/refunds', 'refunds:read', () => commerce.refund, 'Refunds (sandbox rows; live: refunded charges)', app),
  'disputes.list': list('/disputes', 'disputes:read', () => commerce.dispute, 'Chargebacks', app),
  'payouts.list': list('/payouts', 'payouts:read', () => commerce.payout, 'Bank settlements', app),
  'balance.retrieve': get('/balance', 'payouts:read', () => commerce.balance, 'Available and pending balance', app),
  // The App API shows live invoices only (its sandbox lists none); the merchant API shows its own environment's.
  'invoices.list': list('/invoices', 'invoices:read', () => commerce.invoice, 'Issued invoices, newest first (App API: live only, the sandbox lists none)', ['app', 'merchant'] as const),
  'invoices.retrieve': get('/invoices/{id}', 'invoices:read', () => commerce.invoice, 'One invoice', ['app', 'merchant'] as const),
  // The App API and the merchant API list the same subscriptions (the merchant's with their client secret while incomplete).
  'subscriptions.list': list('/subscriptions', 'subscriptions:read', () => commerce.subscription, 'Recurring agreements, newest first', ['app', 'merchant'] as const),
  'analytics.summary': {...get('/analytics/summary', 'analytics:read', () => commerce.analyticsSummary, 'Aggregated volume over the last N days', app), query: () => commerce.analyticsQuery},

  'subscriptionLinks.list': {...list('/subscription_links', 'subscriptions:read', () => commerce.subscriptionLink, 'Subscription links', app), env: 'live'},
  'subscriptionLinks.retrieve': {...get('/subscription_links/{id}', 'subscriptions:read', () => commerce.subscriptionLink, 'One subscription link', app), env: 'live'},
  'subscriptionLinks.create': {
    ...write('POST', '/subscription_links', 'subscriptions:write', () => commerce.subscriptionLinkCreate, () => commerce.subscriptionLink, 'Create a subscription link', app),
    env: 'live',
    created: true,
  },
  'subscriptionLinks.update': {
    ...write('POST', '/subscription_links/{id}', 'subscriptions:write', () => commerce.subscriptionLinkUpdate, () => commerce.subscriptionLink, 'Update a subscription link', app),
    env: 'live',
  },
  'subscriptionLinks.archive': {
    ...write('POST', '/subscription_links/{id}/archive', 'subscriptions:write', undefined, () => commerce.subscriptionLink, 'Archive a subscription link', app),
    env: 'live',
  },

  // ---- merchant API (`/v1`, secret key; a publishable key only where `publishable`)
  'products.modify': write('POST', '/products/{id}', 'products:write', () => catalog.productUpdate, () => catalog.product, 'Update a product (the merchant API updates with POST)', merchant),
  'products.defaultPrice': write('POST', '/products/{id}/default_price', 'products:write', () => catalog.defaultPriceSet, () => catalog.product, "Make an active price the product's default", merchant),

  'checkoutSessions.create': {
    ...write('POST', '/checkout/sessions', 'checkout:write', () => commerce.checkoutSessionCreate, () => commerce.checkoutSession, 'Create a checkout session (raw amount, line items or variants)', merchant),
    bucket: 'checkout',
    publishable: true,
    created: true,
    // 404: a line item's variant, price or product that is not the merchant's.
    errors: [402, 404],
  },
  'checkoutSessions.list': list('/checkout/sessions', 'checkout:write', () => commerce.checkoutSession, 'Checkout sessions, newest first', merchant, () => commerce.checkoutSessionsListQuery),
  'checkoutSessions.update': {
    ...write('PATCH', '/checkout/sessions/{id}', 'checkout:write', () => commerce.checkoutSessionUpdate, () => commerce.checkoutSession, 'Update an open session (flow_version 5 or higher)', merchant),
    errors: [422],
  },
  'checkoutSessions.updateViaPost': {
    ...write('POST', '/checkout/sessions/{id}/update', 'checkout:write', () => commerce.checkoutSessionUpdate, () => commerce.checkoutSession, 'Update an open session (POST alternative to PATCH)', merchant),
    errors: [422],
  },
  'checkoutSessions.retrieve': {
    ...get('/checkout/sessions/{id}', 'checkout:write', () => commerce.checkoutSession, 'A checkout session (with ?cs=<client_secret> and no key: the open session, without its secret)', merchant),
    query: () => commerce.checkoutSessionRetrieveQuery,
    clientSecret: 'cs',
    errors: [410],
  },
  'checkoutSessions.expire': {
    ...write('POST', '/checkout/sessions/{id}/expire', 'checkout:write', undefined, () => commerce.sessionExpired, 'Expire an open checkout session now', merchant),
    errors: [422],
  },

  'refunds.create': {...write('POST', '/refunds', 'refunds:write', () => commerce.refundCreate, () => commerce.refundRecord, 'Refund a payment in full or in part', merchant), created: true, errors: [404, 422]},
  'refunds.search': list('/refunds', 'refunds:read', () => commerce.refundRecord, 'The refunds of one charge or payment intent (one filter required)', merchant, () => commerce.refundsListQuery),
  'refunds.retrieve': get('/refunds/{id}', 'refunds:read', () => commerce.refundRecord, 'One refund', merchant),

  // ---- merchant API: billing and risk
  'subscriptions.create': {
    ...write('POST', '/subscriptions', 'subscriptions:write', () => billing.subscriptionCreate, () => commerce.subscription, 'Create a subscription, incomplete until its client secret is confirmed', merchant),
    created: true,
    errors: [404, 409],
  },
  'subscriptions.retrieve': {...get('/subscriptions/{id}', 'subscriptions:read', () => commerce.subscription, 'One subscription', merchant), errors: [404]},
  'subscriptions.cancel': {
    ...write('POST', '/subscriptions/{id}/cancel', 'subscriptions:write', () => billing.subscriptionCancel, () => commerce.subscription, 'Cancel at period end (default) or now', merchant),
    errors: [404, 409],
  },
  'customers.retrieve': {...get('/customers/{id}', 'subscriptions:read', () => billing.customer, 'One customer', merchant), errors: [404]},
  'fraudWarnings.list': {
    ...list('/fraud_warnings', 'fraud_warnings:read', () => billing.fraudWarning, 'Fraud warnings, newest first, keyset-paginated on (created, id)', merchant),
    query: () => billing.fraudWarningsListQuery,
  },
  'fraudWarnings.retrieve': {...get('/fraud_warnings/{id}', 'fraud_warnings:read', () => billing.fraudWarning, 'One fraud warning', merchant), errors: [404]},
  'fraudWarnings.testCreate': {
    ...write('POST', '/test_helpers/fraud_warnings', 'fraud_warnings:read', () => billing.fraudWarningTestCreate, () => billing.fraudWarning, 'Create a synthetic fraud warning (test keys only)', merchant),
    env: 'test',
    created: true,
  },
}) satisfies Record<string, EndpointDef>

export type EndpointId = keyof typeof endpoints
export type Endpoint<Id extends EndpointId> = (typeof endpoints)[Id]

/** Base path of each door, relative to `{base_url}`. */
export const DOOR_PREFIX: Record<Door, string> = {app: '/v1/app', store: '/v1/store', merchant: '/v1'}

/** Names of the `{param}`s in a path, in order. */
export function pathParams(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1])
}

/** Request body type of an endpoint (what a caller sends). */
export type BodyOf<Id extends EndpointId> = Endpoint<Id> extends {body: infer B extends z.ZodType} ? z.input<B> : never
/** Result type of an endpoint (one object, or the item type of a list). */
export type ResultOf<Id extends EndpointId> = z.output<Endpoint<Id>['response']>

export {listQuery}
