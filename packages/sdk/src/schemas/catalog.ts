/**
 * The store catalogue: store, products, prices, option groups and values, variants, files.
 * Each resource is written once here; the gateway validates with the request schemas, the SDK types
 * its calls and results with them, and the CLI derives its flags from them.
 */
import * as z from 'zod'

import {amount, currency, metadata, openEnum, resource, timestamp, uuid, webUrl, type IssueParams} from './common.js'

// ---------------------------------------------------------------- store

export const store = resource('store', {
  slug: z.string(),
  display_name: z.string(),
  status: openEnum(['draft', 'live', 'paused']),
  approval: openEnum(['pending', 'approved', 'rejected']),
  logo_url: z.string().nullable(),
  cover_url: z.string().nullable(),
  url: z.string(),
})
export type Store = z.infer<typeof store>

// ---------------------------------------------------------------- prices

export const RECURRING_INTERVALS = ['day', 'week', 'month', 'year'] as const
/** The longest billing period the platform allows per interval (one year, as the best-known APIs). */
export const MAX_INTERVAL_COUNT: Record<(typeof RECURRING_INTERVALS)[number], number> = {day: 365, week: 52, month: 12, year: 1}

/**
 * The per-interval bound of `interval_count` (the refinement below) as JSON Schema: one branch per
 * interval, so the OpenAPI document allows only the periods the gateway takes.
 */
export const periodBounds = () => ({
  oneOf: RECURRING_INTERVALS.map((interval) => ({
    properties: {interval: {const: interval}, interval_count: {maximum: MAX_INTERVAL_COUNT[interval]}},
  })),
})

export const recurringInput = z
  .strictObject({
    interval: z.enum(RECURRING_INTERVALS).describe('Billing interval'),
    interval_count: z.number().int().min(1).default(1).describe('Intervals between billings (default 1)'),
    trial_period_days: z.number().int().min(1).max(730).optional().describe('Free trial length in days'),
    usage_type: z.enum(['licensed', 'metered']).default('licensed').describe('licensed or metered'),
  })
  .refine((r) => r.interval_count <= MAX_INTERVAL_COUNT[r.interval], {
    message: 'the billing period may be at most one year',
    path: ['interval_count'],
  })
  .meta(periodBounds())

export const TAX_BEHAVIORS = ['inclusive', 'exclusive', 'unspecified'] as const

/** Body of `POST /products/{id}/prices`. */
export const priceCreate = z
  .strictObject({
    currency,
    unit_amount: amount.describe('Unit price in minor units, at least 250'),
    nickname: z.string().max(250).optional().describe('Internal label'),
    recurring: recurringInput.optional().describe('Recurring billing; omit for a one-time price'),
    tax_behavior: z.enum(TAX_BEHAVIORS).optional().describe('Whether the amount includes tax'),
    lookup_key: z.string().min(1).max(200).optional().describe('Your own key for the price'),
    set_as_default: z.boolean().optional().describe("Make it the product's default price"),
    transfer_lookup_key: z.boolean().optional().describe('Move lookup_key from the active price holding it to this one, in the same write (else 409 lookup_key_exists)'),
    metadata: metadata.optional(),
    active: z.boolean().optional().describe('false creates the price archived'),
  })
  // The gateway's 400s as JSON Schema: parameters_exclusive (an archived price cannot be the default) and
  // parameter_missing (transfer_lookup_key: true needs the lookup_key to move).
  .meta({
    not: {properties: {set_as_default: {const: true}, active: {const: false}}, required: ['set_as_default', 'active']},
    if: {properties: {transfer_lookup_key: {const: true}}, required: ['transfer_lookup_key']},
    then: {required: ['lookup_key']},
  })
export type PriceCreate = z.input<typeof priceCreate>

export const PRICE_IMMUTABLE_FIELDS = ['currency', 'unit_amount', 'recurring', 'type', 'product'] as const

/** Fields a request may not change, marked once here: derived surfaces (CLI flags) leave them out. A
 * registry of its own rather than `.meta()`, so the mark stays out of the JSON Schema and OpenAPI output. */
export const immutableFields = z.registry<{code: string}>()

/**
 * A field a request may not change. Declared (so it is checked before the strict schema's unknown-key
 * check) and always rejected with `code`; typed `undefined`, so SDK callers cannot send it.
 */
export const immutableField = (code: string, message: string) => {
  const field = z
    .custom<never>(() => false, {message, params: {code} satisfies IssueParams})
    .optional()
    .describe(`Immutable: sending it is a 400 ${code}`)
  immutableFields.add(field, {code})
  return field
}

