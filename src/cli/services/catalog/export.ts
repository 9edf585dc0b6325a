/**
 * The platform's catalogue as a catalogue file: every active product with its active prices, option
 * groups and variants, written so that planning the result against the same store shows no change.
 * Products and prices made outside a catalogue are keyed by their ids. Only what differs from what the
 * platform would default to is written (a variant's generated title, `tax_behavior: unspecified`, sort
 * orders already in list order, …), so `export | diff - catalog.yaml` shows real differences; `full`
 * writes every field.
 */
import type {Price, Variant} from '@payapp/sdk/schemas/catalog'
import type {CatalogFile, CatalogPrice, CatalogProduct, CatalogVariant} from './schema.js'
import {CATALOG_KEY, REPLACES, listProducts, mapLimit, priceKeyOf, productKeyOf, readProduct, type CatalogClient, type StoredProduct} from './store.js'

const PRODUCT_FIELDS = ['name', 'description', 'tax_code', 'unit_label', 'statement_descriptor', 'url', 'shippable', 'package_dimensions', 'tags', 'store_visible'] as const
const VARIANT_FIELDS = ['sku', 'track_inventory', 'stock_qty', 'title', 'description', 'features', 'delivery_days', 'revisions', 'highlight', 'sort_order'] as const

/** Drops nulls and empty lists, which are the defaults a file may leave out. */
function present<T extends object>(obj: T): Partial<T> {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0))) as Partial<T>
}

/** Drops the fields equal to what the platform defaults them to (the short form of an export). */
function withoutDefaults<T extends object>(obj: T, defaults: Partial<Record<keyof T, unknown>>): Partial<T> {
  return Object.fromEntries(Object.entries(obj).filter(([k, v]) => !(k in defaults) || JSON.stringify(defaults[k as keyof T]) !== JSON.stringify(v))) as Partial<T>
}

function exportPrice(p: Price, isDefault: boolean, full: boolean): CatalogPrice {
  const {[CATALOG_KEY]: _key, [REPLACES]: _replaces, ...metadata} = p.metadata
  const recurring = p.recurring && present({interval: p.recurring.interval, interval_count: p.recurring.interval_count, trial_period_days: p.recurring.trial_period_days, usage_type: p.recurring.usage_type})
  const price = {
    key: priceKeyOf(p),
    currency: p.currency,
    unit_amount: p.unit_amount,
    ...(recurring ? {recurring: (full ? recurring : withoutDefaults(recurring, {interval_count: 1, usage_type: 'licensed'})) as CatalogPrice['recurring']} : {}),
    ...(p.nickname !== null ? {nickname: p.nickname} : {}),
    tax_behavior: p.tax_behavior as CatalogPrice['tax_behavior'],
    ...(Object.keys(metadata).length > 0 ? {metadata} : {}),
    // The first price is the default anyway; the short form says so only by order.
    ...(isDefault && full ? {default: true} : {}),
  }
  return (full ? price : withoutDefaults(price, {tax_behavior: 'unspecified'})) as CatalogPrice
}

function exportVariant(v: Variant, productName: string, priceKey: (id: string) => string | undefined, full: boolean, sortOrderImplied: boolean): CatalogVariant {
  const fields = present(Object.fromEntries(VARIANT_FIELDS.map((k) => [k, v[k]])))
  const generatedTitle = v.is_default || v.options.length === 0 ? productName : v.options.map((o) => o.value_name).join(' / ')
  const options = Object.fromEntries(v.options.map((o) => [o.group_name, o.value_name]))
  const variant = {
    ...(full ? fields : withoutDefaults(fields as Record<string, unknown>, {title: generatedTitle, highlight: false, track_inventory: false, ...(sortOrderImplied ? {sort_order: v.sort_order} : {})})),
    options,
    ...(!v.price_inherited && v.price && priceKey(v.price) ? {price: priceKey(v.price)} : {}),
    ...(v.image_path ? {image: v.image_path} : {}),
  }
  return variant as CatalogVariant
}

/** Sort orders rising along the list (as the platform numbers variants in creation order) say nothing the order does not. */
const risingSortOrders = (variants: readonly Variant[]) => variants.every((v, i) => i === 0 || v.sort_order > variants[i - 1]!.sort_order)

export function exportProduct({product, prices, groups, variants}: StoredProduct, full = true): CatalogProduct {
  const active = prices.filter((p) => p.active)
  const keyOf = new Map(active.map((p) => [p.id, priceKeyOf(p)]))
  const {[CATALOG_KEY]: _key, ...metadata} = product.metadata
  const fields = present(Object.fromEntries(PRODUCT_FIELDS.map((k) => [k, product[k]])))
  const kept = variants.filter((v) => !v.is_default || v.sku !== null || v.track_inventory)
  const sortOrderImplied = risingSortOrders(variants)
  const out = {
    key: productKeyOf(product),
    ...((full ? fields : withoutDefaults(fields as Record<string, unknown>, {store_visible: true})) as Pick<CatalogProduct, 'name'>),
    ...(product.images.length > 0 ? {images: product.images} : {}),
    ...(Object.keys(metadata).length > 0 ? {metadata} : {}),
    // The default first, then by age: a file's first price is its default.
    prices: active.sort((a, b) => Number(b.id === product.default_price) - Number(a.id === product.default_price)).map((p) => exportPrice(p, p.id === product.default_price, full)),
    options: Object.fromEntries(groups.map((g) => [g.name, [...g.values].sort((a, b) => a.sort_order - b.sort_order).map((v) => v.value)])),
    // The default variant only when it carries something of its own.
    variants: kept.map((v) => exportVariant(v, product.name, (id) => keyOf.get(id), full, sortOrderImplied)),
  }
  return out as CatalogProduct
}

export async function exportCatalog(client: CatalogClient, opts: {concurrency?: number; full?: boolean} = {}): Promise<CatalogFile> {
  const products = (await listProducts(client)).filter((p) => p.active)
  const stored = await mapLimit(products, opts.concurrency ?? 8, (p) => readProduct(client, p))
  return {products: stored.map((p) => exportProduct(p, opts.full ?? false))}
}
