/**
 * What the app does with each event. Every handler re-reads the object from the platform before acting:
 * an event is a notice that something changed, possibly redelivered or out of order, and the state now
 * is what counts. Handlers may be slow or throw: the inbox (src/inbox.ts) retries them, and the platform
 * was acknowledged long before.
 */
import type {AppClient, CheckoutSession, Order, WebhookEvent} from 'payapp/sdk'

/** What your app does; src/server.ts logs, your code ships goods, e-mails, flags for review. */
export interface Actions {
  /** A store order was paid and is still paid: fulfil it. Called once per order. */
  fulfil(order: Order): unknown
  /** A store order changed (shipped, canceled, refunded…): mirror its status. */
  orderChanged(order: Order): unknown
  /** A fraud warning arrived: review the payment, refund it before a dispute does. */
  review(warning: Record<string, unknown>): unknown
}

export type Handler = (event: WebhookEvent, ctx: {app: AppClient; actions: Actions}) => Promise<void>

/** Handlers by event type; `prefix.*` handles every type under the prefix. */
export const handlers: Record<string, Handler> = {
  async 'checkout.session.completed'(event, {app, actions}) {
    const session = event.data.object as CheckoutSession
    // API sessions have no store order; store sessions name theirs.
    if (!session.order) return
    const order = await app.orders.retrieve(session.order)
    // Refunded or canceled since the event was sent: nothing to fulfil.
    if (order.status !== 'paid') return
    await actions.fulfil(order)
  },

  async 'store.*'(event, {app, actions}) {
    const object = event.data.object as {object?: string; id?: string}
    if (object.object !== 'order' || !object.id) return
    await actions.orderChanged(await app.orders.retrieve(object.id))
  },

  async 'fraud_warning.*'(event, {actions}) {
    // Fraud warnings are read with the merchant API's secret key (`/v1/fraud_warnings/{id}`); the event
    // carries the warning itself, which is enough to put the payment on a review list.
    await actions.review(event.data.object as Record<string, unknown>)
  },
}

/** The handler for an event type: exact, then `prefix.*`; none means the event is recorded and ignored. */
export function handlerFor(type: string): Handler | undefined {
  if (handlers[type]) return handlers[type]
  const parts = type.split('.')
  for (let i = parts.length - 1; i > 0; i--) {
    const wildcard = `${parts.slice(0, i).join('.')}.*`
    if (handlers[wildcard]) return handlers[wildcard]
  }
  return undefined
}

/** The event types to subscribe the webhook endpoint to (`payapp listen --events`, the dashboard). */
export const SUBSCRIBED_EVENTS = Object.keys(handlers)