export const isImmutable = (field: z.ZodType): boolean => immutableFields.has(field)

const priceImmutable = Object.fromEntries(
  PRICE_IMMUTABLE_FIELDS.map((f) => [f, immutableField('price_immutable', `cannot change once the price exists; create a new price and archive this one`)]),
) as Record<(typeof PRICE_IMMUTABLE_FIELDS)[number], ReturnType<typeof immutableField>>

/** Fields that can change after a price exists; amount, currency and recurrence are immutable. */
export const priceUpdate = z.strictObject({
  ...priceImmutable,
  active: z.boolean().optional().describe('false archives the price'),
  nickname: z.string().max(250).nullable().optional().describe('Internal label'),
  tax_behavior: z.enum(TAX_BEHAVIORS).optional().describe('Whether the amount includes tax'),
  lookup_key: z.string().min(1).max(200).nullable().optional().describe('Your own key for the price'),
  metadata: metadata.optional(),
})
export type PriceUpdate = z.input<typeof priceUpdate>

export const price = resource('price', {
  product: z.string(),
  unit_amount: z.number(),
  currency: z.string(),
  type: openEnum(['one_time', 'recurring']),
  recurring: z
    .looseObject({
      interval: openEnum(RECURRING_INTERVALS),
      interval_count: z.number(),
      trial_period_days: z.number().nullable(),
      usage_type: openEnum(['licensed', 'metered']),
    })
    .nullable(),
  nickname: z.string().nullable(),
  active: z.boolean(),
  tax_behavior: openEnum(TAX_BEHAVIORS),
  lookup_key: z.string().nullable(),
  metadata: z.record(z.string(), z.string()),
  created: timestamp,
})
export type Price = z.infer<typeof price>

// ---------------------------------------------------------------- products

/** An image is an http(s) URL or a storage path returned by `POST /files`. */
const imageRef = z
  .string()
  .max(2048)
  // A regex rather than a refinement, so the OpenAPI document carries it as the field's `pattern`.
  .regex(/^(?:https?:\/\/\S+|files\/[\w./-]+)$/, {message: 'must be an http(s) URL or a storage path from POST /files'})

export const packageDimensions = z
  .strictObject({
    length: z.number().positive().describe('cm'),
    width: z.number().positive().describe('cm'),
    height: z.number().positive().describe('cm'),
    weight: z.number().positive().describe('g'),
  })
  .describe('Package size in cm and weight in g')

const dedupe = <T>(xs: T[]): T[] => [...new Set(xs)]

/** Fields a product is created and updated with (the mutable product fields). */
const productFields = {
  name: z.string().trim().min(1).max(250).describe('Public name'),
  description: z.string().max(5000).nullable().optional().describe('Long description'),
  images: z.array(imageRef).max(8).optional().describe('Up to 8 image URLs or file paths; the first is the thumbnail'),
  tax_code: z
    .string()
    .regex(/^txcd_\w+$/, {message: 'must start with txcd_'})
    .nullable()
    .optional()
    .describe('Tax code (txcd_…)'),
  unit_label: z.string().max(12).nullable().optional().describe('Unit name, e.g. seat'),
  statement_descriptor: z
    .string()
    .max(22)
    .regex(/^[^<>\\'"*]*$/, {message: 'must not contain < > \\ \' " *'})
    .nullable()
    .optional()
    .describe('Text on card statements, at most 22 characters'),
  url: webUrl(/^https?$/).nullable().optional().describe('Link to the product page'),
  shippable: z.boolean().optional().describe('Whether the product is shipped'),
  package_dimensions: packageDimensions.nullable().optional(),
  metadata: metadata.optional(),
  tags: z.array(z.string().trim().min(1).max(64)).max(50).transform(dedupe).optional().describe('Tags (duplicates dropped)'),
  active: z.boolean().optional().describe('false archives the product'),
  store_visible: z.boolean().optional().describe('Listed on the storefront (default true)'),
}

/** Inline price on product create; creation with it is atomic. */
export const inlinePrice = z.strictObject({
  currency,
  unit_amount: amount,
  recurring: recurringInput.optional(),
  tax_behavior: z.enum(TAX_BEHAVIORS).optional(),
  nickname: z.string().max(250).optional(),
  lookup_key: z.string().min(1).max(200).optional(),
})

/** Body of `POST /products`. */
export const productCreate = z
  .strictObject({
    ...productFields,
    price: inlinePrice.optional().describe('Default price created with the product'),
    default_price: inlinePrice.optional().describe('Synonym of price'),
  })
  // The gateway's 400 parameters_exclusive, as JSON Schema.
  .meta({not: {required: ['price', 'default_price']}})
