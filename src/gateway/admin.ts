/**
 * The admin API (`/_admin/*`, `Authorization: Bearer <admin_key>`) as one encapsulated fastify plugin:
 * one auth hook for every route, one route per entry of packages/sdk/src/admin-endpoints.ts, bodies and queries
 * validated by the entry's schemas, every handler in one unit of work. Handlers (routes/admin.ts) are
 * typed from the table, so a missing one is a compile error. A POST honours `Idempotency-Key` as the public
 * API's writes do (the SDK sends one and retries with it), its keys the admin key's own. A clock jump is not
 * one unit of work: its key is claimed in a unit of its own and keeps the jump's plan until it answers, so a
 * request sent again (its process died, or the client gave up waiting) walks the same jump, never a second one.
 */
import {createHash, timingSafeEqual} from 'node:crypto'

import type {FastifyPluginAsync, FastifyReply, FastifyRequest} from 'fastify'
import type {z} from 'zod'

import {adminEndpoints, ADMIN_PREFIX, type AdminEndpoint, type AdminEndpointDef, type AdminEndpointId} from '@payapp/sdk/admin-endpoints'
import {ApiError, fromZodError, invalid, unauthenticated} from './errors.js'
import type {Tx} from './domain/context.js'
import {Idempotency, type Platform} from './platform.js'
import {AdvanceAnswered, type AdvancePlans} from './scheduler.js'

type Out<S> = S extends z.ZodType ? z.output<S> : undefined

export interface AdminContext<Id extends AdminEndpointId> {
  /** The unit of work the handler runs in (a GET's: committed data). */
  tx: Tx
  /** The platform itself, for the routes that manage their own units (the clock) or per-process state (faults). */
  gw: Platform
  params: Record<string, string>
  body: Out<AdminEndpoint<Id> extends {body: infer B} ? B : undefined>
  query: Out<AdminEndpoint<Id> extends {query: infer Q} ? Q : undefined>
  /** A keyed clock jump's: where its plan is kept, and whether an earlier request with the key began it. */
  keyed?: {plans: AdvancePlans; joined: boolean}
}

export type AdminHandlers = {[Id in AdminEndpointId]: (ctx: AdminContext<Id>) => unknown}

/**
 * Sends a write's answer under the Idempotency-Key rules (app.ts `sendIdempotent`), the keys those of `owner`:
 * `run` runs in the write's unit and hands its answer to `onCommit`, which records it in the same unit.
 */
export type KeyedWrite = (
  request: FastifyRequest,
  reply: FastifyReply,
  owner: string,
  fingerprintBody: string,
  run: (tx: Tx, onCommit?: (status: number, body: string) => Promise<void>) => Promise<{status: number; body: string}>,
) => Promise<unknown>

/** Admin routes whose handler manages its own units of work (a clock jump runs each due job in its own). */
const OWN_TRANSACTIONS: ReadonlySet<AdminEndpointId> = new Set(['clock.advance'])

/** A repeated query parameter arrives as an array: the first one counts; an empty one is absent. */
const firstValues = (query: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(query)
      .map(([k, v]) => [k, Array.isArray(v) ? v[0] : v])
      .filter(([, v]) => v !== ''),
  )

/** Parses an admin body or query with its schema: the same 400s as the public API. */
function parse(schema: z.ZodType, input: unknown, where: 'body' | 'query'): unknown {
  const value = where === 'query' ? firstValues((input ?? {}) as Record<string, unknown>) : (input ?? {})
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid('invalid_body', 'The request body must be a JSON object')
  const parsed = schema.safeParse(value)
  if (!parsed.success) throw fromZodError(parsed.error, value, where)
  return parsed.data
}

