/**
 * Checkout sessions of the merchant API (spec: Checkout session request, object, variant line items,
 * states; `/v1/checkout/sessions`). Rules, in the spec's order:
 * - a raw-amount payment (secret keys only) needs `amount` (≥ 250), `currency`, `customer_name` (2–120)
 *   and `customer_email`; publishable keys and subscription mode must send `line_items`;
 * - a free line item has `name` and `amount`; the session's `currency` is its currency (the spec's line
 *   item has none), a sent item `currency` must equal it (`currency_mismatch`), and with no currency
 *   anywhere the request is 400 naming `currency`; an update keeps the session's currency; `price_id` and
 *   `product_id` are catalogue links, checked to exist; the charged amount is `amount × quantity`;
 * - variant line items: (1) `variant` is a variant of the merchant; (2) `variant` and `price_id` in one
 *   session are 400; (3) the variant's product and its price must be active, the price one-time, and
 *   subscription mode takes no variants; (4) amount and currency come from the price, a differing sent
 *   value is `amount_mismatch` / `currency_mismatch`; (5) a variant appears once; (6) a stock-tracked
 *   variant reserves its units at creation and must be the only line, 409 `out_of_stock` leaves no
 *   session; (7) the reservation is consumed on payment, released on expiry, restored by a full
 *   refund (checkout.ts, refunds.ts); (8) lines carry `variant_id`, `product_id`, `sku`;
 * - subscription mode: exactly one line with a recurring `price_id`, no raw `amount`; the subscription
 *   itself is the billing module's;
 * - a not-ready merchant is 409 `merchant_not_ready`, a used-up plan 402 (merchants.ts);
 * - update (flow_version ≥ 5, open, no payment running): `amount` (raw sessions), `line_items`,
 *   `description`, `reference`; a sent stale `revision` is 409 `revision_conflict`; each update
 *   increments `revision`. After payment the status is `complete`; there is no cancelled status (an
 *   unpaid session ends `expired`), see docs/spec-gaps.md.
 */
import type {z} from 'zod'

import type {CheckoutSession, checkoutSessionCreate, checkoutSessionUpdate, SessionLineItemInput} from '@payapp/sdk/schemas/commerce'
import {ApiError, conflict, invalid, notFound} from '../errors.js'
import type {Tx} from './context.js'
import type {Scope, SessionDoc, VariantDoc} from '../storage/documents.js'
import {API_SESSION_SECONDS, checkTotal, openSession, requireOpen, requireSession, sessionView, sweepExpired, variantLine, type SessionLine} from './checkout.js'
import {requireCanCreate} from './merchants.js'
import {moveStock, reserveStock} from './stock.js'
import {effectivePrice} from './variants.js'

type CreateBody = z.output<typeof checkoutSessionCreate>
type UpdateBody = z.output<typeof checkoutSessionUpdate>

/** What the line items of a request come to: the lines as served, their total and the stock to hold. */
interface Lines {
  lines: SessionLine[]
  amount: number
  currency: string
  reserve?: {variant: VariantDoc; quantity: number}
}

const missing = (param: string, why: string) => invalid('parameter_missing', `Missing required parameter: ${param} (${why})`, param)

/** A variant line (rules 1, 3, 4, 8): its amount and currency come from the variant's effective price. */
async function variantItem(tx: Tx, scope: Scope, item: SessionLineItemInput, param: string): Promise<{line: SessionLine; variant: VariantDoc}> {
  const variant = await tx.get('variant', scope, item.variant!)
  if (!variant) throw notFound('variant', item.variant, 'variant_unavailable', `${param}.variant`)
  const product = await tx.get('product', scope, variant.product)
  if (!product || !product.active) throw notFound('product', variant.product, 'product_unavailable', `${param}.variant`)
  const priceId = effectivePrice(variant, product)
  const price = priceId ? await tx.get('price', scope, priceId) : undefined
  if (!price || !price.active) throw conflict('price_unavailable', `Variant ${variant.id} has no active price to sell it at`, `${param}.variant`)
  if (price.type === 'recurring') throw invalid('unsupported_price', 'Variant line items sell one-time prices; this price is recurring', `${param}.variant`)
  if (item.amount !== undefined && item.amount !== price.unit_amount) {
    throw invalid('amount_mismatch', `amount ${item.amount} differs from the variant's price (${price.unit_amount}); omit it`, `${param}.amount`)
  }
  if (item.currency !== undefined && item.currency !== price.currency) {
    throw invalid('currency_mismatch', `currency ${item.currency} differs from the variant's price (${price.currency}); omit it`, `${param}.currency`)
  }
  const line = variantLine(product, variant, price, item.quantity, item.name)
  return {variant, line: item.image_url ? {...line, image_url: item.image_url} : line}
}

