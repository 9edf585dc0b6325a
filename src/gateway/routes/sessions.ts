/**
 * Merchant API checkout-session routes outside the App/store endpoint table:
 * `GET /v1/checkout/sessions/{id}` (secret key, or `?cs=<client_secret>` for the checkout page) and
 * `POST /v1/checkout/sessions/{id}/expire` (secret key). Both take scope `checkout:write`.
 */
import type {FastifyInstance, FastifyReply, FastifyRequest} from 'fastify'

import {clientSecretMatches, expireSession, findAnywhere, requireOpen, sessionView, sweepExpired, type SessionDoc} from '../checkout.js'
import type {Scope} from '../db.js'
import {admit, sendIdempotent} from '../app.js'
import {ApiError, notFound} from '../errors.js'
import type {Credential, Platform} from '../platform.js'

const SCOPE = 'checkout:write'

const sessionExpired = (id: string) => new ApiError(410, 'invalid_state', 'session_expired', `Checkout session ${id} has expired`)

/** The gate the endpoint table gives the store API: secret key, no browser Origin, scope, rate limit. */
const secretKey = (platform: Platform, request: FastifyRequest, bucket: 'read' | 'write'): Credential => admit(platform, request, 'store', {scope: SCOPE, bucket})

const scopeOf = (cred: Credential): Scope => ({merchant: cred.merchant, env: cred.env})

function send(reply: FastifyReply, status: number, body: string) {
  return reply.code(status).type('application/json').send(body)
}

/** One write in one transaction, replayed for a repeated Idempotency-Key exactly as the endpoint table's routes are. */
function runWrite(platform: Platform, request: FastifyRequest, reply: FastifyReply, cred: Credential, write: () => unknown) {
  return sendIdempotent(platform, request, reply, cred, JSON.stringify(request.body ?? {}), (onCommit) =>
    platform.storage.transaction(() => {
      const body = JSON.stringify(write())
      onCommit?.(200, body)
      return {status: 200, body}
    }),
  )
}

export function registerSessionRoutes(app: FastifyInstance, platform: Platform): void {

  app.get('/v1/checkout/sessions/:id', async (request, reply) => {
    const {id} = request.params as {id: string}
    const cs = (request.query as {cs?: unknown}).cs

    // The checkout page: no key, the client secret instead; it sees the session without the secret
    // while the session is open, and session_expired once it completed or expired.
    if (request.headers.authorization === undefined && typeof cs === 'string') {
      const found = findAnywhere<SessionDoc>(platform, 'checkout_session', id)
      if (!found || !clientSecretMatches(found.doc, cs)) throw notFound('checkout session', id)
      sweepExpired(platform, found.scope)
      const session = platform.storage.get<SessionDoc>('checkout_session', found.scope, id)!
      if (session.status !== 'open') throw sessionExpired(id)
      return send(reply, 200, JSON.stringify(sessionView(session, false)))
    }

    const scope = scopeOf(secretKey(platform, request, 'read'))
    sweepExpired(platform, scope)
    const session = platform.storage.get<SessionDoc>('checkout_session', scope, id)
    if (!session) throw notFound('checkout session', id)
    if (session.status === 'expired') throw sessionExpired(id)
    return send(reply, 200, JSON.stringify(sessionView(session, true)))
  })

  app.post('/v1/checkout/sessions/:id/expire', async (request, reply) => {
    const {id} = request.params as {id: string}
    const cred = secretKey(platform, request, 'write')
    const scope = scopeOf(cred)
    return runWrite(platform, request, reply, cred, () => {
      sweepExpired(platform, scope)
      const session = platform.storage.get<SessionDoc>('checkout_session', scope, id)
      if (!session) throw notFound('checkout session', id)
      requireOpen(session)
      expireSession(platform, scope, session)
      return {id: session.id, status: 'expired'}
    })
  })
}