export function adminPlugin(platform: Platform, adminKey: string, handlers: AdminHandlers, keyed: KeyedWrite): FastifyPluginAsync {
  const expected = Buffer.from(`Bearer ${adminKey}`)
  // Whose Idempotency-Keys these are: the admin key's (a hash; gateways started with another key replay none of them).
  const owner = `admin:${createHash('sha256').update(adminKey).digest('hex').slice(0, 24)}`
  return async (admin) => {
    admin.addHook('onRequest', async (request: FastifyRequest) => {
      const given = Buffer.from(request.headers.authorization ?? '')
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw unauthenticated('The admin API takes the gateway admin key (printed at start)', 'invalid_admin_key')
      }
    })

    for (const [id, def] of Object.entries(adminEndpoints) as [AdminEndpointId, AdminEndpointDef][]) {
      const handler = handlers[id] as (ctx: AdminContext<AdminEndpointId>) => unknown
      admin.route({
        method: def.method,
        url: def.path.replace(/\{(\w+)\}/g, ':$1'),
        handler: async (request, reply) => {
          if (def.body && request.isMultipart()) throw invalid('unsupported_content_type', 'Send the body as application/json')
          const ctx = {
            tx: undefined as never,
            gw: platform,
            params: request.params as Record<string, string>,
            body: def.body ? parse(def.body, request.body, 'body') : undefined,
            query: def.query ? parse(def.query, request.query, 'query') : undefined,
          } as AdminContext<AdminEndpointId>
          if (OWN_TRANSACTIONS.has(id) && request.headers['idempotency-key'] !== undefined) {
            return advanceOnce(platform, request, reply, owner, def.status, (keyed) => platform.read(async (tx) => handler({...ctx, tx, keyed})))
          }
          if (def.method === 'POST' && !OWN_TRANSACTIONS.has(id)) {
            return keyed(request, reply, owner, JSON.stringify(request.body ?? {}), async (tx, onCommit) => {
              const body = JSON.stringify(await handler({...ctx, tx}))
              await onCommit?.(def.status, body)
              return {status: def.status, body}
            })
          }
          // A clock jump is not one unit: it runs each due job in its own and awaits webhook attempts between them.
          const unit = OWN_TRANSACTIONS.has(id) ? (fn: (tx: Tx) => Promise<unknown>) => platform.read(fn) : def.method === 'GET' ? platform.read.bind(platform) : platform.write.bind(platform)
          const result = await unit(async (tx) => handler({...ctx, tx}))
          return reply.code(def.status).type('application/json').send(JSON.stringify(result))
        },
      })
    }

    admin.route({
      method: ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'],
      url: '/*',
      handler: async (request) => {
        throw new ApiError(404, 'not_found', 'route_not_found', `Unrecognized admin URL (${request.method} ${request.url.split('?')[0]})`)
      },
    })
  }
}

/**
 * A keyed clock jump (`POST /_admin/clock` with an Idempotency-Key): its answer replayed once it has one, 409
 * `idempotency_key_reused` for another body; until then, a request with the key joins the jump its first
 * request planned and walks it to its end (what the first walked is done, so it is not done twice), answering
 * the clock as it then reads; one that finds the jump ended waits for the answer of the request that ended it,
 * and answers in its place only when that one stays silent (died). The first answer stored is the one every
 * request with the key gets. A rejection (an unknown merchant, a moment passed) is replayed as it is.
 */
async function advanceOnce(
  platform: Platform,
  request: FastifyRequest,
  reply: FastifyReply,
  owner: string,
  status: number,
  run: (keyed: {plans: AdvancePlans; joined: boolean}) => Promise<unknown>,
) {
  const header = request.headers['idempotency-key']
  const key = (Array.isArray(header) ? header[0] : header)!
  Idempotency.checkKey(key)
  const fingerprint = Idempotency.fingerprint(request.method, request.url.split('?')[0]!, JSON.stringify(request.body ?? {}))
  for (;;) {
    const start = await platform.idempotency.beginAdvance(owner, key, fingerprint)
    if (start.kind === 'replay') return reply.header('idempotent-replayed', 'true').code(start.status).type('application/json').send(start.body)
    let body: string
    try {
      body = JSON.stringify(await run({plans: platform.idempotency.plans(owner, key), joined: start.kind === 'join'}))
    } catch (error) {
      // The first request with the key answered while this one waited for the clock: its answer, read again, is replayed.
      if (error instanceof AdvanceAnswered) continue
      // Refused before anything moved: the same refusal each time. Any other failure leaves the key claimed with its plan, for a request sent again to finish.
      if (start.kind === 'started' && error instanceof ApiError && error.status < 500 && error.status !== 429) {
        await platform.idempotency.answer(owner, key, error.status, JSON.stringify(error.envelope(request.id)))
      }
      throw error
    }
    // Another request with the key may have answered first (it found the jump ended while this one had not stored its answer): the one stored is given.
    const stored = await platform.idempotency.answer(owner, key, status, body)
    if (stored.replayed) reply.header('idempotent-replayed', 'true')
    return reply.code(stored.status).type('application/json').send(stored.body)
  }
}

export {ADMIN_PREFIX}
