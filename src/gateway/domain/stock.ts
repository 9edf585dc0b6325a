/**
 * Stock of tracked variants (spec: store checkout reserves stock, releases it at expiry or cancel): an
 * open checkout holds units (`stock_reserved`), a payment consumes them, a full refund restores them.
 * No oversell: a reservation checks and takes in the caller's one transaction.
 */
import {ApiError} from '../errors.js'
import type {Tx} from './context.js'
import type {Scope, VariantDoc} from '../storage/documents.js'
import {saveVariant, stockAvailable} from './variants.js'

/** Holds `quantity` units of a tracked variant, or 409 `out_of_stock` when fewer are unreserved. */
export async function reserveStock(tx: Tx, variant: VariantDoc, quantity: number): Promise<void> {
  const available = stockAvailable(variant) ?? 0
  if (available < quantity) {
    throw new ApiError(409, 'resource_conflict', 'out_of_stock', `Only ${Math.max(0, available)} unit(s) of this variant are available`, 'quantity')
  }
  variant.stock_reserved += quantity
  await saveVariant(tx, variant)
}

/** Moves a variant's counts: `reserved` the held units, `qty` the units in stock; neither goes below 0. */
export async function moveStock(tx: Tx, scope: Scope, variantId: string, change: {qty?: number; reserved?: number}): Promise<void> {
  const v = await tx.get('variant', scope, variantId)
  if (!v) return // deleted since the sale: nothing left to count against
  if (change.reserved) v.stock_reserved = Math.max(0, v.stock_reserved + change.reserved)
  if (change.qty && v.stock_qty !== null) v.stock_qty = Math.max(0, v.stock_qty + change.qty)
  await saveVariant(tx, v)
}
