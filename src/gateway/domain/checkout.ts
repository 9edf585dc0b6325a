/**
 * Checkout sessions (spec: Checkout sessions, Store checkout API). Rules:
 * - a store checkout sells one active, store-visible product's variant of a live, approved store, at the
 *   variant's price else the product's default; recurring prices are refused; the total is within the
 *   platform's minimum and maximum;
 * - it holds a stock-tracked variant's units while open (409 `out_of_stock` leaves no session behind);
 * - success and cancel URLs are https, or http to a loopback host in test mode; a store session's default
 *   to the storefront's success and cancel pages;
 * - store sessions live 30 minutes, others 24 hours; a scheduler job expires each at `expires_at` (and
 *   `sweepExpired` runs first wherever sessions or stock are read), releases the units and emits
 *   `checkout.session.expired`;
 * - the client secret opens exactly its own session while it is open, compared in constant time;
 * - paid: the session completes, the units are consumed, a payment and (store sessions) an order exist;
 *   declined: a failed payment is recorded and the session stays open for another attempt.
 * Every function runs inside the caller's transaction and appends its events there.
 */
import {timingSafeEqual} from 'node:crypto'

import type {z} from 'zod'

import {MAX_AMOUNT, MIN_AMOUNT} from '@payapp/sdk/schemas/common'
import type {CheckoutSession, LivePayment, SandboxPayment, StoreCheckout, storeCheckoutCreate} from '@payapp/sdk/schemas/commerce'
import {ApiError, conflict, invalid, invalidState, notFound} from '../errors.js'
import {newId, randomText} from '../ids.js'
import type {Tx} from './context.js'
import type {OrderDoc, PriceDoc, ProductDoc, Scope, SessionDoc, VariantDoc} from '../storage/documents.js'
import type {Job} from '../storage/storage.js'
import {storefrontUrls, storeView} from './merchants.js'
import {newOrder} from './orders.js'
import {paymentForSession, paymentView, settlePayment, type Buyer} from './payments.js'
import {subscriptionFromCheckout} from './subscriptions.js'
import {stamp} from './shared.js'
import {moveStock, reserveStock} from './stock.js'
import {defaultVariantOf, effectivePrice} from './variants.js'

/** Store-created sessions live 30 minutes, others 24 hours (spec: Limits). */
export const STORE_SESSION_SECONDS = 30 * 60
export const API_SESSION_SECONDS = 24 * 3600

/** The session as served: never its reservation; its client secret only to its merchant's key. */
export function sessionView(s: SessionDoc, withSecret: boolean): CheckoutSession {
  const {reservation: _held, raw_amount: _raw, client_secret, ...rest} = s
  return withSecret ? {...rest, client_secret} : rest
}

export type SessionLine = CheckoutSession['line_items'][number]

export interface NewSession {
  source: 'store' | 'api'
  lifetimeSeconds: number
  lines: SessionLine[]
  amount: number
  currency: string
  successUrl: string | null
  cancelUrl: string | null
  metadata?: Record<string, string>
  /** A stock-tracked variant to hold units of, in this same transaction. */
  reserve?: {variant: VariantDoc; quantity: number}
  mode?: 'payment' | 'subscription'
  description?: string | null
  reference?: string | null
  customer?: SessionDoc['customer_details']
  rawAmount?: boolean
}

/** A line item selling a variant at its price: named after the product and the variant's title; ids and sku carried (rule 8). */
export function variantLine(product: ProductDoc, variant: VariantDoc, price: PriceDoc, quantity: number, name?: string): SessionLine {
  return {
    name: name ?? (!variant.is_default && variant.title ? `${product.name} (${variant.title})` : product.name),
    quantity,
    amount: price.unit_amount,
    currency: price.currency,
    price_id: price.id,
    product_id: product.id,
    variant_id: variant.id,
    sku: variant.sku,
  }
}

/** Store sessions follow the store's fixed flow (4); merchant API sessions the updatable one (5). */
export const FLOW_VERSION = {store: 4, api: 5} as const

/** A session's total within the platform's minimum and maximum, else 400 naming `param`. */
export function checkTotal(amount: number, param: string): void {
  if (amount < MIN_AMOUNT) throw new ApiError(400, 'amount_too_small', 'amount_too_small', `The total must be at least ${MIN_AMOUNT} minor units`, param)
  if (amount > MAX_AMOUNT) throw new ApiError(400, 'amount_too_large', 'amount_too_large', `The total must be at most ${MAX_AMOUNT} minor units`, param)
}

