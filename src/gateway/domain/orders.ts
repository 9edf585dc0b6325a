/**
 * Store orders (spec: store orders; transitions in docs/spec-gaps.md): created paid by a store sale, or
 * as a sandbox fixture. Rules:
 * - fulfilment moves forward only (steps may be skipped); an unfulfilled order can be canceled;
 * - `shipped` and `completed` claim delivery, so they need evidence attached first;
 * - evidence is a tracking number, an uploaded file of this merchant, or a note;
 * - every change is `store.order.updated`; a full refund marks the order `refunded`.
 */
import type {z} from 'zod'

import type {ORDER_STATUSES, ORDER_UPDATE_STATUSES, OrderEvidence, orderCreate, orderEvidenceCreate} from '@payapp/sdk/schemas/commerce'
import {conflict, invalid, notFound} from '../errors.js'
import {newId} from '../ids.js'
import type {Platform} from '../platform.js'
import type {OrderDoc, Scope} from '../storage/documents.js'
import {getFileByPath} from './files.js'
import {requireDoc, stamp} from './shared.js'
import {defaultVariantOf, effectivePrice} from './variants.js'

type Status = (typeof ORDER_STATUSES)[number]
type UpdateStatus = (typeof ORDER_UPDATE_STATUSES)[number]

/** Fulfilment moves forward only (steps may be skipped); an unfulfilled order can be canceled. */
export const ORDER_TRANSITIONS: Record<Status, readonly UpdateStatus[]> = {
  pending: ['canceled'],
  paid: ['processing', 'shipped', 'completed', 'canceled'],
  processing: ['shipped', 'completed', 'canceled'],
  shipped: ['completed'],
  completed: [],
  canceled: [],
  refunded: [],
}

/** Statuses that claim delivery, so they need evidence attached first. */
const NEEDS_EVIDENCE: readonly Status[] = ['shipped', 'completed']

const STAMP: Partial<Record<UpdateStatus, 'shipped_at' | 'completed_at' | 'canceled_at'>> = {
  shipped: 'shipped_at',
  completed: 'completed_at',
  canceled: 'canceled_at',
}

export const requireOrder = (gw: Platform, scope: Scope, id: string) => requireDoc(gw, 'order', scope, id, 'order')

export type NewOrder = Pick<
  OrderDoc,
  'status' | 'checkout_session' | 'payment' | 'product_id' | 'variant_id' | 'sku' | 'name' | 'quantity' | 'amount' | 'currency' | 'customer' | 'fixture'
>

/** Stores a new store order; the caller emits `store.order.created` where it belongs in its sequence. */
export function newOrder(gw: Platform, scope: Scope, input: NewOrder): OrderDoc {
  const base = stamp(gw, scope, 'order', newId('ord', 24))
  const order: OrderDoc = {...base, source: 'store', ...input, evidence: [], shipped_at: null, completed_at: null, canceled_at: null, updated: base.created}
  return gw.storage.insert('order', scope, order, {created: order.created})
}

/** Saves a changed order and tells the merchant (`store.order.updated`). */
export function saveOrder(gw: Platform, scope: Scope, order: OrderDoc): OrderDoc {
  order.updated = gw.now()
  gw.storage.save(order)
  gw.emit(scope, 'store.order.updated', order)
  return order
}

export function updateOrderStatus(gw: Platform, scope: Scope, order: OrderDoc, status: UpdateStatus): OrderDoc {
  if (!ORDER_TRANSITIONS[order.status as Status]?.includes(status)) {
    throw conflict('invalid_status_transition', `An order in status ${order.status} cannot move to ${status}`, 'status')
  }
  if (NEEDS_EVIDENCE.includes(status) && order.evidence.length === 0) {
    throw conflict('evidence_required', `Attach delivery evidence (POST /orders/${order.id}/evidence) before marking the order ${status}`, 'status')
  }
  order.status = status
  const at = STAMP[status]
  if (at) order[at] = gw.now()
  return saveOrder(gw, scope, order)
}

export function addEvidence(gw: Platform, scope: Scope, order: OrderDoc, body: z.output<typeof orderEvidenceCreate>): OrderDoc {
  if (body.file !== undefined && !getFileByPath(gw, scope, body.file)) {
    throw invalid('file_not_found', `No uploaded file at '${body.file}'; upload it with POST /files first`, 'file')
  }
  const evidence: OrderEvidence = {
    id: newId('oev', 24),
    object: 'order_evidence',
    type: body.tracking_number !== undefined ? 'tracking' : body.file !== undefined ? 'file' : 'note',
    tracking_number: body.tracking_number ?? null,
    carrier: body.carrier ?? null,
    file: body.file ?? null,
    note: body.note ?? null,
    created: gw.now(),
  }
  order.evidence.push(evidence)
  return saveOrder(gw, scope, order)
}

/** Sandbox only (the endpoint table restricts it): an order as if sold, without payment or stock. */
export function createOrderFixture(gw: Platform, scope: Scope, body: z.output<typeof orderCreate>): OrderDoc {
  const product = gw.storage.get('product', scope, body.product_id)
  if (!product) throw notFound('product', body.product_id, 'resource_missing', 'product_id')
  const variant = body.variant_id === undefined ? defaultVariantOf(gw, scope, product) : gw.storage.get('variant', scope, body.variant_id)
  if (!variant || variant.product !== product.id) {
    throw notFound('variant of this product', body.variant_id, 'resource_missing', 'variant_id')
  }
  const priceId = effectivePrice(variant, product)
  const price = priceId ? gw.storage.get('price', scope, priceId) : undefined
  if (!price || price.type === 'recurring') throw conflict('price_unavailable', 'This product has no one-time price to value the order at', 'product_id')

  const order = newOrder(gw, scope, {
    status: body.status,
    checkout_session: null,
    payment: null,
    product_id: product.id,
    variant_id: variant.id,
    sku: variant.sku,
    name: product.name,
    quantity: body.quantity,
    amount: price.unit_amount * body.quantity,
    currency: price.currency,
    customer: {name: body.customer_name ?? 'Test Customer', email: body.customer_email ?? 'customer@example.com'},
    fixture: true,
  })
  gw.emit(scope, 'store.order.created', order)
  return order
}
