/**
 * The store catalogue's stored documents and the reads other modules build on (checkout sells variants
 * and reserves their stock through these). Products and prices are stored exactly as the App API serves
 * them, so lists splice stored JSON; option groups, option values and variants are stored as records and
 * served through views that resolve names, inherited prices and available stock.
 */
import type Database from 'better-sqlite3'
import type {z} from 'zod'

import type {Door} from '../sdk/endpoints.js'
import {product as productSchema, type OptionGroup, type OptionValue, type Price, type Product, type Variant} from '../sdk/schemas/catalog.js'
import type {Scope, Storage} from './db.js'
import type {Platform} from './platform.js'

// ---------------------------------------------------------------- stored documents

/** Kind `product`: the App API's product object, byte for byte (no prices, option groups or variants). */
export const productDoc = productSchema.omit({prices: true, option_groups: true, variants: true})
export type ProductDoc = z.output<typeof productDoc>

/** Kind `price`, parent its product: the price object as served. */
export type PriceDoc = Price & {object: 'price'; type: 'one_time' | 'recurring'; metadata: Record<string, string>}

/** Kind `option_group`, parent its product; its values are `option_value` records under it. */
export interface OptionGroupDoc {
  object: 'option_group'
  id: string
  product: string
  name: string
}

/** Kind `option_value`, parent its group. */
export interface OptionValueDoc {
  object: 'option_value'
  id: string
  group: string
  product: string
  value: string
  sort_order: number
}

/**
 * Kind `variant`, parent its product. `price` is the variant's own price (null: it inherits the
 * product's default); `title` null falls back to its option combination. Checkout moves the stock
 * fields: units in stock (`stock_qty`) include the units held by open checkouts (`stock_reserved`).
 */
export interface VariantDoc {
  object: 'variant'
  id: string
  livemode: boolean
  product: string
  is_default: boolean
  options: Array<{group: string; value: string}>
  price: string | null
  sku: string | null
  track_inventory: boolean
  stock_qty: number | null
  stock_reserved: number
  title: string | null
  description: string | null
  image_path: string | null
  features: string[]
  delivery_days: number | null
  revisions: number | null
  highlight: boolean
  sort_order: number
  created: number
  updated: number
}

export const KIND = {
  product: 'product',
  price: 'price',
  group: 'option_group',
  value: 'option_value',
  variant: 'variant',
} as const

// ---------------------------------------------------------------- reads

export const getProduct = (gw: Platform, scope: Scope, id: string) => gw.storage.get<ProductDoc>(KIND.product, scope, id)
export const getPrice = (gw: Platform, scope: Scope, id: string) => gw.storage.get<PriceDoc>(KIND.price, scope, id)
export const getVariant = (gw: Platform, scope: Scope, id: string) => gw.storage.get<VariantDoc>(KIND.variant, scope, id)
export const getOptionGroup = (gw: Platform, scope: Scope, id: string) => gw.storage.get<OptionGroupDoc>(KIND.group, scope, id)
export const getOptionValue = (gw: Platform, scope: Scope, id: string) => gw.storage.get<OptionValueDoc>(KIND.value, scope, id)

/** A product's prices, newest first. */
export const pricesOf = (gw: Platform, scope: Scope, productId: string) => gw.storage.all<PriceDoc>(KIND.price, scope, productId).reverse()

/** A product's variants, oldest first (the default variant, created with the product, leads). */
export const variantsOf = (gw: Platform, scope: Scope, productId: string) => gw.storage.all<VariantDoc>(KIND.variant, scope, productId)

/** The product's implicit default variant (rule 7): the one sold when no variant is named. */
export function defaultVariantOf(gw: Platform, scope: Scope, product: Pick<ProductDoc, 'id'>): VariantDoc {
  const found = variantsOf(gw, scope, product.id).find((v) => v.is_default)
  if (!found) throw new Error(`product ${product.id} has no default variant`)
  return found
}

