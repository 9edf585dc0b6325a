/**
 * The platform's catalogue as a catalogue file: every active product with its active prices, option
 * groups and variants, written so that planning the result against the same store shows no change.
 * Products and prices made outside a catalogue are keyed by their ids.
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

function exportPrice(p: Price, isDefault: boolean): CatalogPrice {
  const {[CATALOG_KEY]: _key, [REPLACES]: _replaces, ...metadata} = p.metadata
  return {
    key: priceKeyOf(p),
    currency: p.currency,
    unit_amount: p.unit_amount,
    ...(p.recurring ? {recurring: present({interval: p.recurring.interval, interval_count: p.recurring.interval_count, trial_period_days: p.recurring.trial_period_days, usage_type: p.recurring.usage_type}) as CatalogPrice['recurring']} : {}),
    ...(p.nickname !== null ? {nickname: p.nickname} : {}),
    tax_behavior: p.tax_behavior as CatalogPrice['tax_behavior'],
    ...(Object.keys(metadata).length > 0 ? {metadata} : {}),
    ...(isDefault ? {default: true} : {}),
  }
}

function exportVariant(v: Variant, priceKey: (id: string) => string | undefined): CatalogVariant {
  const fields = present(Object.fromEntries(VARIANT_FIELDS.map((k) => [k, v[k]])))
  return {
    ...(fields as Partial<CatalogVariant>),
    options: Object.fromEntries(v.options.map((o) => [o.group_name, o.value_name])),
    ...(!v.price_inherited && v.price && priceKey(v.price) ? {price: priceKey(v.price)} : {}),
    ...(v.image_path ? {image: v.image_path} : {}),
  } as CatalogVariant
}

export function exportProduct({product, prices, groups, variants}: StoredProduct): CatalogProduct {
  const active = prices.filter((p) => p.active)
  const keyOf = new Map(active.map((p) => [p.id, priceKeyOf(p)]))
  const {[CATALOG_KEY]: _key, ...metadata} = product.metadata
  return {
    key: productKeyOf(product),
    ...(present(Object.fromEntries(PRODUCT_FIELDS.map((k) => [k, product[k]]))) as Pick<CatalogProduct, 'name'>),
    ...(product.images.length > 0 ? {images: product.images} : {}),
    ...(Object.keys(metadata).length > 0 ? {metadata} : {}),
    // The default first, then by age: a file's first price is its default.
    prices: active.sort((a, b) => Number(b.id === product.default_price) - Number(a.id === product.default_price)).map((p) => exportPrice(p, p.id === product.default_price)),
    options: Object.fromEntries(groups.map((g) => [g.name, [...g.values].sort((a, b) => a.sort_order - b.sort_order).map((v) => v.value)])),
    // The default variant only when it carries something of its own.
    variants: variants.filter((v) => !v.is_default || v.sku !== null || v.track_inventory).map((v) => exportVariant(v, (id) => keyOf.get(id))),
  } as CatalogProduct
}

export async function exportCatalog(client: CatalogClient, opts: {concurrency?: number} = {}): Promise<CatalogFile> {
  const products = (await listProducts(client)).filter((p) => p.active)
  const stored = await mapLimit(products, opts.concurrency ?? 8, (p) => readProduct(client, p))
  return {products: stored.map(exportProduct)}
}
