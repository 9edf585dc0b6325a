/**
 * The storefront (spec: a store's URL; store checkouts default to it): a store found by its slug, and
 * what it shows a buyer, its active, store-visible products with their default price, newest first.
 */
import type {Env, MerchantDoc, PriceDoc, ProductDoc} from '../storage/documents.js'
import type {Platform} from '../platform.js'

export interface StorefrontItem {
  product: ProductDoc
  /** The default price when it is active, else null (not for sale yet). */
  price: PriceDoc | null
}

export const storeBySlug = (gw: Platform, slug: string): MerchantDoc | undefined => gw.storage.merchantBySlug(slug)

export function storefrontItems(gw: Platform, merchant: MerchantDoc, env: Env): StorefrontItem[] {
  const scope = {merchant: merchant.id, env}
  // Two queries for the whole page, not one more per product for its price.
  const prices = new Map(gw.storage.all('price', scope).map((p) => [p.id, p]))
  return gw.storage
    .all('product', scope)
    .filter((p) => p.active && p.store_visible)
    .reverse()
    .map((product) => {
      const price = product.default_price ? prices.get(product.default_price) : undefined
      return {product, price: price?.active ? price : null}
    })
}