/** The price a variant sells at: its own, else the product's default (rule 4); null when neither exists. */
export const effectivePrice = (variant: Pick<VariantDoc, 'price'>, product: Pick<ProductDoc, 'default_price'>): string | null =>
  variant.price ?? product.default_price

/** Units a checkout may still reserve; null when the variant does not track inventory. */
export const stockAvailable = (variant: VariantDoc): number | null =>
  variant.track_inventory ? Math.max(0, (variant.stock_qty ?? 0) - variant.stock_reserved) : null

/** Persists a variant changed by another module (a reservation, a sale), stamping `updated`. */
export function saveVariant(gw: Platform, variant: VariantDoc): VariantDoc {
  variant.updated = gw.now()
  return gw.storage.save(variant)
}

// ---------------------------------------------------------------- option groups and their values

/** A product's option groups with their values, in creation order; values by sort_order. */
export interface Options {
  groups: Array<OptionGroupDoc & {values: OptionValueDoc[]}>
  /** value id → its group and names, to resolve a variant's combination. */
  byValue: Map<string, {group: OptionGroupDoc; value: OptionValueDoc}>
}

export function optionsOf(gw: Platform, scope: Scope, productId: string): Options {
  // Read on every variant write and view; options themselves change rarely.
  return gw.cachedRead(`options:${scope.merchant}:${scope.env}:${productId}`, [KIND.group, KIND.value], () => readOptions(gw, scope, productId))
}

function readOptions(gw: Platform, scope: Scope, productId: string): Options {
  const groups = gw.storage.all<OptionGroupDoc>(KIND.group, scope, productId).map((g) => ({...g, values: valuesOf(gw, scope, g.id)}))
  const byValue = new Map<string, {group: OptionGroupDoc; value: OptionValueDoc}>()
  for (const group of groups) for (const value of group.values) byValue.set(value.id, {group, value})
  return {groups, byValue}
}

/** A group's values by sort_order, ties in creation order (Array#sort is stable). */
export const valuesOf = (gw: Platform, scope: Scope, groupId: string) =>
  gw.storage.all<OptionValueDoc>(KIND.value, scope, groupId).sort((a, b) => a.sort_order - b.sort_order)

// ---------------------------------------------------------------- views

export const optionValueView = (v: OptionValueDoc): OptionValue => ({object: 'option_value', id: v.id, value: v.value, sort_order: v.sort_order})

export const optionGroupView = (g: OptionGroupDoc, values: OptionValueDoc[]): OptionGroup => ({
  object: 'option_group',
  id: g.id,
  product: g.product,
  name: g.name,
  values: values.map(optionValueView),
})

export function variantView(v: VariantDoc, product: ProductDoc, options: Options): Variant {
  const combination = v.options.map((o) => {
    const named = options.byValue.get(o.value)
    return {group: o.group, value: o.value, group_name: named?.group.name ?? '', value_name: named?.value.value ?? ''}
  })
  const fallbackTitle = v.is_default || combination.length === 0 ? product.name : combination.map((o) => o.value_name).join(' / ')
  return {
    object: 'variant',
    id: v.id,
    livemode: v.livemode,
    product: v.product,
    is_default: v.is_default,
    options: combination,
    price: effectivePrice(v, product),
    price_inherited: v.price === null,
    sku: v.sku,
    track_inventory: v.track_inventory,
    stock_qty: v.stock_qty,
    stock_reserved: v.stock_reserved,
    stock_available: stockAvailable(v),
    title: v.title ?? fallbackTitle,
    description: v.description,
    image_path: v.image_path,
    features: v.features,
    delivery_days: v.delivery_days,
    revisions: v.revisions,
    highlight: v.highlight,
    sort_order: v.sort_order,
    created: v.created,
    updated: v.updated,
  }
}

/** Variants in display order: sort_order, then creation. */
export const byDisplayOrder = (a: VariantDoc, b: VariantDoc) => a.sort_order - b.sort_order

/**
 * One product as a door serves it in full: the App API's catalogue carries no prices (spec), the store
 * API's does; both carry the option groups and variants.
 */