/** Opens a session; reserving first, so an `out_of_stock` leaves no session behind. */
export async function openSession(tx: Tx, scope: Scope, input: NewSession): Promise<SessionDoc> {
  if (input.reserve) await reserveStock(tx, scope, input.reserve.variant, input.reserve.quantity)
  const base = stamp(tx, scope, 'checkout.session', newId('cs', 24))
  const secret = `cs_secret_${randomText(32)}`
  const session: SessionDoc = {
    ...base,
    mode: input.mode ?? 'payment',
    status: 'open',
    source: input.source,
    amount: input.amount,
    currency: input.currency,
    client_secret: secret,
    checkout_url: `${tx.baseUrl}/checkout/${base.id}?cs=${secret}`,
    embed_url: `${tx.baseUrl}/checkout/${base.id}/embed?cs=${secret}`,
    expires_at: base.created + input.lifetimeSeconds,
    line_items: input.lines,
    payment: null,
    order: null,
    success_url: input.successUrl,
    cancel_url: input.cancelUrl,
    metadata: input.metadata ?? {},
    description: input.description ?? null,
    reference: input.reference ?? null,
    flow_version: FLOW_VERSION[input.source],
    revision: 0,
    customer_details: input.customer ?? null,
    reservation: input.reserve ? {variant_id: input.reserve.variant.id, quantity: input.reserve.quantity} : null,
    ...(input.rawAmount ? {raw_amount: true} : {}),
  }
  await tx.insert('checkout_session', scope, session, {created: base.created})
  await tx.schedule(scope, EXPIRE_SESSION_JOB, session.id, session.expires_at)
  return session
}

/** The scheduler job that expires an open session at its `expires_at`. */
export const EXPIRE_SESSION_JOB = 'checkout_session.expire'

/** Job handler: the session expires on the clock, its event dated at `expires_at`. */
export async function expireSessionJob(tx: Tx, job: Job): Promise<void> {
  const scope = {merchant: job.merchant, env: job.env}
  const session = await tx.get('checkout_session', scope, job.ref)
  if (session?.status === 'open' && session.expires_at <= tx.now(scope)) await expireSession(tx, scope, session)
}

/** Ends an open session unpaid: the client secret dies, held stock returns, the merchant hears of it. */
export async function expireSession(tx: Tx, scope: Scope, session: SessionDoc): Promise<SessionDoc> {
  session.status = 'expired'
  if (session.reservation) await moveStock(tx, scope, session.reservation.variant_id, {reserved: -session.reservation.quantity})
  await tx.save(session)
  await tx.emit(scope, 'checkout.session.expired', sessionView(session, false))
  return session
}

/**
 * Expires every open session of a scope whose time is up. The scheduler expires each session at its
 * `expires_at`; routes that touch sessions or stock still call this first, so a read in the second
 * before the background tick sees the session expired too.
 */
export async function sweepExpired(tx: Tx, scope: Scope): Promise<number> {
  const due = await tx.where('checkout_session', scope, [
    {field: 'status', is: 'open'},
    {field: 'expires_at', lte: tx.now(scope)},
  ])
  if (due.length === 0) return 0
  // A read that meets due sessions expires them in a unit of its own first.
  if (!tx.writable) return tx.writing((w) => sweepExpired(w, scope))
  for (const session of due) await expireSession(tx, scope, session)
  return due.length
}

/** 422 unless the session can still be paid or expired. */
export function requireOpen(session: SessionDoc): void {
  if (session.status === 'expired') throw invalidState('session_expired', `Checkout session ${session.id} has expired`)
  if (session.status !== 'open') throw invalidState('session_already_completed', `Checkout session ${session.id} is already completed`)
}

/** A session that has ended, to whoever holds only its client secret (or asks after expiry): 410. */
export const sessionGone = (id: string) => new ApiError(410, 'invalid_state', 'session_expired', `Checkout session ${id} has expired`)

/** Whether `given` is the session's client secret, compared in constant time. */
export function clientSecretMatches(session: SessionDoc, given: string): boolean {
  const a = Buffer.from(session.client_secret)
  const b = Buffer.from(given)
  return a.length === b.length && timingSafeEqual(a, b)
}

