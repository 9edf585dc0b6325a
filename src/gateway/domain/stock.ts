/**
 * Stock of tracked variants (spec: store checkout reserves stock, releases it at expiry or cancel): an
 * open checkout holds units (`stock_reserved`), a payment consumes them, a full refund restores them.
 * No oversell, whatever runs at the same time: a reservation is one conditional update of the stored
 * counts (`reserved + qty <= stock`), never a read and a later write.
 */
import {ApiError} from '../errors.js'
import type {Tx} from './context.js'
import type {Scope, VariantDoc} from '../storage/documents.js'
import {stockAvailable} from './variants.js'

/** Holds `quantity` units of a tracked variant, or 409 `out_of_stock` when fewer are unreserved; `variant` is updated to the stored counts. */
export async function reserveStock(tx: Tx, scope: Scope, variant: VariantDoc, quantity: number): Promise<void> {
  const held = await tx.increment('variant', scope, variant.id, {field: 'stock_reserved', by: quantity, atMost: 'stock_qty', set: {updated: tx.now(scope)}})
  if (!held) {
    const available = stockAvailable((await tx.get('variant', scope, variant.id)) ?? variant) ?? 0
    throw new ApiError(409, 'resource_conflict', 'out_of_stock', `Only ${Math.max(0, available)} unit(s) of this variant are available`, 'quantity')
  }
  Object.assign(variant, held)
}

/** Moves a variant's counts: `reserved` the held units, `qty` the units in stock; neither goes below 0. */
export async function moveStock(tx: Tx, scope: Scope, variantId: string, change: {qty?: number; reserved?: number}): Promise<void> {
  // Deleted since the sale: nothing is left to count against (increment finds no document).
  if (change.reserved) await tx.increment('variant', scope, variantId, {field: 'stock_reserved', by: change.reserved, floor: 0, set: {updated: tx.now(scope)}})
  if (change.qty) {
    const v = await tx.get('variant', scope, variantId)
    if (v && v.stock_qty !== null) await tx.increment('variant', scope, variantId, {field: 'stock_qty', by: change.qty, floor: 0, set: {updated: tx.now(scope)}})
  }
}
