/**
 * Products and prices (spec: Product, Price, Store catalogue API). Rules, in the spec's order:
 * - a product holds up to 8 images, a statement descriptor of at most 22 characters, deduplicated tags
 *   (schema); it is created with its implicit default variant and, atomically, an optional inline
 *   `price` or its synonym `default_price` (not both);
 * - `PATCH` may set `default_price_id` to an active price of the same product; `active: false` archives;
 * - `DELETE` archives the product and all its prices; an archived product still reads;
 * - the App API's catalogue carries no prices, the store API's does; one product carries its option
 *   groups and variants;
 * - a price is at least 250 minor units; after creation only active, nickname, tax_behavior,
 *   lookup_key and metadata change (the schema rejects the rest with `price_immutable`).
 */
import type {z} from 'zod'

import type * as catalog from '../../sdk/schemas/catalog.js'
import {created, rawList, type Handlers} from '../app.js'
import {sweepExpired} from '../checkout.js'
import {getPrice, getProduct, KIND, productDetail, storeProductPage, type PriceDoc, type ProductDoc, type VariantDoc} from '../catalog.js'
import type {Scope} from '../db.js'
import {conflict, invalid, notFound} from '../errors.js'
import {newId, newUuid} from '../ids.js'
import type {Platform} from '../platform.js'

type ProductCreate = z.output<typeof catalog.productCreate>
type ProductUpdate = z.output<typeof catalog.productUpdate>
type PriceCreate = z.output<typeof catalog.priceCreate>
type PriceUpdate = z.output<typeof catalog.priceUpdate>

export const productHandlers: Partial<Handlers> = {
  'products.list'({gw, scope, door, query}) {
    // The hottest read: served from memory until the next write, and spliced from stored JSON otherwise.
    const kinds = door === 'app' ? [KIND.product] : [KIND.product, KIND.price]
    return gw.cachedRead(`products.list:${door}:${scope.merchant}:${scope.env}:${query.limit}:${query.offset}`, kinds, () => {
      const {rows, hasMore} =
        door === 'app' ? gw.storage.pageRaw(KIND.product, scope, query.limit, query.offset) : storeProductPage(gw, scope, query.limit, query.offset)
      return rawList(rows, hasMore)
    })
  },

  'products.create'({gw, scope, door, body}) {
    return created(productDetail(gw, scope, door, createProduct(gw, scope, body)))
  },

  'products.retrieve'({gw, scope, door, params}) {
    // Expiry is lazy: sessions past their time release their stock before variants are shown.
    sweepExpired(gw, scope)
    return productDetail(gw, scope, door, requireProduct(gw, scope, params.id))
  },

  'products.update'({gw, scope, door, params, body}) {
    sweepExpired(gw, scope)
    return productDetail(gw, scope, door, updateProduct(gw, scope, requireProduct(gw, scope, params.id), body))
  },

  'products.archive'({gw, scope, params}) {
    const product = requireProduct(gw, scope, params.id)
    archive(gw, scope, product)
    return {id: product.id, object: 'product', deleted: true, active: false}
  },

  'prices.list'({gw, scope, params, query}) {
    const product = requireProduct(gw, scope, params.id)
    const {rows, hasMore} = gw.storage.pageRaw(KIND.price, scope, query.limit, query.offset, product.id)
    return rawList(rows, hasMore)
  },

  'prices.create'({gw, scope, params, body}) {
    return created(createPrice(gw, scope, requireProduct(gw, scope, params.id), body))
  },

  'prices.update'({gw, scope, params, body}) {
    const product = requireProduct(gw, scope, params.id)
    const price = getPrice(gw, scope, params.price)
    if (!price || price.product !== product.id) throw notFound('price', params.price)
    return updatePrice(gw, scope, product, price, body)
  },
}

// ---------------------------------------------------------------- products

export function requireProduct(gw: Platform, scope: Scope, id: string): ProductDoc {
  const product = getProduct(gw, scope, id)
  if (!product) throw notFound('product', id)
  return product
}

/** Creates a product, its default variant and its optional inline default price, in the caller's transaction. */
export function createProduct(gw: Platform, scope: Scope, body: ProductCreate): ProductDoc {
  if (body.price && body.default_price) {
    throw invalid('parameters_exclusive', 'Send the inline price as price or as default_price, not both', 'default_price')
  }
  const now = gw.now()
  const product: ProductDoc = {
    id: newId('prod', 14),
    object: 'product',
    livemode: scope.env === 'live',
    name: body.name,
    description: body.description ?? null,
    images: body.images ?? [],
    tax_code: body.tax_code ?? null,
    unit_label: body.unit_label ?? null,
    statement_descriptor: body.statement_descriptor ?? null,
    url: body.url ?? null,
    shippable: body.shippable ?? null,
    package_dimensions: body.package_dimensions ?? null,
    metadata: body.metadata ?? {},
    tags: body.tags ?? [],
    active: true,
    store_visible: body.store_visible ?? true,
    default_price: null,
    created: now,
    updated: now,
  }
  gw.storage.insert(KIND.product, scope, product, {created: now})
  insertDefaultVariant(gw, scope, product)
  const inline = body.price ?? body.default_price
  if (inline) {
    const price = insertPrice(gw, scope, product, {...inline, metadata: {}})
    product.default_price = price.id
    gw.storage.save(product)
  }
  gw.emit(scope, 'product.created', product)
  if (body.active === false) archive(gw, scope, product)
  return product
}

