/**
 * Building blocks shared by every resource schema. Request schemas are strict (an unknown field is a
 * 400 `parameter_unknown`, which catches typos); response schemas are loose so the SDK tolerates fields
 * and enum values the platform adds later.
 */
import * as z from 'zod'

/** Stable error codes a schema can attach to an issue (read by the gateway's validation mapper). */
export interface IssueParams {
  code?: string
  type?: string
}

/** Lowest amount the platform charges, in minor units. */
export const MIN_AMOUNT = 250
/** Per-charge maximum (spec: not shown); eight digits, as the best-known payments APIs allow. */
export const MAX_AMOUNT = 99_999_999

/** Currencies the gateway accepts; an unknown code is 400 `currency_unsupported`. */
export const SUPPORTED_CURRENCIES = [
  'aud', 'bgn', 'brl', 'cad', 'chf', 'cny', 'czk', 'dkk', 'eur', 'gbp', 'hkd', 'huf', 'idr', 'ils', 'inr', 'isk',
  'jpy', 'krw', 'mxn', 'myr', 'nok', 'nzd', 'php', 'pln', 'ron', 'sek', 'sgd', 'thb', 'try', 'usd', 'zar', 'bhd', 'kwd',
] as const

export const currency = z
  .string()
  .regex(/^[a-z]{3}$/, {message: 'must be a 3-letter lowercase ISO currency code'})
  .refine((c) => (SUPPORTED_CURRENCIES as readonly string[]).includes(c), {
    message: 'currency is not supported',
    params: {code: 'currency_unsupported', type: 'currency_unsupported'} satisfies IssueParams,
  })
  // The refinement as JSON Schema, so generators send only codes the gateway takes.
  .meta({enum: [...SUPPORTED_CURRENCIES]})
  .describe('Three-letter ISO currency code, lowercase (e.g. eur)')

/** An amount in minor units with the platform's minimum and maximum and their spec'd error types. */
export const amount = z
  .number()
  .int()
  .refine((n) => n >= MIN_AMOUNT, {
    message: `must be at least ${MIN_AMOUNT} minor units`,
    params: {code: 'amount_too_small', type: 'amount_too_small'} satisfies IssueParams,
    abort: true,
  })
  .refine((n) => n <= MAX_AMOUNT, {
    message: `must be at most ${MAX_AMOUNT} minor units`,
    params: {code: 'amount_too_large', type: 'amount_too_large'} satisfies IssueParams,
  })
  // The refinements as JSON Schema bounds (they carry the spec's own error codes, so they stay refinements).
  .meta({minimum: MIN_AMOUNT, maximum: MAX_AMOUNT})
  .describe('Amount in minor units (1000 = 10.00), at least 250')

/** Free-form key/value pairs; bounds as the best-known payments APIs set them (spec: not shown). */
export const metadata = z
  .record(z.string().min(1).max(40), z.string().max(500))
  .refine((m) => Object.keys(m).length <= 50, {message: 'at most 50 keys'})
  .describe('Key/value pairs (at most 50 keys; keys ≤ 40 chars, values ≤ 500)')

/**
 * An absolute URL that is safe to store, redirect to and send in a header: no spaces or control
 * characters (NUL, CR, LF, tab…: checked first, because the WHATWG URL parser silently strips some),
 * then parsed whole by that parser with one of `protocols`.
 */
export const webUrl = (protocols: RegExp) =>
  z
    .string()
    .max(2048)
    .refine((s) => ![...s].some((c) => c <= ' ' || (c >= '\u007f' && c <= '\u009f')), {message: 'URLs may not contain spaces or control characters', params: {code: 'url_invalid'} satisfies IssueParams, abort: true})
    .refine((s) => URL.canParse(s) && protocols.test(new URL(s).protocol.slice(0, -1)), {message: 'Invalid URL', params: {code: 'url_invalid'} satisfies IssueParams})
    .meta({format: 'uri'})

/**
 * Query fields of which a request sends one (`refunds.search`: `charge` or `payment_intent`), by the
 * query schema: the OpenAPI document turns them into one exploded parameter whose schema is a `oneOf`.
 */
export const oneOfQueryFields = z.registry<{name: string; fields: readonly string[]}>()

/** A query schema, marked: of `fields`, a request sends one (the gateway refuses none, and reads the first). */
export function withOneOf<T extends z.ZodObject>(name: string, fields: ReadonlyArray<keyof T['shape'] & string>, query: T): T {
  oneOfQueryFields.add(query, {name, fields})
  return query
}

/** Unix seconds. */
export const timestamp = z.number().int()

export const uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, {
  message: 'must be a uuid',
})

export const environment = z.enum(['live', 'test'])
export type Environment = z.infer<typeof environment>

/**
 * An enum in a response: known values are typed, unknown future values pass through (the spec asks
 * clients to tolerate them).
 */
export function openEnum<const T extends readonly [string, ...string[]]>(values: T) {
  return z.union([z.enum(values), z.string()]) as unknown as z.ZodType<T[number] | (string & {})>
}

/** Query of every list route: `limit` 1..100, `offset` ≥ 0; unknown parameters are ignored. */
export const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(25).describe('Page size, 1 to 100'),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0).describe('Items to skip'),
  starting_after: z.string().min(1).max(200).optional().describe('Cursor: the id of the last item of the previous page'),
})
export type ListQuery = z.infer<typeof listQuery>

/**
 * A resource as the platform returns it: `id`, its kind in `object` and `livemode` first, then its own
 * fields. Loose, like every response schema, so fields the platform adds later pass through.
 */
export function resource<const K extends string, S extends z.ZodRawShape>(object: K, shape: S) {
  return z.looseObject({id: z.string(), object: z.literal(object), livemode: z.boolean(), ...shape})
}

/** The list envelope: newest first, no total count. */
export function listOf<T extends z.ZodType>(item: T) {
  return z.looseObject({object: z.literal('list'), has_more: z.boolean(), data: z.array(item)})
}

export interface List<T> {
  object: 'list'
  has_more: boolean
  data: T[]
}

/** The spec's error envelope. */
export const errorEnvelope = z.object({
  error: z.object({
    type: z.string(),
    code: z.string().optional(),
    param: z.string().optional(),
    message: z.string(),
    request_id: z.string(),
  }),
})
export type ErrorEnvelope = z.infer<typeof errorEnvelope>

/** Every scope an installation or key can hold. */
export const SCOPES = [
  'merchant:read',
  'store:read',
  'products:read',
  'products:write',
  'files:write',
  'orders:read',
  'orders:write',
  'checkout:write',
  'payments:read',
  'refunds:read',
  'refunds:write',
  'disputes:read',
  'payouts:read',
  'invoices:read',
  'subscriptions:read',
  'subscriptions:write',
  'analytics:read',
  'fraud_warnings:read',
] as const
export const scope = z.enum(SCOPES)
export type Scope = z.infer<typeof scope>

/** Deletion acknowledgement. */
export const deleted = z.looseObject({id: z.string(), object: z.string(), deleted: z.literal(true)})