/** One session of the scope after the sweep, or 404. */
export async function requireSession(tx: Tx, scope: Scope, id: string): Promise<SessionDoc> {
  await sweepExpired(tx, scope)
  const session = await tx.get('checkout_session', scope, id)
  if (!session) throw notFound('checkout session', id)
  return session
}

/** A session by id in whichever scope holds it, after that scope's sweep (admin helpers carry no credential). */
export async function findSession(tx: Tx, id: string): Promise<{scope: Scope; session: SessionDoc} | undefined> {
  const found = await tx.find('checkout_session', id)
  if (!found) return undefined
  // A session past its time expires now, so paying it answers session_expired.
  await sweepExpired(tx, found.scope)
  return {scope: found.scope, session: (await tx.get('checkout_session', found.scope, id))!}
}

/**
 * What a client secret opens (the checkout page, `GET /v1/checkout/sessions/{id}?cs=…`): its own session
 * while it is open; `ended` once it completed or expired (the secret dies with the open state); `unknown`
 * for a wrong pair. Each caller answers these in its own medium (JSON, the buyer's HTML page).
 */
export async function sessionForClientSecret(tx: Tx, id: string, secret: string): Promise<{state: 'unknown'} | {state: 'ended'} | {state: 'open'; scope: Scope; session: SessionDoc}> {
  const candidate = await tx.find('checkout_session', id)
  if (!candidate || !secret || !clientSecretMatches(candidate.doc, secret)) return {state: 'unknown'}
  const found = (await findSession(tx, id))!
  return found.session.status === 'open' ? {state: 'open', ...found} : {state: 'ended'}
}

/** `GET /v1/checkout/sessions/{id}` with the merchant's key: the session with its secret; 410 once expired. */
export async function retrieveSession(tx: Tx, scope: Scope, id: string): Promise<CheckoutSession> {
  const session = await requireSession(tx, scope, id)
  if (session.status === 'expired') throw sessionGone(id)
  return sessionView(session, true)
}

/** `POST /v1/checkout/sessions/{id}/expire`: the merchant ends an open session now. */
export async function expireOpenSession(tx: Tx, scope: Scope, session: SessionDoc) {
  requireOpen(session)
  await expireSession(tx, scope, session)
  return {id: session.id, status: 'expired' as const}
}

/** Every rule of a store checkout, in the spec's order; the seed sells through it too. */
export async function createStoreCheckout(tx: Tx, scope: Scope, body: z.output<typeof storeCheckoutCreate>): Promise<StoreCheckout> {
  // Sessions whose time is up give their stock back before this one asks for it.
  await sweepExpired(tx, scope)

  const merchant = (await tx.merchant(scope.merchant))!
  if (merchant.store.status !== 'live' || merchant.store.approval !== 'approved') {
    throw conflict('store_unavailable', `The store is ${merchant.store.status} (approval ${merchant.store.approval}); it must be live and approved to sell`)
  }

  const product = await tx.get('product', scope, body.product_id)
  if (!product || !product.active || !product.store_visible) {
    throw notFound('product', body.product_id, 'product_unavailable', 'product_id')
  }

  const variant = body.variant_id === undefined ? await defaultVariantOf(tx, scope, product) : await tx.get('variant', scope, body.variant_id)
  if (!variant || variant.product !== product.id) {
    throw notFound('variant of this product', body.variant_id, 'variant_unavailable', 'variant_id')
  }

  // The variant's price wins; otherwise the product's default price.
  const priceId = effectivePrice(variant, product)
  const price = priceId ? await tx.get('price', scope, priceId) : undefined
  if (!price || !price.active || price.product !== product.id) {
    throw conflict('price_unavailable', 'This variant has no active price to sell it at', 'variant_id')
  }
  if (price.type === 'recurring') {
    throw invalid('unsupported_price', 'Store checkouts sell one-time prices; this price is recurring', 'variant_id')
  }

  const amount = price.unit_amount * body.quantity
  checkTotal(amount, 'quantity')

  for (const param of ['success_url', 'cancel_url'] as const) {
    // http to a loopback host is a local app under test (the schema allows it); a live buyer goes to https only.
    if (body[param]?.startsWith('http:') && scope.env === 'live') {
      throw invalid('url_not_https', `${param} must be https in live mode (http is accepted only for loopback hosts in test mode)`, param)
    }
  }
  const storefront = storefrontUrls(storeView(merchant, scope.env, tx.baseUrl).url, scope.env)
  const session = await openSession(tx, scope, {
    source: 'store',
    lifetimeSeconds: STORE_SESSION_SECONDS,
    lines: [variantLine(product, variant, price, body.quantity)],
    amount,
    currency: price.currency,
    successUrl: body.success_url ?? storefront.success,
    cancelUrl: body.cancel_url ?? storefront.cancel,
    // Stock is held only for variants that track it.
    reserve: variant.track_inventory ? {variant, quantity: body.quantity} : undefined,
  })

  return {
    ok: true,
    session_id: session.id,
    checkout_url: session.checkout_url,
    embed_url: session.embed_url,
    amount: session.amount,
    currency: session.currency,
    expires_at: new Date(session.expires_at * 1000).toISOString(),
  }
}

