/**
 * Selling (spec: Store checkout API, store orders, Checkout sessions): store checkouts, the merchant
 * API's checkout-session reads and expiry, and store orders. Rules live in domain/checkout.ts and
 * domain/orders.ts.
 */
import {created, storedList, type HandlersFor} from '../app.js'
import {createStoreCheckout, expireOpenSession, requireSession, retrieveSession, sessionForClientSecret, sessionGone, sessionView} from '../domain/checkout.js'
import {createCheckoutSession, listCheckoutSessions, updateCheckoutSession} from '../domain/checkout-sessions.js'
import {addEvidence, createOrderFixture, requireOrder, updateOrderStatus} from '../domain/orders.js'
import {createRefund, listRefundsOf, requireRefund} from '../domain/refunds.js'
import {notFound} from '../errors.js'

export const commerceHandlers = {
  'checkouts.create': async ({tx, scope, body}) => created(await createStoreCheckout(tx, scope, body)),

  async 'checkoutSessions.retrieve'({tx, scope, params, query}) {
    if (scope) return retrieveSession(tx, scope, params.id)
    // The checkout page: no key, the client secret instead; it sees the session without the secret
    // while the session is open, and session_expired once it completed or expired.
    const found = await sessionForClientSecret(tx, params.id, query.cs ?? '')
    if (found.state === 'unknown') throw notFound('checkout session', params.id)
    if (found.state === 'ended') throw sessionGone(params.id)
    return sessionView(found.session, false)
  },
  'checkoutSessions.create': async ({tx, scope, cred, body}) => created(await createCheckoutSession(tx, scope, body, cred.kind === 'publishable_key')),
  'checkoutSessions.list': ({tx, scope, query}) => listCheckoutSessions(tx, scope, query),
  'checkoutSessions.update': ({tx, scope, params, body}) => updateCheckoutSession(tx, scope, params.id, body),
  'checkoutSessions.updateViaPost': ({tx, scope, params, body}) => updateCheckoutSession(tx, scope, params.id, body),
  'checkoutSessions.expire': async ({tx, scope, params}) => expireOpenSession(tx, scope, await requireSession(tx, scope, params.id)),

  'refunds.create': async ({tx, scope, body}) => created(await createRefund(tx, scope, body)),
  'refunds.search': ({tx, scope, query}) => listRefundsOf(tx, scope, query),
  'refunds.retrieve': ({tx, scope, params}) => requireRefund(tx, scope, params.id),

  'orders.list': storedList('order'),
  'orders.retrieve': ({tx, scope, params}) => requireOrder(tx, scope, params.id),
  'orders.update': async ({tx, scope, params, body}) => updateOrderStatus(tx, scope, await requireOrder(tx, scope, params.id), body.status),
  'orders.evidence.create': async ({tx, scope, params, body}) => addEvidence(tx, scope, await requireOrder(tx, scope, params.id), body),
  'orders.create': async ({tx, scope, body}) => created(await createOrderFixture(tx, scope, body)),
} satisfies HandlersFor