export type ProductCreate = z.input<typeof productCreate>

/** Body of merchant `POST /products/{id}/default_price`. */
export const defaultPriceSet = z.strictObject({price: z.string().startsWith('price_').describe('An active price of the product')})

/** Body of `PATCH /products/{id}`. */
export const productUpdate = z.strictObject({
  ...productFields,
  name: productFields.name.optional(),
  default_price_id: z.string().startsWith('price_').optional().describe('Make this active price of the product the default'),
})
export type ProductUpdate = z.input<typeof productUpdate>

// ---------------------------------------------------------------- options

// The spec lists `object` first and no `livemode` for the store catalogue's options.
export const optionValue = resource('option_value', {value: z.string(), sort_order: z.number()}, {envelope: ['object', 'id']})
export type OptionValue = z.infer<typeof optionValue>

export const optionGroup = resource('option_group', {product: z.string(), name: z.string(), values: z.array(optionValue)}, {envelope: ['object', 'id']})
export type OptionGroup = z.infer<typeof optionGroup>

const optionValueText = z.string().trim().min(1).max(100)

/** Body of `POST /products/{id}/options`. */
export const optionGroupCreate = z.strictObject({
  name: z.string().trim().min(1).max(100).describe('Option name, e.g. Size'),
  values: z
    .array(optionValueText)
    .min(1)
    .max(100)
    .refine((vs) => new Set(vs.map((v) => v.toLowerCase())).size === vs.length, {
      message: 'values must be unique',
      params: {code: 'values_not_unique'} satisfies IssueParams,
    })
    // What JSON Schema can say of it: no exact repeats (the gateway also ignores case and surrounding spaces).
    .meta({uniqueItems: true})
    .describe('Option values, e.g. S M L'),
})
export type OptionGroupCreate = z.input<typeof optionGroupCreate>

/** Body of `PATCH /options/{id}`. */
export const optionGroupUpdate = z.strictObject({name: optionGroupCreate.shape.name})
export type OptionGroupUpdate = z.input<typeof optionGroupUpdate>

/** Body of `POST /options/{id}/values`. */
export const optionValueCreate = z.strictObject({
  value: optionValueText.describe('The new value'),
  sort_order: z.number().int().optional().describe('Position among the values (default last)'),
})
export type OptionValueCreate = z.input<typeof optionValueCreate>

// ---------------------------------------------------------------- variants

/** Presentation fields, accepted on create and update and returned on every variant. */
export const variantPresentation = {
  title: z.string().trim().max(80).nullable().optional().describe('Title (≤ 80); falls back to the option combination'),
  description: z.string().max(2000).nullable().optional().describe('Description (≤ 2000)'),
  image_path: z.string().max(300).nullable().optional().describe('Storage path from POST /files (≤ 300)'),
  features: z
    .array(z.string().trim().min(1).max(120))
    .transform(dedupe)
    .pipe(z.array(z.string()).max(12))
    .optional()
    .describe('Feature bullets: at most 12 of at most 120 characters; duplicates dropped'),
  delivery_days: z.number().int().min(0).max(3650).nullable().optional().describe('Delivery time in days, 0 to 3650'),
  revisions: z.number().int().min(0).max(3650).nullable().optional().describe('Included revisions, 0 to 3650'),
  highlight: z.boolean().optional().describe('Highlight this variant'),
  sort_order: z.number().int().min(-1_000_000).max(1_000_000).optional().describe('Position among variants'),
}

const inventoryFields = {
  price: z.string().startsWith('price_').nullable().optional().describe("Price id on the same product; omit to inherit the product's default"),
  sku: z.string().trim().min(1).max(64).nullable().optional().describe('Stock keeping unit, unique in the store'),
  track_inventory: z.boolean().optional().describe('Track stock and reserve units at checkout'),
  stock_qty: z.number().int().min(0).max(1_000_000_000).optional().describe('Units in stock (required when tracking)'),
}

export const variantOptionRef = z.strictObject({
  group: z.string().min(1).describe('Option group id'),
  value: z.string().min(1).describe('Option value id'),
})

/** Body of `POST /products/{id}/variants`. */
export const variantCreate = z
  .strictObject({
    options: z.array(variantOptionRef).max(10).describe('One {group, value} per option group of the product'),
    ...inventoryFields,
    ...variantPresentation,
  })
  .refine((v) => !v.track_inventory || v.stock_qty !== undefined, {
    message: 'stock_qty is required when track_inventory is true',
    path: ['stock_qty'],
    params: {code: 'stock_qty_required'} satisfies IssueParams,
  })
  // The refinement as JSON Schema.
  .meta({if: {properties: {track_inventory: {const: true}}, required: ['track_inventory']}, then: {required: ['stock_qty']}})
