/**
 * CORS for the routes a browser may call (spec: Authentication, publishable keys): the route a
 * publishable key opens (`publishable` in the endpoint table) and the routes a client secret opens
 * (`clientSecret`, the embed's `?cs=` retrieval). Declared once, here, for the routes the table marks:
 *
 * - A preflight (`OPTIONS`) carries no key, so it is answered for any origin that some unrevoked
 *   publishable key of this gateway lists (docs/spec-gaps.md); the actual request then meets the key's
 *   own list in `admit()`.
 * - An answered origin is echoed in `Access-Control-Allow-Origin` (never `*`, no credentials mode), with
 *   `Vary: Origin` and the headers a page may read (request id, Retry-After, rate limits).
 * - Everything else gets no CORS header: other origins, other routes (their `OPTIONS` stays a 404), and
 *   requests with no Origin. Refusals keep their status: a secret key with an Origin is still a 403.
 *
 * The per-request cost on other routes is nothing (the hook is attached to the browser routes only);
 * on a browser route it is one Set lookup (`Credentials.listsOrigin`, kept until keys change).
 */
import type {FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler} from 'fastify'

import {DOOR_PREFIX, endpoints, type EndpointDef} from '@payapp/sdk/endpoints'
import {ApiError, methodNotAllowed} from './errors.js'
import type {Platform} from './platform.js'

/** What a browser page may send: the key, a JSON body, and the key that makes a retried create safe. */
export const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key']
/** What a page may read of an answer beyond the safelisted headers. */
export const CORS_EXPOSED_HEADERS = ['X-Request-Id', 'Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Idempotent-Replayed']
/** Seconds a browser may reuse a preflight's answer (Chromium caps it at 7200). */
const PREFLIGHT_MAX_AGE = 600

/** A route a browser may call: a publishable key's, or one a client secret opens. */
export const isBrowserRoute = (def: EndpointDef) => def.publishable === true || def.clientSecret !== undefined

/** Each URL (fastify's `:param` form) of the browser routes, with the methods a browser may use on it. */
export function browserRoutes(): Map<string, string[]> {
  const routes = new Map<string, string[]>()
  for (const def of Object.values(endpoints) as EndpointDef[]) {
    if (!isBrowserRoute(def)) continue
    for (const door of def.doors) {
      const url = DOOR_PREFIX[door] + def.path.replace(/\{(\w+)\}/g, ':$1')
      routes.set(url, [...(routes.get(url) ?? []), def.method])
    }
  }
  return routes
}

/** Declares CORS on the gateway: call before the API routes are added (an `onRoute` hook marks them). */
export function applyCors(app: FastifyInstance, platform: Platform): void {
  const routes = browserRoutes()
  const exposed = CORS_EXPOSED_HEADERS.join(', ')
  const allowedHeaders = CORS_ALLOWED_HEADERS.join(', ')

  const corsHeaders: onRequestHookHandler = (request, reply, done) => {
    reply.header('vary', 'Origin')
    const origin = request.headers.origin
    if (origin === undefined) return done()
    platform.credentials.listsOrigin(origin).then((listed) => {
      if (listed) reply.header('access-control-allow-origin', origin).header('access-control-expose-headers', exposed)
      done()
    }, done)
  }

  app.addHook('onRoute', (route) => {
    const methods = routes.get(route.url ?? '')
    const method = Array.isArray(route.method) ? route.method[0] : route.method
    if (!methods?.includes(method) && !(method === 'HEAD' && methods?.includes('GET'))) return
    const own = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest]
    route.onRequest = [...own, corsHeaders]
  })

  for (const [url, methods] of routes) {
    const allowMethods = methods.join(', ')
    app.options(url, async (request: FastifyRequest, reply: FastifyReply) => {
      reply.header('vary', 'Origin')
      const origin = request.headers.origin
      const method = request.headers['access-control-request-method']
      // Not a preflight (no browser sends OPTIONS without both): say what the URL takes.
      if (origin === undefined || method === undefined) return reply.code(204).header('allow', `${allowMethods}, OPTIONS`).send()
      if (!(await platform.credentials.listsOrigin(origin))) {
        throw new ApiError(403, 'permission_error', 'origin_not_allowed', `No publishable key lists the origin ${origin}`)
      }
      if (!methods.includes(method)) throw methodNotAllowed(method, request.url.split('?')[0], [...methods, 'OPTIONS'])
      // A public page calling a gateway on this machine or network (Private Network Access): the gateway
      // exists to be called so, from an origin a key lists.
      if (request.headers['access-control-request-private-network'] === 'true') reply.header('access-control-allow-private-network', 'true')
      return reply
        .code(204)
        .headers({
          'access-control-allow-origin': origin,
          'access-control-allow-methods': allowMethods,
          'access-control-allow-headers': allowedHeaders,
          'access-control-max-age': String(PREFLIGHT_MAX_AGE),
        })
        .send()
    })
  }
}
