/**
 * Store orders (App API and store API): orders of store-source sessions, their fulfilment status and
 * delivery evidence, and sandbox order fixtures.
 */
import type {ORDER_STATUSES, ORDER_UPDATE_STATUSES, Order, OrderEvidence} from '../../sdk/schemas/commerce.js'
import {created, rawList, type Handlers} from '../app.js'
import {defaultVariantOf, effectivePrice, getPrice, getProduct, getVariant} from '../catalog.js'
import {newOrder, saveOrder} from '../checkout.js'
import type {Scope} from '../db.js'
import {conflict, invalid, notFound} from '../errors.js'
import {newId} from '../ids.js'
import type {Platform} from '../platform.js'
import {getFileByPath} from './files.js'

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

function requireOrder(gw: Platform, scope: Scope, id: string): Order {
  const order = gw.storage.get<Order>('order', scope, id)
  if (!order) throw notFound('order', id)
  return order
}

export const orderHandlers: Partial<Handlers> = {
  'orders.list'({gw, scope, query}) {
    const page = gw.storage.pageRaw('order', scope, query.limit, query.offset)
    return rawList(page.rows, page.hasMore)
  },

  'orders.retrieve'({gw, scope, params}) {
    return requireOrder(gw, scope, params.id)
  },

  'orders.update'({gw, scope, params, body}) {
    const order = requireOrder(gw, scope, params.id)
    if (!ORDER_TRANSITIONS[order.status as Status]?.includes(body.status)) {
      throw conflict('invalid_status_transition', `An order in status ${order.status} cannot move to ${body.status}`, 'status')
    }
    if (NEEDS_EVIDENCE.includes(body.status) && order.evidence.length === 0) {
      throw conflict('evidence_required', `Attach delivery evidence (POST /orders/${order.id}/evidence) before marking the order ${body.status}`, 'status')
    }
    order.status = body.status
    const stamp = STAMP[body.status]
    if (stamp) order[stamp] = gw.now()
    return saveOrder(gw, scope, order)
  },

  'orders.evidence.create'({gw, scope, params, body}) {
    const order = requireOrder(gw, scope, params.id)
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
  },

  // Sandbox only (the endpoint table restricts it): an order as if sold, without payment or stock.
  'orders.create'({gw, scope, body}) {
    const product = getProduct(gw, scope, body.product_id)
    if (!product) throw notFound('product', body.product_id, 'resource_missing', 'product_id')
    const variant = body.variant_id === undefined ? defaultVariantOf(gw, scope, product) : getVariant(gw, scope, body.variant_id)
    if (!variant || variant.product !== product.id) {
      throw notFound('variant of this product', body.variant_id, 'resource_missing', 'variant_id')
    }
    const priceId = effectivePrice(variant, product)
    const price = priceId ? getPrice(gw, scope, priceId) : undefined
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
    return created(order)
  },
}
