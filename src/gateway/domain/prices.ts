/**
 * Prices (spec: Price). Rules:
 * - a price is at least 250 minor units (schema); it belongs to one product, created active unless sent
 *   `active: false`;
 * - no price is added to or reactivated on an archived product (409 `product_archived`);
 * - after creation only active, nickname, tax_behavior, lookup_key and metadata change (the update
 *   schema rejects the rest with `price_immutable`);
 * - the product's default price cannot be archived (400 `price_is_default`); `set_as_default` makes a
 *   new price the default, and an active product with an active price always has an active default;
 * - one active price per merchant, environment and lookup_key (409 `lookup_key_exists`, a unique index in
 *   storage): `transfer_lookup_key: true` on create moves the key from the price holding it in the same
 *   write, so a reader looking prices up by key never sees two, nor none.
 */
import type {z} from 'zod'

import type * as catalog from '@payapp/sdk/schemas/catalog'
import {conflict, invalid, notFound} from '../errors.js'
import {newId} from '../ids.js'
import type {Tx} from './context.js'
import type {PriceDoc, ProductDoc, Scope} from '../storage/documents.js'
import {mergeMetadata, stamp, uniquely} from './shared.js'

type PriceCreate = z.output<typeof catalog.priceCreate>
type PriceUpdate = z.output<typeof catalog.priceUpdate>

export type PriceInput = Omit<PriceCreate, 'set_as_default' | 'transfer_lookup_key' | 'metadata' | 'active' | 'recurring'> & {
  recurring?: PriceCreate['recurring']
  metadata: Record<string, string>
  active?: boolean
}

/** A price of this product, or 404 (a price of another product included). */
export async function requirePrice(tx: Tx, scope: Scope, product: ProductDoc, id: string): Promise<PriceDoc> {
  const price = await tx.get('price', scope, id)
  if (!price || price.product !== product.id) throw notFound('price', id)
  return price
}

/** A product's prices, newest first. */
export const pricesOf = async (tx: Tx, scope: Scope, productId: string) => (await tx.all('price', scope, productId)).reverse()

/** The active prices holding a lookup_key, other than `self`. */
async function holdersOf(tx: Tx, scope: Scope, key: string, self?: string): Promise<PriceDoc[]> {
  const holders: PriceDoc[] = []
  for (const id of await tx.ids('price', scope, [{field: 'lookup_key', eq: key}])) {
    const price = id === self ? undefined : await tx.get('price', scope, id)
    if (price?.active) holders.push(price)
  }
  return holders
}

async function checkLookupKey(tx: Tx, scope: Scope, key: string, self?: string): Promise<void> {
  const [holder] = await holdersOf(tx, scope, key, self)
  if (holder) throw conflict('lookup_key_exists', `The active price ${holder.id} already has the lookup_key '${key}'; send transfer_lookup_key: true to move it`, 'lookup_key')
}

/**
 * Runs a write of a price that holds `key`; the unique index refusing it means another request gave the key
 * to an active price after `checkLookupKey` read (concurrent units on PostgreSQL): the same 409 as the check's.
 */
async function holdingKey<T>(key: string | null | undefined, write: () => Promise<T>): Promise<T> {
  if (!key) return write()
  return uniquely(
    {prices_active_lookup_key: () => conflict('lookup_key_exists', `Another active price already has the lookup_key '${key}'; send transfer_lookup_key: true to move it`, 'lookup_key')},
    write,
  )
}

/** Stores a price without the default-price rules: for a product's inline price, which becomes its default. */
export async function insertPrice(tx: Tx, scope: Scope, product: ProductDoc, input: PriceInput): Promise<PriceDoc> {
  if (input.lookup_key && (input.active ?? true)) await checkLookupKey(tx, scope, input.lookup_key)
  const price: PriceDoc = {
    ...stamp(tx, scope, 'price', newId('price', 24)),
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
  }
  await holdingKey(price.lookup_key, () => tx.insert('price', scope, price, {parent: product.id, created: price.created}))
  await tx.emit(scope, 'price.created', price)
  return price
}

/** True when the product has no default price it can sell at. */
async function lacksActiveDefault(tx: Tx, scope: Scope, product: ProductDoc): Promise<boolean> {
  return product.default_price === null || (await tx.get('price', scope, product.default_price))?.active !== true
}

async function setDefaultPrice(tx: Tx, scope: Scope, product: ProductDoc, price: PriceDoc): Promise<void> {
  product.default_price = price.id
  product.updated = tx.now(scope)
  await tx.save(product)
  await tx.emit(scope, 'product.updated', product)
}

export async function createPrice(tx: Tx, scope: Scope, product: ProductDoc, body: PriceCreate): Promise<PriceDoc> {
  if (!product.active) throw productArchived(product)
  const {set_as_default, transfer_lookup_key, ...input} = body
  const active = input.active ?? true
  if (set_as_default && !active) throw invalid('parameters_exclusive', 'An archived price cannot be the default price', 'set_as_default')
  if (transfer_lookup_key && !input.lookup_key) throw invalid('parameter_missing', 'transfer_lookup_key needs the lookup_key to move', 'lookup_key')
  if (transfer_lookup_key && active) {
    for (const holder of await holdersOf(tx, scope, input.lookup_key!)) {
      holder.lookup_key = null
      await tx.save(holder)
      await tx.emit(scope, 'price.updated', holder)
    }
  }
  const price = insertPrice(tx, scope, product, {...input, metadata: input.metadata ?? {}})
  // An active product with an active price always has an active default price.
  if (set_as_default || (active && await lacksActiveDefault(tx, scope, product))) await setDefaultPrice(tx, scope, product, await price)
  return price
}

export async function updatePrice(tx: Tx, scope: Scope, product: ProductDoc, price: PriceDoc, body: PriceUpdate): Promise<PriceDoc> {
  if (body.active === false && price.active && product.default_price === price.id) {
    throw invalid('price_is_default', `${price.id} is the default price of ${product.id}; set another default_price_id first`, 'active')
  }
  if (body.active === true && !price.active && !product.active) throw productArchived(product)
  const key = body.lookup_key !== undefined ? body.lookup_key : price.lookup_key
  if (key && (body.active ?? price.active) && (key !== price.lookup_key || !price.active)) await checkLookupKey(tx, scope, key, price.id)
  if (body.active !== undefined) price.active = body.active
  if (body.nickname !== undefined) price.nickname = body.nickname
  if (body.tax_behavior !== undefined) price.tax_behavior = body.tax_behavior
  if (body.lookup_key !== undefined) price.lookup_key = body.lookup_key
  if (body.metadata !== undefined) price.metadata = mergeMetadata(price.metadata, body.metadata)
  await holdingKey(price.lookup_key, () => tx.save(price))
  await tx.emit(scope, 'price.updated', price)
  if (price.active && await lacksActiveDefault(tx, scope, product)) await setDefaultPrice(tx, scope, product, price)
  return price
}

/** Archives every active price of a product (spec: archiving a product archives all its prices). */
export async function archivePrices(tx: Tx, scope: Scope, product: ProductDoc): Promise<void> {
  for (const price of await tx.all('price', scope, product.id)) {
    if (!price.active) continue
    price.active = false
    await tx.save(price)
    await tx.emit(scope, 'price.updated', price)
  }
}

const productArchived = (product: ProductDoc) =>
  conflict('product_archived', `${product.id} is archived; reactivate it (PATCH active: true) before adding or reactivating prices`)