/** A free line: name and amount sent, currency sent or the session's (filled in by paymentLines); price_id and product_id are links that must exist. */
async function freeLine(tx: Tx, scope: Scope, item: SessionLineItemInput, param: string): Promise<SessionLine> {
  if (item.name === undefined) throw missing(`${param}.name`, 'a line item without variant needs name')
  if (item.amount === undefined) throw missing(`${param}.amount`, 'a line item without variant needs amount')
  const price = item.price_id === undefined ? undefined : await tx.get('price', scope, item.price_id)
  if (item.price_id !== undefined && !price) throw notFound('price', item.price_id, 'price_not_found', `${param}.price_id`)
  if (item.product_id !== undefined && !await tx.get('product', scope, item.product_id)) throw notFound('product', item.product_id, 'resource_missing', `${param}.product_id`)
  return {
    name: item.name,
    quantity: item.quantity,
    amount: item.amount,
    currency: item.currency ?? '',
    price_id: item.price_id ?? null,
    product_id: item.product_id ?? price?.product ?? null,
    variant_id: null,
    sku: null,
    ...(item.image_url ? {image_url: item.image_url} : {}),
  }
}

/**
 * Every line-item rule of a payment-mode session (variant rules 1–6 and 8). `sessionCurrency`: the
 * session's `currency` (sent at creation, kept on update); without it the first line that has one decides.
 */
async function paymentLines(tx: Tx, scope: Scope, items: SessionLineItemInput[], sessionCurrency: string | undefined): Promise<Lines> {
  const hasVariant = items.some((i) => i.variant !== undefined)
  if (hasVariant && items.some((i) => i.price_id !== undefined)) {
    throw invalid('parameters_exclusive', 'variant and price_id cannot be combined in one session: a variant brings its own price', 'line_items')
  }
  const seen = new Set<string>()
  let reserve: Lines['reserve']
  const lines: SessionLine[] = []
  for (const [i, item] of items.entries()) {
    const param = `line_items[${i}]`
    if (item.variant === undefined) {
      lines.push(await freeLine(tx, scope, item, param))
      continue
    }
    if (seen.has(item.variant)) throw invalid('duplicate_variant', `Variant ${item.variant} appears more than once; use quantity`, `${param}.variant`)
    seen.add(item.variant)
    const {line, variant} = await variantItem(tx, scope, item, param)
    if (variant.track_inventory) {
      if (items.length > 1) throw invalid('variant_not_alone', 'A variant with inventory tracking must be the only line item of its session', `${param}.variant`)
      reserve = {variant, quantity: item.quantity}
    }
    lines.push(line)
  }
  const currency = sessionCurrency ?? lines.find((l) => l.currency !== '')?.currency
  if (currency === undefined) throw missing('currency', "line items without variant are in the session's currency")
  const other = lines.findIndex((l) => l.currency !== '' && l.currency !== currency)
  if (other >= 0) throw invalid('currency_mismatch', `Every line item is in the session's currency (${currency}); omit an item's currency or send the same`, `line_items[${other}].currency`)
  for (const l of lines) if (l.currency === '') l.currency = currency
  const amount = lines.reduce((sum, l) => sum + l.amount * l.quantity, 0)
  checkTotal(amount, 'line_items')
  return {lines, amount, currency, reserve}
}

