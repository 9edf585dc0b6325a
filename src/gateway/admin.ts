/**
 * The admin API (`/_admin/*`, `Authorization: Bearer <admin_key>`): a fixed contract that users' test
 * suites script against. It sets up merchants and credentials, moves the test clock, wipes a sandbox,
 * and (admin-helpers.ts) plays the buyer and the outside world.
 */
import {timingSafeEqual} from 'node:crypto'

import type {FastifyInstance, FastifyRequest} from 'fastify'
import type {z} from 'zod'

import * as admin from '../sdk/schemas/admin.js'
import {ApiError, fromZodError, invalid, notFound, unauthenticated} from './errors.js'
import {newId} from './ids.js'
import type {MerchantDoc, Platform} from './platform.js'

/** An admin route's work; it gets the platform because route modules register before it exists. */
export type AdminRoute = (request: FastifyRequest, platform: Platform) => unknown

/** Parses an admin body with its schema: the same 400s as the public API. */
export function adminBody<S extends z.ZodType>(schema: S, request: FastifyRequest): z.output<S> {
  const input = request.body ?? {}
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw invalid('invalid_body', 'The request body must be a JSON object')
  const parsed = schema.safeParse(input)
  if (!parsed.success) throw fromZodError(parsed.error, input)
  return parsed.data
}

export function requireMerchant(platform: Platform, id: string): MerchantDoc {
  const merchant = platform.merchant(id)
  if (!merchant) throw notFound('merchant', id, 'resource_missing', 'merchant')
  return merchant
}

export function storeView(merchant: MerchantDoc, env: 'live' | 'test', baseUrl: string) {
  return {
    id: merchant.store.id,
    object: 'store' as const,
    livemode: env === 'live',
    slug: merchant.store.slug,
    display_name: merchant.store.display_name,
    status: merchant.store.status,
    approval: merchant.store.approval,
    logo_url: merchant.store.logo_url,
    cover_url: merchant.store.cover_url,
    url: `${baseUrl}/s/${merchant.store.slug}`,
  }
}

export function createMerchant(platform: Platform, input: admin.AdminMerchantCreate): MerchantDoc {
  const body = admin.adminMerchantCreate.parse(input)
  const id = newId('mch', 16)
  const company = body.company ?? 'Demo Merchant'
  const slug = body.store?.slug ?? `${company.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 40) || 'store'}-${id.slice(-6).toLowerCase()}`
  const doc: MerchantDoc = {
    id,
    object: 'merchant',
    company,
    country: (body.country ?? 'DE').toUpperCase(),
    vat_number: body.vat_number ?? null,
    status: 'active',
    created: platform.now(),
    store: {
      id: newId('store', 16),
      slug,
      display_name: body.store?.display_name ?? company,
      status: body.store?.status ?? 'live',
      approval: body.store?.approval ?? 'approved',
      logo_url: null,
      cover_url: null,
    },
  }
  platform.saveMerchant(doc)
  return doc
}

/** Admin helper routes contributed by other modules: `[method, url, handler, status]`. */
export type AdminRouteDef = [method: 'GET' | 'POST' | 'DELETE', url: string, handler: AdminRoute, status?: number]

