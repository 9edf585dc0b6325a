/**
 * Every event type the platform sends, with the resource its `data.object` carries, written once.
 * The gateway can only emit a type listed here (Platform.emit takes an `EventType`); the OpenAPI
 * document's `webhooks` section and `TypedEvent` derive from it.
 */
import * as z from 'zod'

import {lazyTable, type Schema} from './endpoints.js'
import * as billing from './schemas/billing.js'
import * as catalog from './schemas/catalog.js'
import * as commerce from './schemas/commerce.js'
import type {WebhookEvent} from './webhooks-web.js'

export interface EventDef {
  /** The resource snapshot in `data.object`. */
  object: z.ZodType
  summary: string
}

/** Each entry's `object` is named through a function and built on first read (lazyTable, as the endpoint tables). */
function def<O extends z.ZodType>(object: Schema<O>, summary: string) {
  return {object, summary}
}

/** A failed attempt's payment row, with the session it was made in. */
const failedPaymentIntent = () => z.looseObject({...commerce.sandboxPayment.shape, checkout_session: z.string()})

export const eventTypes = lazyTable({
  'checkout.session.completed': def(() => commerce.checkoutSession, 'A checkout session was paid: the signal to fulfil a one-time order'),
  'checkout.session.expired': def(() => commerce.checkoutSession, 'A checkout session expired (expire operation or end of its lifetime)'),
  'checkout.session.updated': def(() => commerce.checkoutSession, 'An open checkout session was updated (its revision incremented)'),
  'payment_intent.payment_failed': def(failedPaymentIntent, 'A declined payment attempt; carries failure_code and failure_message'),
  'payment.succeeded': def(() => commerce.payment, 'A payment succeeded'),
  'payment.failed': def(() => commerce.payment, 'A payment attempt failed'),
  'payment.processing': def(() => commerce.payment, 'A payment started and awaits confirmation (settled by the next attempt)'),
  'payment.refunded': def(() => commerce.payment, 'A payment was refunded, fully or in part'),
  'payment.disputed': def(() => commerce.payment, 'A payment was disputed'),
  'charge.refunded': def(() => commerce.payment, 'A charge was refunded, fully or in part'),
  'charge.dispute.created': def(() => commerce.dispute, 'A chargeback was opened'),
  'refund.created': def(() => commerce.refundRecord, 'A refund was created'),
  'store.order.created': def(() => commerce.order, 'A store order was placed'),
  'store.order.updated': def(() => commerce.order, "A store order's status changed"),
  'product.created': def(() => catalog.product, 'A product was created'),
  'product.updated': def(() => catalog.product, 'A product was updated'),
  'price.created': def(() => catalog.price, 'A price was created'),
  'price.updated': def(() => catalog.price, 'A price was updated'),
  'payout.created': def(() => commerce.payout, 'A payout was created'),
  'payout.paid': def(() => commerce.payout, 'A payout arrived in the bank account'),
  'payout.failed': def(() => commerce.payout, 'A payout failed'),
  'invoice.created': def(() => commerce.invoice, 'An invoice was issued'),
  'invoice.paid': def(() => commerce.invoice, 'An invoice or renewal was paid'),
  'invoice.payment_succeeded': def(() => commerce.invoice, 'An invoice payment succeeded'),
  'invoice.payment_failed': def(() => commerce.invoice, 'An invoice charge failed: a declined first payment, or a dunning stage (dunning_stage notice, warning, final)'),
  'customer.created': def(() => billing.customer, 'A customer was created (with a subscription)'),
  'customer.subscription.trial_will_end': def(() => commerce.subscription, "A trial ends in 3 days (at confirmation for a shorter trial)"),
  'fraud_warning.created': def(() => billing.fraudWarning, 'A fraud warning was first stored (it may already be refunded, disputed or not actionable)'),
  'fraud_warning.updated': def(() => billing.fraudWarning, "A fraud warning's status or actionable flag changed"),
  'subscription.created': def(() => commerce.subscription, 'A subscription was created, before its first payment'),
  'subscription.updated': def(() => commerce.subscription, 'A subscription was confirmed or changed'),
  'subscription.deleted': def(() => commerce.subscription, 'A subscription ended'),
  'subscription_link.created': def(() => commerce.subscriptionLink, 'A subscription link was created'),
  'subscription_link.updated': def(() => commerce.subscriptionLink, 'A subscription link was updated'),
  'subscription_link.archived': def(() => commerce.subscriptionLink, 'A subscription link was archived'),
}) satisfies Record<string, EventDef>

export type EventType = keyof typeof eventTypes

/** An event whose `data.object` is typed by its `type`. */
export type TypedEvent<T extends EventType = EventType> = {
  [K in T]: Omit<WebhookEvent, 'type' | 'data'> & {type: K; data: {object: z.output<(typeof eventTypes)[K]['object']>}}
}[T]
