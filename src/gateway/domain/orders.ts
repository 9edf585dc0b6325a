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
import type {Tx} from './context.js'
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

export const requireOrder = async (tx: Tx, scope: Scope, id: string) => requireDoc(tx, 'order', scope, id, 'order')

export type NewOrder = Pick<
  OrderDoc,
  'status' | 'checkout_session' | 'payment' | 'product_id' | 'variant_id' | 'sku' | 'name' | 'quantity' | 'amount' | 'currency' | 'customer' | 'fixture'
>

/** Stores a new store order; the caller emits `store.order.created` where it belongs in its sequence. */
export async function newOrder(tx: Tx, scope: Scope, input: NewOrder): Promise<OrderDoc> {
  const base = stamp(tx, scope, 'order', newId('ord', 24))
  const order: OrderDoc = {...base, source: 'store', ...input, evidence: [], shipped_at: null, completed_at: null, canceled_at: null, updated: base.created}
  return await tx.insert('order', scope, order, {created: order.created})
}

/** Saves a changed order and tells the merchant (`store.order.updated`). */
export async function saveOrder(tx: Tx, scope: Scope, order: OrderDoc): Promise<OrderDoc> {
  order.updated = tx.now(scope)
  await tx.save(order)
  await tx.emit(scope, 'store.order.updated', order)
  return order
}

export async function updateOrderStatus(tx: Tx, scope: Scope, order: OrderDoc, status: UpdateStatus): Promise<OrderDoc> {
  if (!ORDER_TRANSITIONS[order.status as Status]?.includes(status)) {
    throw conflict('invalid_status_transition', `An order in status ${order.status} cannot move to ${status}`, 'status')
  }
  if (NEEDS_EVIDENCE.includes(status) && order.evidence.length === 0) {
    throw conflict('evidence_required', `Attach delivery evidence (POST /orders/${order.id}/evidence) before marking the order ${status}`, 'status')
  }
  order.status = status
  const at = STAMP[status]
  if (at) order[at] = tx.now(scope)
  return saveOrder(tx, scope, order)
}

export async function addEvidence(tx: Tx, scope: Scope, order: OrderDoc, body: z.output<typeof orderEvidenceCreate>): Promise<OrderDoc> {
  if (body.file !== undefined && !(await getFileByPath(tx, scope, body.file))) {
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
    created: tx.now(scope),
  }
  order.evidence.push(evidence)
  return saveOrder(tx, scope, order)
}

/** Sandbox only (the endpoint table restricts it): an order as if sold, without payment or stock. */
export async function createOrderFixture(tx: Tx, scope: Scope, body: z.output<typeof orderCreate>): Promise<OrderDoc> {
  const product = await tx.get('product', scope, body.product_id)
  if (!product) throw notFound('product', body.product_id, 'resource_missing', 'product_id')
  const variant = body.variant_id === undefined ? await defaultVariantOf(tx, scope, product) : await tx.get('variant', scope, body.variant_id)
  if (!variant || variant.product !== product.id) {
    throw notFound('variant of this product', body.variant_id, 'resource_missing', 'variant_id')
  }
  const priceId = effectivePrice(variant, product)
  const price = priceId ? await tx.get('price', scope, priceId) : undefined
  if (!price || price.type === 'recurring') throw conflict('price_unavailable', 'This product has no one-time price to value the order at', 'product_id')

  const order = await newOrder(tx, scope, {
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
  await tx.emit(scope, 'store.order.created', order)
  return order
}
