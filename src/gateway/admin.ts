/**
 * The admin API (`/_admin/*`, `Authorization: Bearer <admin_key>`) as one encapsulated fastify plugin:
 * one auth hook for every route, one route per entry of packages/sdk/src/admin-endpoints.ts, bodies and queries
 * validated by the entry's schemas, every handler in one unit of work. Handlers (routes/admin.ts) are
 * typed from the table, so a missing one is a compile error. A POST honours `Idempotency-Key` as the public
 * API's writes do (the SDK sends one and retries with it), its keys the admin key's own; a clock jump, which
 * is not one unit of work, runs again for each request.
 */
import {createHash, timingSafeEqual} from 'node:crypto'

import type {FastifyPluginAsync, FastifyReply, FastifyRequest} from 'fastify'
import type {z} from 'zod'

import {adminEndpoints, ADMIN_PREFIX, type AdminEndpoint, type AdminEndpointDef, type AdminEndpointId} from '@payapp/sdk/admin-endpoints'
import {ApiError, fromZodError, invalid, unauthenticated} from './errors.js'
import type {Tx} from './domain/context.js'
import type {Platform} from './platform.js'

type Out<S> = S extends z.ZodType ? z.output<S> : undefined

export interface AdminContext<Id extends AdminEndpointId> {
  /** The unit of work the handler runs in (a GET's: committed data). */
  tx: Tx
  /** The platform itself, for the routes that manage their own units (the clock) or per-process state (faults). */
  gw: Platform
  params: Record<string, string>
  body: Out<AdminEndpoint<Id> extends {body: infer B} ? B : undefined>
  query: Out<AdminEndpoint<Id> extends {query: infer Q} ? Q : undefined>
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

export {ADMIN_PREFIX}
