/**
 * What the platform holds now: every product, and for the ones a run needs, their prices, option
 * groups and variants. Read through an SDK client of either door, listed with them embedded (`expand`);
 * a product listed without them is read on its own (and its prices listed, on the App API).
 */
import type {AppClient, ListParams} from '@payapp/sdk/client'
import type {OptionGroup, Price, Product, Variant} from '@payapp/sdk/schemas/catalog'

/** The catalogue part of either client: AppClient and StoreClient have the same catalogue namespaces. */
export type CatalogClient = Pick<AppClient, 'products' | 'options' | 'values' | 'variants' | 'files'>

export interface StoredProduct {
  product: Product
  prices: Price[]
  groups: OptionGroup[]
  variants: Variant[]
}

/** The product's catalogue key: `metadata.catalog_key`, else its id (a product made outside a catalogue). */
export const CATALOG_KEY = 'catalog_key'
/** On a price made by a replace: the id of the price it replaces, until that one is retired. */
export const REPLACES = 'catalog_replaces'
export const productKeyOf = (p: Product) => p.metadata[CATALOG_KEY] ?? p.id
export const priceKeyOf = (p: Price) => p.lookup_key ?? p.id

const PAGE = {limit: 100}
/** Each listed product with everything a plan compares: one request per page instead of one or two per product. */
const EXPANDED: ListParams<'products.list'> = {...PAGE, expand: ['data.prices', 'data.option_groups', 'data.variants']}

/** Runs `fn` over `items`, at most `limit` at a time, keeping order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const i = next++
      out[i] = await fn(items[i]!, i)
    }
  }
  await Promise.all(Array.from({length: Math.max(1, Math.min(limit, items.length))}, worker))
  return out
}

/** Every product, with its prices, option groups and variants where the platform embeds them (`expand`). */
export async function listProducts(client: CatalogClient): Promise<Product[]> {
  const out: Product[] = []
  for await (const p of client.products.list(EXPANDED)) out.push(p)
  // Oldest first, so the first of two products with one key is the original.
  return out.reverse()
}

/**
 * One product with its prices, option groups and variants: as listed when the list embedded them, else read
 * one by one (a platform that ignores `expand`, as it ignores any unknown query parameter, lists them bare).
 */
export async function readProduct(client: CatalogClient, listed: Product): Promise<StoredProduct> {
  const product = listed.option_groups && listed.variants ? listed : await client.products.retrieve(listed.id)
  let prices = product.prices ?? listed.prices
  if (!prices) {
    prices = []
    for await (const price of client.products.prices.list(product.id, PAGE)) prices.push(price)
  }
  return {product, prices, groups: product.option_groups ?? [], variants: product.variants ?? []}
}