/** Subscription mode: one line with a recurring price of the merchant; the total is its amount × quantity. */
async function subscriptionLines(tx: Tx, scope: Scope, items: SessionLineItemInput[]): Promise<Lines> {
  if (items.length !== 1) throw invalid('invalid_line_items', 'Subscription mode takes exactly one line item with a recurring price_id', 'line_items')
  const item = items[0]!
  if (item.variant !== undefined) throw invalid('variant_not_supported', 'Variants are not supported in subscription mode', 'line_items[0].variant')
  if (item.price_id === undefined) throw missing('line_items[0].price_id', 'subscription mode needs a recurring price')
  const price = await tx.get('price', scope, item.price_id)
  if (!price) throw notFound('price', item.price_id, 'price_not_found', 'line_items[0].price_id')
  if (!price.active || price.type !== 'recurring') throw invalid('price_not_recurring', `Price ${price.id} is not an active recurring price`, 'line_items[0].price_id')
  const product = await tx.get('product', scope, price.product)
  const amount = price.unit_amount * item.quantity
  checkTotal(amount, 'line_items')
  return {
    lines: [
      {
        name: item.name ?? product?.name ?? price.nickname ?? 'Subscription',
        quantity: item.quantity,
        amount: price.unit_amount,
        currency: price.currency,
        price_id: price.id,
        product_id: price.product,
        variant_id: null,
        sku: null,
      },
    ],
    amount,
    currency: price.currency,
  }
}

/** `POST /v1/checkout/sessions`. `publishable`: the caller holds a publishable key (line_items only). */
export async function createCheckoutSession(tx: Tx, scope: Scope, body: CreateBody, publishable: boolean): Promise<CheckoutSession> {
  if (publishable && !body.line_items) {
    throw new ApiError(403, 'permission_error', 'publishable_key_forbidden', 'A publishable key creates checkout sessions with line_items only; a raw amount needs the secret key')
  }
  await sweepExpired(tx, scope)
  await requireCanCreate(tx, scope, 'checkout_session')

  let lines: Lines
  if (body.mode === 'subscription') {
    if (body.amount !== undefined) throw invalid('parameter_unknown', 'amount is derived from the recurring price in subscription mode; omit it', 'amount')
    if (!body.line_items) throw missing('line_items', 'subscription mode needs a line item with a recurring price')
    lines = await subscriptionLines(tx, scope, body.line_items)
  } else if (body.line_items) {
    if (body.amount !== undefined) throw invalid('parameters_exclusive', 'Send a raw amount or line_items, not both: the amount is their total', 'amount')
    lines = await paymentLines(tx, scope, body.line_items, body.currency)
  } else {
    if (body.amount === undefined) throw missing('amount', 'a payment without line_items charges a raw amount')
    if (body.currency === undefined) throw missing('currency', 'a raw-amount payment needs it')
    if (body.customer_name === undefined) throw missing('customer_name', 'a raw-amount payment needs it')
    if (body.customer_email === undefined) throw missing('customer_email', 'a raw-amount payment needs it')
    const line: SessionLine = {name: body.description ?? 'Payment', quantity: 1, amount: body.amount, currency: body.currency, price_id: null, product_id: null, variant_id: null, sku: null}
    lines = {lines: [line], amount: body.amount, currency: body.currency}
  }
  if (body.currency !== undefined && body.currency !== lines.currency) {
    throw invalid('currency_mismatch', `currency ${body.currency} differs from the line items' currency (${lines.currency})`, 'currency')
  }

  const session = await openSession(tx, scope, {
    source: 'api',
    lifetimeSeconds: API_SESSION_SECONDS,
    mode: body.mode,
    lines: lines.lines,
    amount: lines.amount,
    currency: lines.currency,
    successUrl: body.success_url ?? null,
    cancelUrl: body.cancel_url ?? null,
    metadata: body.metadata,
    description: body.description,
    reference: body.reference,
    customer: body.customer_name || body.customer_email ? {name: body.customer_name ?? null, email: body.customer_email ?? null} : null,
    reserve: lines.reserve,
    rawAmount: !body.line_items,
  })
  return sessionView(session, true)
}

