/**
 * Admin helpers that play the buyer and the card network: pay or decline a checkout session, refund a
 * payment, open a dispute. Admin routes carry no credential, so each finds its object by id in
 * whichever merchant and environment holds it.
 */
import type {FastifyRequest} from 'fastify'

import {adminCheckoutComplete, adminDisputeCreate, adminRefundCreate} from '../sdk/schemas/admin.js'
import {adminBody, type AdminRouteDef} from './admin.js'
import {completeSession, disputePayment, findAnywhere, refundPayment, sweepExpired, type SessionDoc} from './checkout.js'
import {notFound} from './errors.js'
import type {PaymentDoc} from './models.js'
import type {Platform} from './platform.js'

const param = (request: FastifyRequest, name: string) => (request.params as Record<string, string>)[name]

function requirePayment(gw: Platform, id: string) {
  const found = findAnywhere<PaymentDoc>(gw, 'payment', id)
  if (!found) throw notFound('payment', id)
  return found
}

export const adminCheckoutRoutes: AdminRouteDef[] = [
  [
    'POST',
    '/checkouts/:session_id/complete',
    (request, gw) => {
      const body = adminBody(adminCheckoutComplete, request)
      const id = param(request, 'session_id')
      const found = findAnywhere<SessionDoc>(gw, 'checkout_session', id)
      if (!found) throw notFound('checkout session', id)
      // A session past its time expires now, so paying it answers session_expired.
      sweepExpired(gw, found.scope)
      const session = gw.storage.get<SessionDoc>('checkout_session', found.scope, id)!
      const buyer = {name: body.customer_name ?? 'Test Customer', email: body.customer_email ?? 'customer@example.com'}
      return completeSession(gw, found.scope, session, body.outcome, buyer)
    },
  ],
  [
    'POST',
    '/payments/:id/refund',
    (request, gw) => {
      const {scope, doc} = requirePayment(gw, param(request, 'id'))
      return refundPayment(gw, scope, doc, adminBody(adminRefundCreate, request))
    },
    201,
  ],
  [
    'POST',
    '/payments/:id/dispute',
    (request, gw) => {
      const {scope, doc} = requirePayment(gw, param(request, 'id'))
      return disputePayment(gw, scope, doc, adminBody(adminDisputeCreate, request))
    },
    201,
  ],
]
