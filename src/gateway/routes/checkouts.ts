/**
 * Store checkout, `POST /v1/store/checkouts`: a checkout session for one store product or variant,
 * holding its stock for the session's 30 minutes.
 */
import type {z} from 'zod'

import {MAX_AMOUNT, MIN_AMOUNT} from '../../sdk/schemas/common.js'
import type {StoreCheckout, storeCheckoutCreate} from '../../sdk/schemas/commerce.js'
import {storeView} from '../admin.js'
import {created, type Handlers} from '../app.js'
import {defaultVariantOf, effectivePrice, getPrice, getProduct, getVariant} from '../catalog.js'
import {openSession, STORE_SESSION_SECONDS, sweepExpired} from '../checkout.js'
import type {Scope} from '../db.js'
import {ApiError, conflict, invalid, notFound} from '../errors.js'
import type {Platform} from '../platform.js'

export const checkoutHandlers: Partial<Handlers> = {
  'checkouts.create'({gw, scope, body}) {
    return created(createStoreCheckout(gw, scope, body))
  },
}

/** Every rule of a store checkout, in the spec's order; the seed sells through it too. */
export function createStoreCheckout(gw: Platform, scope: Scope, body: z.output<typeof storeCheckoutCreate>): StoreCheckout {
  // Sessions whose time is up give their stock back before this one asks for it.
  sweepExpired(gw, scope)

  const merchant = gw.merchant(scope.merchant)!
  if (merchant.store.status !== 'live' || merchant.store.approval !== 'approved') {
    throw conflict('store_unavailable', `The store is ${merchant.store.status} (approval ${merchant.store.approval}); it must be live and approved to sell`)
  }

  const product = getProduct(gw, scope, body.product_id)
  if (!product || !product.active || !product.store_visible) {
    throw notFound('product', body.product_id, 'product_unavailable', 'product_id')
  }

  const variant = body.variant_id === undefined ? defaultVariantOf(gw, scope, product) : getVariant(gw, scope, body.variant_id)
  if (!variant || variant.product !== product.id) {
    throw notFound('variant of this product', body.variant_id, 'variant_unavailable', 'variant_id')
  }

  // The variant's price wins; otherwise the product's default price.
  const priceId = effectivePrice(variant, product)
  const price = priceId ? getPrice(gw, scope, priceId) : undefined
  if (!price || !price.active || price.product !== product.id) {
    throw conflict('price_unavailable', 'This variant has no active price to sell it at', 'variant_id')
  }
  if (price.type === 'recurring') {
    throw invalid('unsupported_price', 'Store checkouts sell one-time prices; this price is recurring', 'variant_id')
  }

  const amount = price.unit_amount * body.quantity
  if (amount < MIN_AMOUNT) throw new ApiError(400, 'amount_too_small', 'amount_too_small', `The total must be at least ${MIN_AMOUNT} minor units`, 'quantity')
  if (amount > MAX_AMOUNT) throw new ApiError(400, 'amount_too_large', 'amount_too_large', `The total must be at most ${MAX_AMOUNT} minor units`, 'quantity')

  const storefront = storeView(merchant, scope.env, gw.baseUrl).url
  const session = openSession(gw, scope, {
    source: 'store',
    lifetimeSeconds: STORE_SESSION_SECONDS,
    line: {
      name: !variant.is_default && variant.title ? `${product.name} (${variant.title})` : product.name,
      quantity: body.quantity,
      amount: price.unit_amount,
      currency: price.currency,
      price_id: price.id,
      product_id: product.id,
      variant_id: variant.id,
      sku: variant.sku,
    },
    amount,
    currency: price.currency,
    successUrl: body.success_url ?? storefront,
    cancelUrl: body.cancel_url ?? storefront,
    // Stock is held only for variants that track it.
    reserve: variant.track_inventory ? variant : undefined,
  })

  const response: StoreCheckout = {
    ok: true,
    session_id: session.id,
    checkout_url: session.checkout_url,
    amount: session.amount,
    currency: session.currency,
    expires_at: new Date(session.expires_at * 1000).toISOString(),
  }
  return response
}
