/**
 * Merchant API checkout-session routes outside the App/store endpoint table:
 * `GET /v1/checkout/sessions/{id}` (secret key, or `?cs=<client_secret>` for the checkout page) and
 * `POST /v1/checkout/sessions/{id}/expire` (secret key). Both take scope `checkout:write`.
 */
import type {FastifyInstance, FastifyReply, FastifyRequest} from 'fastify'

import {clientSecretMatches, expireSession, findAnywhere, requireOpen, sessionView, sweepExpired, type SessionDoc} from '../checkout.js'
import type {Scope} from '../db.js'
import {ApiError, insufficientScope, notFound} from '../errors.js'
import {Idempotency, type Credential, type Platform} from '../platform.js'

const SCOPE = 'checkout:write'

const sessionExpired = (id: string) => new ApiError(410, 'invalid_state', 'session_expired', `Checkout session ${id} has expired`)

/** The same gate the endpoint table gives the store API: secret key, no browser Origin, scope, rate limit. */
function secretKey(platform: Platform, request: FastifyRequest, bucket: 'read' | 'write'): Credential {
  const cred = platform.credentials.authenticate(request.headers.authorization, 'store')
  if (request.headers.origin !== undefined) {
    throw new ApiError(403, 'permission_error', 'origin_forbidden', 'Secret keys are server-side only: requests with a browser Origin header are rejected')
  }
  if (!cred.scopes.has(SCOPE)) throw insufficientScope(SCOPE)
  platform.rateLimiter.hit(cred.id, bucket)
  return cred
}

const scopeOf = (cred: Credential): Scope => ({merchant: cred.merchant, env: cred.env})

function send(reply: FastifyReply, status: number, body: string) {
  return reply.code(status).type('application/json').send(body)
}

/** One write in one transaction, replayed for a repeated Idempotency-Key exactly as the endpoint table's routes are. */
function runWrite(platform: Platform, request: FastifyRequest, reply: FastifyReply, cred: Credential, write: () => unknown) {
  const header = request.headers['idempotency-key']
  const key = Array.isArray(header) ? header[0] : header
  if (key === undefined) return send(reply, 200, JSON.stringify(platform.storage.transaction(write)))

  Idempotency.checkKey(key)
  const fingerprint = Idempotency.fingerprint(request.method, request.url.split('?')[0], JSON.stringify(request.body ?? {}))
  const start = platform.idempotency.begin(cred.id, key, fingerprint)
  if (start.kind === 'replay') {
    reply.header('idempotent-replayed', 'true')
    return send(reply, start.status, start.body)
  }
  try {
    const body = platform.storage.transaction(() => {
      const out = JSON.stringify(write())
      platform.idempotency.finish(cred.id, key, 200, out)
      return out
    })
    return send(reply, 200, body)
  } catch (error) {
    if (error instanceof ApiError && error.status < 500 && error.status !== 429) {
      platform.idempotency.finish(cred.id, key, error.status, JSON.stringify(error.envelope(request.id)))
    } else platform.idempotency.release(cred.id, key)
    throw error
  }
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