function insertDefaultVariant(gw: Platform, scope: Scope, product: ProductDoc): VariantDoc {
  const variant: VariantDoc = {
    object: 'variant',
    id: newUuid(),
    livemode: product.livemode,
    product: product.id,
    is_default: true,
    options: [],
    price: null,
    sku: null,
    track_inventory: false,
    stock_qty: null,
    stock_reserved: 0,
    title: null,
    description: null,
    image_path: null,
    features: [],
    delivery_days: null,
    revisions: null,
    highlight: false,
    sort_order: 0,
    created: product.created,
    updated: product.created,
  }
  return gw.storage.insert(KIND.variant, scope, variant, {parent: product.id, created: product.created})
}

export function updateProduct(gw: Platform, scope: Scope, product: ProductDoc, body: ProductUpdate): ProductDoc {
  const {default_price_id, active, ...fields} = body
  if (default_price_id !== undefined) {
    const price = getPrice(gw, scope, default_price_id)
    if (!price || price.product !== product.id || !price.active) {
      throw invalid('price_unavailable', `default_price_id must be an active price of ${product.id}`, 'default_price_id')
    }
    product.default_price = price.id
  }
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue
    ;(product as Record<string, unknown>)[key] = key === 'metadata' ? mergeMetadata(product.metadata, value as Record<string, string>) : value
  }
  // Re-activating brings the product back; its archived prices stay archived until reactivated one by one.
  if (active === true) product.active = true
  product.updated = gw.now()
  gw.storage.save(product)
  gw.emit(scope, 'product.updated', product)
  if (active === false) archive(gw, scope, product)
  return product
}

/** Archives a product and every price of it (spec: archiving a product archives all its prices). */
function archive(gw: Platform, scope: Scope, product: ProductDoc): void {
  const now = gw.now()
  for (const price of gw.storage.all<PriceDoc>(KIND.price, scope, product.id)) {
    if (!price.active) continue
    price.active = false
    gw.storage.save(price)
    gw.emit(scope, 'price.updated', price)
  }
  if (!product.active) return
  product.active = false
  product.updated = now
  gw.storage.save(product)
  gw.emit(scope, 'product.updated', product)
}

/** Stripe's metadata update: keys merge, an empty value removes its key. */
function mergeMetadata(current: Record<string, string>, patch: Record<string, string>): Record<string, string> {
  const merged = {...current, ...patch}
  for (const [k, v] of Object.entries(patch)) if (v === '') delete merged[k]
  return merged
}

// ---------------------------------------------------------------- prices

type PriceInput = Omit<PriceCreate, 'set_as_default' | 'metadata' | 'active' | 'recurring'> & {
  recurring?: PriceCreate['recurring']
  metadata: Record<string, string>
  active?: boolean
}

function insertPrice(gw: Platform, scope: Scope, product: ProductDoc, input: PriceInput): PriceDoc {
  const now = gw.now()
  const price: PriceDoc = {
    id: newId('price', 24),
    object: 'price',
    livemode: scope.env === 'live',
    product: product.id,
    unit_amount: input.unit_amount,
    currency: input.currency,
    type: input.recurring ? 'recurring' : 'one_time',
    recurring: input.recurring
      ? {
          interval: input.recurring.interval,
          interval_count: input.recurring.interval_count,
          trial_period_days: input.recurring.trial_period_days ?? null,
          usage_type: input.recurring.usage_type,
        }
      : null,
    nickname: input.nickname ?? null,
    active: input.active ?? true,
    tax_behavior: input.tax_behavior ?? 'unspecified',
    lookup_key: input.lookup_key ?? null,
    metadata: input.metadata,
    created: now,
  }
  gw.storage.insert(KIND.price, scope, price, {parent: product.id, created: now})
  gw.emit(scope, 'price.created', price)
  return price
}

/** True when the product has no default price it can sell at. */
function lacksActiveDefault(gw: Platform, scope: Scope, product: ProductDoc): boolean {
  return product.default_price === null || getPrice(gw, scope, product.default_price)?.active !== true
}

function setDefaultPrice(gw: Platform, scope: Scope, product: ProductDoc, price: PriceDoc): void {
  product.default_price = price.id
  product.updated = gw.now()
  gw.storage.save(product)
  gw.emit(scope, 'product.updated', product)
}

export function createPrice(gw: Platform, scope: Scope, product: ProductDoc, body: PriceCreate): PriceDoc {
  if (!product.active) throw productArchived(product)
  const {set_as_default, ...input} = body
  const active = input.active ?? true
  if (set_as_default && !active) throw invalid('parameters_exclusive', 'An archived price cannot be the default price', 'set_as_default')
  const price = insertPrice(gw, scope, product, {...input, metadata: input.metadata ?? {}})
  // An active product with an active price always has an active default price.
  if (set_as_default || (active && lacksActiveDefault(gw, scope, product))) setDefaultPrice(gw, scope, product, price)
  return price
}

export function updatePrice(gw: Platform, scope: Scope, product: ProductDoc, price: PriceDoc, body: PriceUpdate): PriceDoc {
  if (body.active === false && price.active && product.default_price === price.id) {
    throw invalid('price_is_default', `${price.id} is the default price of ${product.id}; set another default_price_id first`, 'active')
  }
  if (body.active === true && !price.active && !product.active) throw productArchived(product)
  if (body.active !== undefined) price.active = body.active
  if (body.nickname !== undefined) price.nickname = body.nickname
  if (body.tax_behavior !== undefined) price.tax_behavior = body.tax_behavior
  if (body.lookup_key !== undefined) price.lookup_key = body.lookup_key
  if (body.metadata !== undefined) price.metadata = mergeMetadata(price.metadata, body.metadata)
  gw.storage.save(price)
  gw.emit(scope, 'price.updated', price)
  if (price.active && lacksActiveDefault(gw, scope, product)) setDefaultPrice(gw, scope, product, price)
  return price
}

const productArchived = (product: ProductDoc) =>
  conflict('product_archived', `${product.id} is archived; reactivate it (PATCH active: true) before adding or reactivating prices`)