/** `GET /v1/checkout/sessions`: newest first, optionally one status. */
export async function listCheckoutSessions(tx: Tx, scope: Scope, query: {limit: number; offset: number; starting_after?: string; status?: string}) {
  await sweepExpired(tx, scope)
  const where = query.status ? [{field: 'status', in: [query.status]}] : []
  const {docs, hasMore} = await tx.page('checkout_session', scope, {...query, where})
  return {object: 'list' as const, has_more: hasMore, data: docs.map((d) => sessionView(d, true))}
}

/**
 * `PATCH /v1/checkout/sessions/{id}`: open sessions at flow version 5 or higher, while no payment runs;
 * the update is all or nothing and increments `revision`.
 */
export async function updateCheckoutSession(tx: Tx, scope: Scope, id: string, body: UpdateBody): Promise<CheckoutSession> {
  const session = await requireSession(tx, scope, id)
  requireOpen(session)
  if ((session.flow_version ?? 0) < 5) {
    throw conflict('immutable_session', `Checkout session ${id} has flow_version ${session.flow_version ?? 0}; only sessions at 5 or higher can be updated`)
  }
  if (session.payment !== null) {
    throw conflict('confirmation_in_progress', `A payment of checkout session ${id} is being confirmed; wait for it to finish`)
  }
  if (body.revision !== undefined && body.revision !== session.revision) {
    throw conflict('revision_conflict', `Checkout session ${id} is at revision ${session.revision}, not ${body.revision}; re-read it and retry`, 'revision')
  }
  if (body.amount !== undefined && body.line_items !== undefined) {
    throw invalid('parameters_exclusive', 'Send amount or line_items, not both: the amount is their total', 'amount')
  }
  if (body.amount !== undefined) {
    if (!session.raw_amount) throw invalid('amount_derived', 'This session charges its line items; update line_items instead of amount', 'amount')
    session.amount = body.amount
    session.line_items = [{...session.line_items[0]!, amount: body.amount}]
  }
  if (body.line_items !== undefined) await applyLines(tx, scope, session, body.line_items)
  if (body.description !== undefined) session.description = body.description
  if (body.reference !== undefined) session.reference = body.reference
  const revision = session.revision ?? 0
  session.revision = revision + 1
  // Compare-and-set on the revision read above: of two concurrent updates, one wins and one is a conflict.
  if (!(await tx.replaceIf(session, [{field: 'revision', eq: revision}]))) {
    throw conflict('revision_conflict', `Checkout session ${id} changed while this update ran; re-read it and retry`, 'revision')
  }
  await tx.emit(scope, 'checkout.session.updated', sessionView(session, false))
  return sessionView(session, true)
}

/** New line items for an open session: the old reservation goes back before the new one is taken. */
async function applyLines(tx: Tx, scope: Scope, session: SessionDoc, items: SessionLineItemInput[]): Promise<void> {
  if (session.mode === 'subscription') throw invalid('immutable_field', 'The line item of a subscription-mode session cannot change; create a new session', 'line_items')
  if (session.reservation) {
    await moveStock(tx, scope, session.reservation.variant_id, {reserved: -session.reservation.quantity})
    session.reservation = null
  }
  const lines = await paymentLines(tx, scope, items, session.currency)
  if (lines.reserve) {
    // Re-read: the release above may have changed the variant's counts.
    const variant = (await tx.get('variant', scope, lines.reserve.variant.id))!
    await reserveStock(tx, scope, variant, lines.reserve.quantity)
    session.reservation = {variant_id: variant.id, quantity: lines.reserve.quantity}
  }
  session.line_items = lines.lines
  session.amount = lines.amount
  session.currency = lines.currency
  session.raw_amount = false
}