export function registerAdmin(app: FastifyInstance, platform: Platform, adminKey: string, extra: AdminRouteDef[] = []): void {
  const expected = Buffer.from(`Bearer ${adminKey}`)
  const authenticate = (request: FastifyRequest) => {
    const given = Buffer.from(request.headers.authorization ?? '')
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw unauthenticated('The admin API takes the gateway admin key (printed at start)', 'invalid_admin_key')
    }
  }
  const route = (method: AdminRouteDef[0], url: string, handler: AdminRoute, status = 200) => {
    app.route({
      method,
      url: `/_admin${url}`,
      handler: async (request, reply) => {
        authenticate(request)
        const result = platform.storage.transaction(() => handler(request, platform))
        return reply.code(status).type('application/json').send(JSON.stringify(result))
      },
    })
  }

  route(
    'POST',
    '/merchants',
    (request) => {
      const merchant = createMerchant(platform, adminBody(admin.adminMerchantCreate, request))
      return {...merchant, store: storeView(merchant, 'live', platform.baseUrl)}
    },
    201,
  )
  route('GET', '/merchants/:id', (request) => {
    const merchant = requireMerchant(platform, (request.params as {id: string}).id)
    return {...merchant, store: storeView(merchant, 'live', platform.baseUrl)}
  })

  route(
    'POST',
    '/installations',
    (request) => {
      const body = adminBody(admin.adminInstallationCreate, request)
      const merchant = requireMerchant(platform, body.merchant)
      const {id, token} = platform.credentials.issue('installation', merchant.id, body.env, body.scopes, body.app_name)
      return {id, object: 'installation', token, merchant: merchant.id, store: merchant.store.id, env: body.env, scopes: [...new Set(body.scopes)]}
    },
    201,
  )
  route('DELETE', '/installations/:id', (request) => {
    const id = (request.params as {id: string}).id
    if (!platform.credentials.revoke(id, 'installation')) throw notFound('installation', id)
    return {id, object: 'installation', revoked: true}
  })

  route(
    'POST',
    '/keys',
    (request) => {
      const body = adminBody(admin.adminKeyCreate, request)
      const merchant = requireMerchant(platform, body.merchant)
      const {id, token} = platform.credentials.issue('secret_key', merchant.id, body.mode, body.scopes)
      return {id, object: 'secret_key', secret_key: token, merchant: merchant.id, mode: body.mode, scopes: [...new Set(body.scopes)]}
    },
    201,
  )
  route('DELETE', '/keys/:id', (request) => {
    const id = (request.params as {id: string}).id
    if (!platform.credentials.revoke(id, 'secret_key')) throw notFound('secret key', id)
    return {id, object: 'secret_key', revoked: true}
  })

  route('GET', '/clock', () => ({object: 'clock', now: platform.now(), offset_seconds: platform.clock.offset}))
  route('POST', '/clock', (request) => {
    const body = adminBody(admin.adminClockAdvance, request)
    const now = platform.advanceClock(body.advance_seconds)
    return {object: 'clock', now, offset_seconds: platform.clock.offset}
  })

  route('POST', '/sandbox/reset', (request) => {
    const body = adminBody(admin.adminSandboxReset, request)
    requireMerchant(platform, body.merchant)
    const removed = platform.storage.wipe({merchant: body.merchant, env: 'test'})
    return {object: 'sandbox_reset', merchant: body.merchant, deleted_objects: removed}
  })

  route('GET', '/events', (request) => {
    // A repeated parameter arrives as an array; the first one counts.
    const q = Object.fromEntries(Object.entries(request.query as Record<string, unknown>).map(([k, v]) => [k, Array.isArray(v) ? String(v[0]) : String(v)])) as {
      merchant?: string
      env?: string
      type?: string
      limit?: string
    }
    if (!q.merchant) throw invalid('parameter_missing', 'Missing required query parameter: merchant', 'merchant')
    const env = q.env === 'live' ? 'live' : 'test'
    const limit = Math.min(Math.max(Number(q.limit ?? 100) || 100, 1), 1000)
    const events = platform.storage.all<{type: string}>('event', {merchant: q.merchant, env}).reverse()
    const data = events.filter((e) => !q.type || e.type === q.type || (q.type.endsWith('*') && e.type.startsWith(q.type.slice(0, -1))))
    return {object: 'list', has_more: data.length > limit, data: data.slice(0, limit)}
  })

  for (const [method, url, handler, status] of extra) route(method, url, handler, status)

  app.route({
    method: ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'],
    url: '/_admin/*',
    handler: async (request) => {
      authenticate(request)
      throw new ApiError(404, 'not_found', 'route_not_found', `Unrecognized admin URL (${request.method} ${request.url.split('?')[0]})`)
    },
  })
}
