/**
 * The storefront (spec: a store's URL; store checkouts default to it): a store found by its slug, and
 * what it shows a buyer, its active, store-visible products with their default price, newest first.
 */
import type {Env, MerchantDoc, PriceDoc, ProductDoc} from '../storage/documents.js'
import type {Tx} from './context.js'

export interface StorefrontItem {
  product: ProductDoc
  /** The default price when it is active, else null (not for sale yet). */
  price: PriceDoc | null
}

export const storeBySlug = async (tx: Tx, slug: string): Promise<MerchantDoc | undefined> => await tx.merchantBySlug(slug)

export async function storefrontItems(tx: Tx, merchant: MerchantDoc, env: Env): Promise<StorefrontItem[]> {
  const scope = {merchant: merchant.id, env}
  // Two queries for the whole page, not one more per product for its price.
  const prices = new Map((await tx.all('price', scope)).map((p) => [p.id, p]))
  return (await tx.all('product', scope))
    .filter((p) => p.active && p.store_visible)
    .reverse()
    .map((product) => {
      const price = product.default_price ? prices.get(product.default_price) : undefined
      return {product, price: price?.active ? price : null}
    })
}