export type VariantCreate = z.input<typeof variantCreate>

/** Body of `PATCH /variants/{id}`; the option combination is immutable. */
export const variantUpdate = z.strictObject({
  options: immutableField('options_immutable', 'the option combination cannot change; delete the variant and create a new one'),
  ...inventoryFields,
  ...variantPresentation,
})
export type VariantUpdate = z.input<typeof variantUpdate>

export const variant = resource('variant', {
  product: z.string(),
  is_default: z.boolean(),
  options: z.array(z.looseObject({group: z.string(), value: z.string(), group_name: z.string(), value_name: z.string()})),
  price: z.string().nullable(),
  price_inherited: z.boolean(),
  sku: z.string().nullable(),
  track_inventory: z.boolean(),
  stock_qty: z.number().nullable(),
  stock_reserved: z.number(),
  stock_available: z.number().nullable(),
  title: z.string(),
  description: z.string().nullable(),
  image_path: z.string().nullable(),
  features: z.array(z.string()),
  delivery_days: z.number().nullable(),
  revisions: z.number().nullable(),
  highlight: z.boolean(),
  sort_order: z.number(),
  created: timestamp,
  updated: timestamp,
}, {envelope: ['object', 'id', 'livemode']})
export type Variant = z.infer<typeof variant>

// ---------------------------------------------------------------- product (object)

export const product = resource('product', {
  name: z.string(),
  description: z.string().nullable(),
  images: z.array(z.string()),
  tax_code: z.string().nullable(),
  unit_label: z.string().nullable(),
  statement_descriptor: z.string().nullable(),
  url: z.string().nullable(),
  shippable: z.boolean().nullable(),
  package_dimensions: z.looseObject({length: z.number(), width: z.number(), height: z.number(), weight: z.number()}).nullable(),
  metadata: z.record(z.string(), z.string()),
  tags: z.array(z.string()),
  active: z.boolean(),
  store_visible: z.boolean(),
  default_price: z.string().nullable(),
  created: timestamp,
  updated: timestamp,
  /** Present on `/v1/store` and merchant products; on the App API only when a list asks for `expand=data.prices`. */
  prices: z.array(price).optional(),
  /** Present when one product is retrieved, or listed with `expand=data.option_groups`. */
  option_groups: z.array(optionGroup).optional(),
  /** Present when one product is retrieved, or listed with `expand=data.variants`. */
  variants: z.array(variant).optional(),
})
export type Product = z.infer<typeof product>

/**
 * The product fields a list leaves out unless asked (Stripe's `expand`): what a product carries only when
 * retrieved alone, and the App API's prices. A list asking for them returns each product with them, so a
 * reader of the whole catalogue needs one request per page instead of one or two per product.
 */
export const PRODUCT_EXPANDABLE = ['prices', 'option_groups', 'variants'] as const satisfies readonly (keyof typeof product.shape)[]
export type ProductExpandable = (typeof PRODUCT_EXPANDABLE)[number]
/** A list's expansion names the field inside each item of `data`, as Stripe's do. */
export const productExpansion = z.enum(PRODUCT_EXPANDABLE.map((f) => `data.${f}` as const) as [`data.${ProductExpandable}`, ...`data.${ProductExpandable}`[]])
export type ProductExpansion = z.infer<typeof productExpansion>

/** Query of the product lists: the page, plus the fields to embed in each product. */
export const productListQuery = z.object({
  expand: z
    // One value arrives as a string, several as an array (`expand=a&expand=b`, or Stripe's `expand[]=a`).
    .preprocess((v) => (typeof v === 'string' ? [v] : v), z.array(productExpansion).max(PRODUCT_EXPANDABLE.length * 2))
    .optional()
    .describe('Fields to embed in each listed product: data.prices, data.option_groups, data.variants (repeat the parameter for several)'),
})

export const productArchived = z.looseObject({id: z.string(), object: z.literal('product'), deleted: z.literal(true), active: z.literal(false)})

export const MAX_FILE_BYTES = 5 * 1024 * 1024

export const file = resource('file', {
  path: z.string(),
  filename: z.string(),
  size: z.number(),
  content_type: z.string(),
  created: timestamp,
})
export type FileObject = z.infer<typeof file>

export {uuid}
