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
  'checkouts.create': ({gw, scope, body}) => created(createStoreCheckout(gw, scope, body)),

  'checkoutSessions.retrieve'({gw, scope, params, query}) {
    if (scope) return retrieveSession(gw, scope, params.id)
    // The checkout page: no key, the client secret instead; it sees the session without the secret
    // while the session is open, and session_expired once it completed or expired.
    const found = sessionForClientSecret(gw, params.id, query.cs ?? '')
    if (found.state === 'unknown') throw notFound('checkout session', params.id)
    if (found.state === 'ended') throw sessionGone(params.id)
    return sessionView(found.session, false)
  },
  'checkoutSessions.create': ({gw, scope, cred, body}) => created(createCheckoutSession(gw, scope, body, cred.kind === 'publishable_key')),
  'checkoutSessions.list': ({gw, scope, query}) => listCheckoutSessions(gw, scope, query),
  'checkoutSessions.update': ({gw, scope, params, body}) => updateCheckoutSession(gw, scope, params.id, body),
  'checkoutSessions.updateViaPost': ({gw, scope, params, body}) => updateCheckoutSession(gw, scope, params.id, body),
  'checkoutSessions.expire': ({gw, scope, params}) => expireOpenSession(gw, scope, requireSession(gw, scope, params.id)),

  'refunds.create': ({gw, scope, body}) => created(createRefund(gw, scope, body)),
  'refunds.search': ({gw, scope, query}) => listRefundsOf(gw, scope, query),
  'refunds.retrieve': ({gw, scope, params}) => requireRefund(gw, scope, params.id),

  'orders.list': storedList('order'),
  'orders.retrieve': ({gw, scope, params}) => requireOrder(gw, scope, params.id),
  'orders.update': ({gw, scope, params, body}) => updateOrderStatus(gw, scope, requireOrder(gw, scope, params.id), body.status),
  'orders.evidence.create': ({gw, scope, params, body}) => addEvidence(gw, scope, requireOrder(gw, scope, params.id), body),
  'orders.create': ({gw, scope, body}) => created(createOrderFixture(gw, scope, body)),
} satisfies HandlersFor
