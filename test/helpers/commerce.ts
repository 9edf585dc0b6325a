/**
 * Store fixtures for the checkout, order and payment tests, built through the public store API and the
 * admin API the way a user's suite would: a product with its price, stock on its default variant, a
 * checkout, a paid sale.
 */
import {expect} from 'chai'

import type {HttpGateway} from './gateway.js'

export type {Account} from './gateway.js'
import type {Account} from './gateway.js'

export interface Sellable {
  product: any
  variant: any
  price: string
}

/** A product with a one-time (or recurring) price; `stock` turns on inventory tracking of its default variant. */
export async function sellable(
  acct: Account,
  opts: {unit_amount?: number; currency?: string; stock?: number; recurring?: boolean; name?: string; sku?: string} = {},
): Promise<Sellable> {
  const price = {currency: opts.currency ?? 'eur', unit_amount: opts.unit_amount ?? 2500, ...(opts.recurring ? {recurring: {interval: 'month'}} : {})}
  const res = await acct.store('POST', '/products', {body: {name: opts.name ?? 'Linen Shirt', price}})
  expect(res.status, res.text).to.equal(201)
  const product = res.body
  let variant = product.variants.find((v: any) => v.is_default)
  if (opts.stock !== undefined || opts.sku !== undefined) {
    const patch = await acct.store('PATCH', `/variants/${variant.id}`, {
      body: {...(opts.stock !== undefined ? {track_inventory: true, stock_qty: opts.stock} : {}), ...(opts.sku ? {sku: opts.sku} : {})},
    })
    expect(patch.status, patch.text).to.equal(200)
    variant = patch.body
  }
  return {product, variant, price: product.default_price}
}

/** A T-shirt with Size and Color options and one variant of them (e.g. `L / Blue`), as a storefront sells it. */
export async function optionedVariant(
  acct: Account,
  opts: {name?: string; unit_amount?: number; size?: string; color?: string; sku?: string; stock?: number} = {},
): Promise<Sellable> {
  const {size = 'L', color = 'Blue'} = opts
  const made = await acct.store('POST', '/products', {body: {name: opts.name ?? 'T-Shirt', price: {currency: 'eur', unit_amount: opts.unit_amount ?? 1250}}})
  expect(made.status, made.text).to.equal(201)
  const product = made.body
  const group = async (name: string, value: string) => {
    const res = await acct.store('POST', `/products/${product.id}/options`, {body: {name, values: [value]}})
    expect(res.status, res.text).to.equal(201)
    return {group: res.body.id as string, value: res.body.values[0].id as string}
  }
  const options = [await group('Size', size), await group('Color', color)]
  const stock = opts.stock === undefined ? {} : {track_inventory: true, stock_qty: opts.stock}
  const res = await acct.store('POST', `/products/${product.id}/variants`, {body: {options, sku: opts.sku ?? `TSHIRT-${size}-${color}`.toUpperCase(), ...stock}})
  expect(res.status, res.text).to.equal(201)
  return {product, variant: res.body, price: product.default_price}
}

/** The variant as the store API reads it now. */
export async function readVariant(acct: Account, productId: string, variantId: string): Promise<any> {
  const res = await acct.store('GET', `/products/${productId}`)
  expect(res.status, res.text).to.equal(200)
  return res.body.variants.find((v: any) => v.id === variantId)
}

/** A store checkout that must succeed. */
export async function checkout(acct: Account, body: Record<string, unknown>): Promise<any> {
  const res = await acct.store('POST', '/checkouts', {body})
  expect(res.status, res.text).to.equal(201)
  return res.body
}

/** The admin helper paying (or declining) a session. */
export async function pay(gw: HttpGateway, sessionId: string, body: Record<string, unknown> = {}) {
  return gw.admin('POST', `/checkouts/${sessionId}/complete`, {outcome: 'paid', ...body})
}

/** A paid store sale: `{session, payment, order}` from the admin helper. */
export async function sale(gw: HttpGateway, acct: Account, item: Sellable, quantity = 1): Promise<any> {
  const co = await checkout(acct, {product_id: item.product.id, variant_id: item.variant.id, quantity})
  const res = await pay(gw, co.session_id, {customer_name: 'Ada Buyer', customer_email: 'ada@example.com'})
  expect(res.status, res.text).to.equal(200)
  return res.body
}

/** Event types of a merchant's environment, oldest first, optionally only those matching a prefix list. */
export async function eventTypes(gw: HttpGateway, merchant: string, env: 'test' | 'live', prefixes?: string[]): Promise<string[]> {
  const res = await gw.admin('GET', `/events?merchant=${merchant}&env=${env}&limit=1000`)
  expect(res.status, res.text).to.equal(200)
  const types = (res.body.data as Array<{type: string}>).map((e) => e.type).reverse()
  return prefixes ? types.filter((t) => prefixes.some((p) => t.startsWith(p))) : types
}

export async function events(gw: HttpGateway, merchant: string, env: 'test' | 'live', type: string): Promise<any[]> {
  const res = await gw.admin('GET', `/events?merchant=${merchant}&env=${env}&type=${type}&limit=1000`)
  expect(res.status, res.text).to.equal(200)
  return res.body.data
}

export const advanceClock = (gw: HttpGateway, seconds: number) => gw.admin('POST', '/clock', {advance_seconds: seconds})

/** The money-and-sale event families (catalogue events left out). */
export const SALE_EVENTS = ['checkout.', 'payment', 'store.', 'charge.', 'refund.']