export interface Completion {
  session: CheckoutSession
  payment: SandboxPayment | LivePayment
  order: OrderDoc | null
}

/**
 * The buyer's payment attempt on an open session. Paid: the session completes, the reservation is
 * consumed, a payment and (store sessions) an order exist. Declined: a failed payment is recorded and
 * the session stays open, its stock still held, for another attempt.
 */
export async function completeSession(tx: Tx, scope: Scope, read: SessionDoc, outcome: 'paid' | 'declined' | 'processing', buyer: Buyer): Promise<Completion> {
  // Read again under the session's lock: attempts on one session take turns, so a second payment finds the first's
  // outcome (session_already_completed, as on SQLite) rather than racing it to the one-payment index.
  const session = (await tx.lock('checkout_session', scope, read.id, 'exclusive')) ?? read
  requireOpen(session)
  // A payment already being confirmed is settled by this attempt instead of a second payment.
  const pending = session.payment ? await tx.get('payment', scope, session.payment) : undefined
  if (outcome === 'processing') {
    if (pending) throw conflict('confirmation_in_progress', `A payment of checkout session ${session.id} is already being confirmed`)
    const started = await paymentForSession(tx, scope, session, buyer, 'processing')
    session.payment = started.id
    await tx.save(session)
    await tx.emit(scope, 'payment.processing', paymentView(started))
    return {session: sessionView(session, true), payment: paymentView(started), order: null}
  }
  const payment = pending ? await settlePayment(tx, scope, pending, outcome) : await paymentForSession(tx, scope, session, buyer, outcome)
  if (outcome === 'declined') {
    if (pending) {
      session.payment = null
      await tx.save(session)
    }
    const failed = paymentView(payment)
    await tx.emit(scope, 'payment_intent.payment_failed', {...failed, checkout_session: session.id})
    await tx.emit(scope, 'payment.failed', failed)
    return {session: sessionView(session, true), payment: failed, order: null}
  }

  if (session.reservation) await moveStock(tx, scope, session.reservation.variant_id, {qty: -session.reservation.quantity, reserved: -session.reservation.quantity})
  const line = session.line_items[0]
  const order =
    session.source === 'store' && line?.product_id
      ? await newOrder(tx, scope, {
          status: 'paid',
          checkout_session: session.id,
          payment: payment.id,
          product_id: line.product_id,
          variant_id: line.variant_id,
          sku: line.sku,
          name: line.name,
          quantity: line.quantity,
          amount: session.amount,
          currency: session.currency,
          customer: {name: buyer.name, email: buyer.email},
          fixture: false,
        })
      : null
  if (order) {
    payment.order = order.id
    await tx.save(payment)
  }
  // Subscription mode: the paid session starts the subscription, its first invoice paid by this payment.
  if (session.mode === 'subscription' && line?.price_id) {
    const metadata = session.metadata
    session.subscription = (await subscriptionFromCheckout(tx, scope, {price_id: line.price_id, quantity: line.quantity, buyer, payment, metadata})).id
  }
  session.status = 'complete'
  session.payment = payment.id
  session.order = order?.id ?? null
  session.customer_details = {name: buyer.name, email: buyer.email}
  await tx.save(session)

  await tx.emit(scope, 'checkout.session.completed', sessionView(session, false))
  await tx.emit(scope, 'payment.succeeded', paymentView(payment))
  if (order) await tx.emit(scope, 'store.order.created', order)
  return {session: sessionView(session, true), payment: paymentView(payment), order}
}
