/**
 * Products (spec: Product, Store catalogue API). Rules, in the spec's order:
 * - a product holds up to 8 images, a statement descriptor of at most 22 characters, deduplicated tags
 *   (schema); it is created with its implicit default variant and, atomically, an optional inline
 *   `price` or its synonym `default_price` (not both: 400 `parameters_exclusive`);
 * - `PATCH` may set `default_price_id` to an active price of the same product; `active: false` archives;
 * - `DELETE` archives the product and all its prices; an archived product still reads;
 * - the App API's catalogue carries no prices, the store API's does; one product carries its option
 *   groups and variants.
 * Prices, option groups and variants have their own modules.
 */
import type {z} from 'zod'

import type * as catalog from '@payapp/sdk/schemas/catalog'
import type {Product, ProductExpandable, ProductExpansion} from '@payapp/sdk/schemas/catalog'
import {invalid} from '../errors.js'
import {newId} from '../ids.js'
import type {Tx} from './context.js'
import type {Kind, PriceDoc, ProductDoc, Scope, VariantDoc} from '../storage/documents.js'
import type {RawPage} from '../storage/storage.js'
import {requireCanCreate} from './merchants.js'
import {optionGroupView, optionsOf, optionsOfMany, type Options} from './option-groups.js'
import {archivePrices, insertPrice, pricesOf} from './prices.js'
import {mergeMetadata, requireDoc, stamp} from './shared.js'
import {byDisplayOrder, insertDefaultVariant, variantsOf, variantView} from './variants.js'

type ProductCreate = z.output<typeof catalog.productCreate>
type ProductUpdate = z.output<typeof catalog.productUpdate>

export const requireProduct = async (tx: Tx, scope: Scope, id: string) => requireDoc(tx, 'product', scope, id, 'product')

/**
 * A page of products, newest first, as stored JSON: the hottest read, served from memory until the next
 * write. `withPrices` (the store API) splices each product's prices in, in two queries and unparsed.
 * `expand` embeds the fields a product otherwise carries only when retrieved alone (and, on the App API,
 * its prices), as `productDetail` shows them: one query per relation for the whole page, never one per product.
 */
export async function listProducts(
  tx: Tx,
  scope: Scope,
  withPrices: boolean,
  page: {limit: number; offset: number; starting_after?: string; expand?: readonly ProductExpansion[]},
): Promise<RawPage> {
  const fields = new Set(page.expand?.map((e) => e.slice('data.'.length) as ProductExpandable))
  const prices = withPrices || fields.has('prices')
  const options = fields.has('option_groups')
  const variants = fields.has('variants')
  const expanded = [prices && 'prices', options && 'option_groups', variants && 'variants'].filter(Boolean).join(',')
  const key = `products.list:${expanded}:${scope.merchant}:${scope.env}:${page.limit}:${page.offset}:${page.starting_after ?? ''}`
  const kinds: Kind[] = ['product', ...(prices ? (['price'] as const) : []), ...(options || variants ? (['option_group', 'option_value'] as const) : []), ...(variants ? (['variant'] as const) : [])]
  return tx.cachedRead(key, kinds, async () => {
    const products = await tx.pageRaw('product', scope, page)
    if (!options && !variants) {
      if (!prices) return products
      const priceRows = await tx.childrenRaw('price', scope, products.ids)
      // A stored document is a JSON object: drop its closing brace and append the prices.
      const rows = products.rows.map((data, i) => `${data.slice(0, -1)},"prices":[${priceRows.get(products.ids[i])!.join(',')}]}`)
      return {...products, rows}
    }
    const [priceRows, optionsBy, variantRows] = await Promise.all([
      prices ? tx.childrenRaw('price', scope, products.ids) : undefined,
      optionsOfMany(tx, scope, products.ids),
      variants ? tx.childrenRaw('variant', scope, products.ids) : undefined,
    ])
    const rows = products.rows.map((data, i) => {
      const product = JSON.parse(data) as ProductDoc
      const id = products.ids[i]!
      return JSON.stringify(
        productView(product, {
          prices: priceRows?.get(id)!.map((r) => JSON.parse(r) as PriceDoc),
          options: optionsBy.get(id)!,
          // childrenRaw reads newest first; variantsOf, oldest first.
          variants: variantRows?.get(id)!.map((r) => JSON.parse(r) as VariantDoc).reverse(),
          showOptions: options,
        }),
      )
    })
    return {...products, rows}
  })
}

/** One product in full: option groups and variants always, its prices on the store API only (spec). */
export async function productDetail(tx: Tx, scope: Scope, withPrices: boolean, product: ProductDoc): Promise<Product> {
  const options = await optionsOf(tx, scope, product.id)
  return productView(product, {
    prices: withPrices ? await pricesOf(tx, scope, product.id) : undefined,
    options,
    variants: await variantsOf(tx, scope, product.id),
    showOptions: true,
  })
}

/** A product as served with the parts read for it: prices newest first, variants oldest first (shown in display order). */
function productView(product: ProductDoc, parts: {prices?: PriceDoc[]; options: Options; variants?: VariantDoc[]; showOptions: boolean}): Product {
  const {prices, options, variants, showOptions} = parts
  return {
    ...product,
    ...(prices ? {prices} : {}),
    ...(showOptions ? {option_groups: options.groups.map((g) => optionGroupView(g, g.values))} : {}),
    ...(variants ? {variants: variants.sort(byDisplayOrder).map((v) => variantView(v, product, options))} : {}),
  }
}

/** Creates a product, its default variant and its optional inline default price, in the caller's transaction. */
export async function createProduct(tx: Tx, scope: Scope, body: ProductCreate): Promise<ProductDoc> {
  if (body.price && body.default_price) {
    throw invalid('parameters_exclusive', 'Send the inline price as price or as default_price, not both', 'default_price')
  }
  await requireCanCreate(tx, scope, 'product')
  const base = stamp(tx, scope, 'product', newId('prod', 14))
  const product: ProductDoc = {
    ...base,
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
    updated: base.created,
  }
  await tx.insert('product', scope, product, {created: product.created})
  await insertDefaultVariant(tx, scope, product)
  const inline = body.price ?? body.default_price
  if (inline) {
    const price = await insertPrice(tx, scope, product, {...inline, metadata: {}})
    product.default_price = price.id
    await tx.save(product)
  }
  await tx.emit(scope, 'product.created', product)
  if (body.active === false) await archiveProduct(tx, scope, product)
  return product
}

export async function updateProduct(tx: Tx, scope: Scope, product: ProductDoc, body: ProductUpdate): Promise<ProductDoc> {
  const {default_price_id, active, ...fields} = body
  if (default_price_id !== undefined) {
    const price = await tx.get('price', scope, default_price_id)
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
  product.updated = tx.now(scope)
  await tx.save(product)
  await tx.emit(scope, 'product.updated', product)
  if (active === false) await archiveProduct(tx, scope, product)
  return product
}

/** Archives a product and every price of it (spec: archiving a product archives all its prices). */
export async function archiveProduct(tx: Tx, scope: Scope, product: ProductDoc) {
  await archivePrices(tx, scope, product)
  if (product.active) {
    product.active = false
    product.updated = tx.now(scope)
    await tx.save(product)
    await tx.emit(scope, 'product.updated', product)
  }
  return {id: product.id, object: 'product' as const, deleted: true as const, active: false as const}
}