export function productDetail(gw: Platform, scope: Scope, door: Door, product: ProductDoc): Product {
  const options = optionsOf(gw, scope, product.id)
  return {
    ...product,
    ...(door === 'store' ? {prices: pricesOf(gw, scope, product.id)} : {}),
    option_groups: options.groups.map((g) => optionGroupView(g, g.values)),
    variants: variantsOf(gw, scope, product.id)
      .sort(byDisplayOrder)
      .map((v) => variantView(v, product, options)),
  }
}

// ---------------------------------------------------------------- fast list reads

interface CatalogStatements {
  productPage: Database.Statement<[string, string, number, number], {id: string; data: string}>
  pricesOfMany: Database.Statement<[string, string, string], {parent: string; data: string}>
  skuOwners: Database.Statement<[string, string, string], {id: string}>
  combinationOwner: Database.Statement<[string, string], {id: string}>
  nextSortOrder: Database.Statement<[string], {next: number}>
}
const statements = new WeakMap<Storage, CatalogStatements>()

function stmts(storage: Storage): CatalogStatements {
  let s = statements.get(storage)
  if (!s) {
    s = {
      productPage: storage.db.prepare(
        `SELECT id, data FROM objects WHERE merchant = ? AND env = ? AND kind = 'product' ORDER BY seq DESC LIMIT ? OFFSET ?`,
      ),
      pricesOfMany: storage.db.prepare(
        `SELECT parent, data FROM objects WHERE merchant = ? AND env = ? AND kind = 'price'
           AND parent IN (SELECT value FROM json_each(?)) ORDER BY seq DESC`,
      ),
      skuOwners: storage.db.prepare(
        `SELECT id FROM objects WHERE merchant = ? AND env = ? AND kind = 'variant' AND json_extract(data, '$.sku') = ?`,
      ),
      combinationOwner: storage.db.prepare(
        `SELECT id FROM objects WHERE parent = ? AND kind = 'variant' AND json_extract(data, '$.options') = ?`,
      ),
      nextSortOrder: storage.db.prepare(
        `SELECT COALESCE(MAX(json_extract(data, '$.sort_order')) + 1, 0) AS next FROM objects WHERE parent = ? AND kind = 'variant'`,
      ),
    }
    statements.set(storage, s)
  }
  return s
}

/**
 * A page of store-door products, newest first: the stored documents with each product's prices spliced
 * in as JSON, in two queries and without parsing anything.
 */
export function storeProductPage(gw: Platform, scope: Scope, limit: number, offset: number): {rows: string[]; hasMore: boolean} {
  const s = stmts(gw.storage)
  const page = s.productPage.all(scope.merchant, scope.env, limit + 1, offset)
  const hasMore = page.length > limit
  if (hasMore) page.pop()
  const prices = new Map<string, string[]>(page.map((p) => [p.id, []]))
  for (const row of s.pricesOfMany.all(scope.merchant, scope.env, JSON.stringify(page.map((p) => p.id)))) prices.get(row.parent)?.push(row.data)
  // A stored document is a JSON object: drop its closing brace and append the prices.
  const rows = page.map((p) => `${p.data.slice(0, -1)},"prices":[${prices.get(p.id)!.join(',')}]}`)
  return {rows, hasMore}
}

/** Ids of the variants in the scope whose SKU is `sku`. */
export const variantsWithSku = (gw: Platform, scope: Scope, sku: string) => stmts(gw.storage).skuOwners.all(scope.merchant, scope.env, sku).map((r) => r.id)

/**
 * The variant of a product with exactly this combination, if any. Combinations are stored in the
 * product's group order, so the stored JSON text is canonical and the lookup is one index probe.
 */
export const variantWithCombination = (gw: Platform, productId: string, options: VariantDoc['options']) =>
  stmts(gw.storage).combinationOwner.get(productId, JSON.stringify(options))?.id

/** The sort order after the product's last variant. */
export const nextVariantSortOrder = (gw: Platform, productId: string) => stmts(gw.storage).nextSortOrder.get(productId)!.next
