/**
 * The gateway's HTTP layer on fastify. Cross-cutting rules are declared once here, as hooks and one
 * route runner: request ids and the error envelope on every response, authentication per door, scope
 * and environment checks, rate limits, body and query validation, idempotency, and one unit of work per
 * write (reads get the same narrow context over committed data). Route modules (routes/*.ts) map each endpoint of the table onto its domain function.
 */
import {createHash} from 'node:crypto'
import {STATUS_CODES} from 'node:http'
import type {Duplex} from 'node:stream'

import fastifyMultipart from '@fastify/multipart'
import Fastify, {type FastifyContextConfig, type FastifyInstance, type FastifyReply, type FastifyRequest} from 'fastify'
import type {z} from 'zod'

import {DOOR_PREFIX, endpoints, type Door, type EndpointDef, type EndpointId, type Endpoint} from '@payapp/sdk/endpoints'
import {MAX_FILE_BYTES} from '@payapp/sdk/schemas/catalog'
import {listQuery, type ListQuery} from '@payapp/sdk/schemas/common'
import {ADMIN_PREFIX, adminPlugin, type AdminHandlers, type KeyedWrite} from './admin.js'
import {applyCors} from './cors.js'
import {ApiError, fromZodError, insufficientScope, invalid, methodNotAllowed, paramName, unauthenticated} from './errors.js'
import type {NotAPromise, Tx} from './domain/context.js'
import {faultError} from './domain/faults.js'
import {randomText} from './ids.js'
import {HEALTH_PATH, registerHealth} from './routes/health.js'
import {Idempotency, Platform, rateLimitHeaders, type Credential, type IdempotencyStart} from './platform.js'
import type {Kind, Scope} from './storage/documents.js'
import {StorageBusy, StorageUnavailable, UniqueViolation} from './storage/storage.js'

// ---------------------------------------------------------------- what route modules see

export interface RouteContext<B = unknown, Q = ListQuery> {
  /** The domain's context: a write unit for POST, PATCH and DELETE, committed data for GET. */
  tx: Tx
  cred: Credential
  /** The merchant and environment the credential may see: every query is scoped by it. */
  scope: Scope
  door: Door
  params: Record<string, string>
  query: Q
  body: B
  request: FastifyRequest
  requestId: string
  /** The uploaded file of a multipart endpoint, read before the handler runs. */
  upload?: Upload
}

export interface Upload {
  filename: string
  contentType: string
  bytes: Buffer
}

/** A handler's answer with a status other than 200, or a body already serialised to JSON. */
export class Reply {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly raw = false,
  ) {}
}
export const created = <T>(body: NotAPromise<T>) => new Reply(201, body)
/** The bytes of each page a read cache hands out again (`Platform.cachedRead`), made once per page. */
const listBytes = new WeakMap<object, Buffer>()
/**
 * A list envelope spliced from stored JSON documents (a storage page), without parsing them. A page served
 * again from the read cache is the same object, so its bytes are reused: splicing and encoding ~23 KB
 * per request was a tenth of the gateway's CPU on the hottest read.
 */
export const rawList = (page: {rows: string[]; hasMore: boolean}) => {
  let bytes = listBytes.get(page)
  if (!bytes) {
    bytes = Buffer.from(`{"object":"list","has_more":${page.hasMore},"data":[${page.rows.join(',')}]}`)
    listBytes.set(page, bytes)
  }
  return new Reply(200, bytes, true)
}

/** The handler of a list endpoint that serves a kind's stored documents as they are, newest first. */
export const storedList =
  (kind: Kind) =>
    async ({tx, scope, query}: {tx: Tx; scope: Scope; query: ListQuery}) =>
      rawList(await tx.pageRaw(kind, scope, query))

type BodyOut<Id extends EndpointId> = Endpoint<Id> extends {body: infer B extends z.ZodType} ? z.output<B> : undefined
type QueryOut<Id extends EndpointId> = (Endpoint<Id> extends {list: true} ? ListQuery : unknown) &
  (Endpoint<Id> extends {query: infer Q} ? (NonNullable<Q> extends z.ZodType ? z.output<NonNullable<Q>> : unknown) : unknown)

/** A route authorised by a client secret instead of a credential has no credential or scope in its context. */
type ContextOf<Id extends EndpointId> = Endpoint<Id> extends {clientSecret: string}
  ? Omit<RouteContext<BodyOut<Id>, QueryOut<Id>>, 'cred' | 'scope'> & {cred?: Credential; scope?: Scope}
  : RouteContext<BodyOut<Id>, QueryOut<Id>>

export type Handler<Id extends EndpointId> = (ctx: ContextOf<Id>) => unknown
/** One handler per endpoint of the table: a missing one is a compile error, never a runtime 501. */
export type Handlers = {[Id in EndpointId]: Handler<Id>}
/** A route module's part of the table, checked against it (`satisfies HandlersFor`). */
export type HandlersFor = Partial<Handlers>

// ---------------------------------------------------------------- the app

const ALL_METHODS = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'] as const

export interface BuildOptions {
  platform: Platform
  adminKey: string
  handlers: Handlers
  adminHandlers: AdminHandlers
  /** Pages outside the APIs (the hosted checkout page). */
  extra?: (app: FastifyInstance, platform: Platform) => void
  logger?: boolean
  timeouts?: Timeouts
}

/**
 * How long a client may take, so slow-loris clients cannot hold connections forever. Local clients are
 * fast; the defaults leave room for a 5 MB upload on a slow machine. Tests pass short ones.
 */
export interface Timeouts {
  /** Whole request, headers and body (default 30 s): a stalled body is cut here. */
  requestMs?: number
  /** Headers alone (default 10 s, at most requestMs). */
  headersMs?: number
  /** A socket with no traffic at all (default 60 s, above the longest injected latency). */
  idleMs?: number
  /** An idle keep-alive connection between requests (default 5 s). */
  keepAliveMs?: number
}

/** The deepest JSON body the gateway reads: the spec's bodies nest a few levels; deeper is an attack. */
const MAX_BODY_DEPTH = 32

const REQUEST_ID_PREFIX = `req_${randomText(8)}`
let requestCounter = 0

export async function buildApp(opts: BuildOptions): Promise<FastifyInstance> {
  const {platform} = opts
  const requestMs = opts.timeouts?.requestMs ?? 30_000
  const headersMs = Math.min(opts.timeouts?.headersMs ?? 10_000, requestMs)
  const app = Fastify({
    logger: opts.logger ?? false,
    bodyLimit: 1024 * 1024,
    genReqId: nextRequestId,
    routerOptions: {ignoreTrailingSlash: true, maxParamLength: 200},
    return503OnClosing: true,
    requestTimeout: requestMs,
    connectionTimeout: opts.timeouts?.idleMs ?? 60_000,
    keepAliveTimeout: opts.timeouts?.keepAliveMs ?? 5_000,
    // Node checks the request and header deadlines on this interval (default 30 s, too coarse for them).
    http: {requestTimeout: requestMs, headersTimeout: headersMs, connectionsCheckingInterval: Math.min(1000, Math.ceil(headersMs / 2))},
    // Errors raised before routing (bad URL encoding, over-long parameters) in the envelope too.
    frameworkErrors: (error, request, reply) => sendError(request, reply, toApiError(error)),
    clientErrorHandler: clientError,
    // Bodies and queries are validated by the zod model, never by JSON schemas: without these stubs fastify
    // would load ajv and fast-json-stringify on every start (about 100 ms of a test suite's gateway start).
    schemaController: {compilersFactory: {buildValidator: noJsonSchemas, buildSerializer: noJsonSchemas}},
  })

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    // Two Authorization headers: node keeps the first, a proxy may keep the last; neither may decide.
    if (countHeader(request.raw.rawHeaders, 'authorization') > 1) {
      return done(unauthenticated('Send one Authorization header, not several', 'invalid_authorization_header'))
    }
    // Other processes on the database may have revoked a credential, changed a fault rule or moved a
    // clock: one read of the shared version before anything else (nothing on :memory:, which no other process
    // can open, nor while this process is alone on the database: see Platform.start). Not for the health
    // check, which must answer while the database does not.
    if (!platform.mustSync || request.url === HEALTH_PATH) return done()
    platform.sync().then(() => done(), done)
  })

  // JSON bodies: an empty body is "no fields"; a syntax error, a body nested deeper than any of the
  // spec's and a `__proto__` key (which JavaScript objects would drop) are 400s in the envelope.
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', {parseAs: 'string'}, (_request, body, done) => {
    const text = body as string
    if (text.trim() === '') return done(null, undefined)
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      return done(invalid('invalid_json', 'The request body is not valid JSON'), undefined)
    }
    const problem = checkJsonShape(parsed)
    done(problem ?? null, problem ? undefined : parsed)
  })
  await app.register(fastifyMultipart, {limits: {fileSize: MAX_FILE_BYTES, files: 1, fields: 10, parts: 12}})

  app.setErrorHandler((error: Error & {code?: string; statusCode?: number}, request, reply) => {
    const apiError = toApiError(error)
    if (apiError.status >= 500) request.log.error(error)
    sendError(request, reply, apiError)
  })
  // Every route's methods by URL, whoever registers it (the endpoints, the health check, the OpenAPI document, the
  // pages; the admin API answers its own unknown URLs).
  const methodsByUrl = new Map<string, Set<string>>()
  app.addHook('onRoute', (route) => {
    if (!methodsByUrl.has(route.url)) methodsByUrl.set(route.url, new Set())
    for (const method of [route.method].flat()) methodsByUrl.get(route.url)!.add(method)
  })
  // 405s are found here rather than registered as routes: one route per other method of every URL was
  // three quarters of the router's work at start-up, which a test suite pays for every gateway it starts.
  let allowedByPattern: Array<{pattern: RegExp; methods: Set<string>}> | undefined
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!
    allowedByPattern ??= [...methodsByUrl].map(([url, methods]) => ({
      pattern: new RegExp(`^${url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:\w+/g, '[^/]+')}/?$`),
      methods: new Set([...methods, ...(methods.has('GET') ? ['HEAD'] : [])]),
    }))
    const route = allowedByPattern.find((r) => r.pattern.test(path))
    const known = (ALL_METHODS as readonly string[]).includes(request.method) || request.method === 'HEAD'
    if (route && known && !route.methods.has(request.method)) return sendError(request, reply, methodNotAllowed(request.method, path, route.methods))
    sendError(request, reply, new ApiError(404, 'not_found', 'route_not_found', `Unrecognized request URL (${request.method} ${path})`))
  })

  applyFaults(app, platform)
  applyCors(app, platform)

  for (const [id, def] of Object.entries(endpoints) as [EndpointId, EndpointDef][]) {
    const handler = opts.handlers[id] as Handler<EndpointId>
    for (const door of def.doors) {
      const url = DOOR_PREFIX[door] + def.path.replace(/\{(\w+)\}/g, ':$1')
      app.route({method: def.method, url, config: {endpoint: id} as FastifyContextConfig, handler: endpointRunner(platform, def, door, handler)})
    }
  }

  const keyed: KeyedWrite = (request, reply, owner, fingerprintBody, run) => sendIdempotent(platform, request, reply, owner, fingerprintBody, run)
  await app.register(adminPlugin(platform, opts.adminKey, opts.adminHandlers, keyed), {prefix: ADMIN_PREFIX})
  registerHealth(app, platform)
  opts.extra?.(app, platform)
  return app
}

/**
 * Fault injection (domain/faults.ts) on the App, store and merchant APIs (`/v1/…`; never the admin API
 * or the hosted pages), before the route runs: a faulted request writes nothing and never reaches its
 * Idempotency-Key. A callback hook, so while no rule exists it costs one size check per request.
 */
function applyFaults(app: FastifyInstance, platform: Platform): void {
  const {faults} = platform
  app.addHook('preHandler', (request, _reply, done) => {
    if (!faults.forApi || !request.url.startsWith('/v1/')) return done()
    const strike = async (merchant: string | undefined) => {
      const rule = await faults.strike({
        method: request.method,
        pattern: request.routeOptions.url ?? '',
        path: request.url.split('?')[0],
        endpoint: (request.routeOptions.config as {endpoint?: string} | undefined)?.endpoint,
        merchant,
      })
      if (!rule) return done()
      const answer = () => done(rule.status !== null ? faultError(rule) : undefined)
      if (rule.latency_ms > 0) setTimeout(answer, rule.latency_ms)
      else answer()
    }
    // The rules live in storage: a strike consumes its rule's count in one unit (process-state.ts).
    const struck = faults.byMerchant ? merchantOf(platform, request).then(strike) : strike(undefined)
    struck.catch((error: Error) => done(error))
  })
}

/** The merchant behind the request's credential, or undefined when it has none that is valid. */
async function merchantOf(platform: Platform, request: FastifyRequest): Promise<string | undefined> {
  try {
    return (await platform.credentials.authenticate(request.headers.authorization, request.url.startsWith('/v1/app/') ? 'app' : 'store')).merchant
  } catch {
    return undefined
  }
}

// Unique per process and cheap: a random prefix and a counter.
const nextRequestId = () => `${REQUEST_ID_PREFIX}${(++requestCounter).toString(36).padStart(6, '0')}`

/** An error as the spec's envelope with its request id, status and headers: every JSON error of the gateway leaves here. */
export function sendError(request: FastifyRequest, reply: FastifyReply, apiError: ApiError) {
  void reply
    .code(apiError.status)
    .header('x-request-id', request.id)
    .headers(apiError.headers ?? {})
    .type('application/json')
    .send(JSON.stringify(apiError.envelope(request.id)))
}

/**
 * Errors node's HTTP parser meets before there is a request (over-large headers, garbage, a client
 * too slow to send its headers): answered on the socket in the envelope, with a request id, then closed.
 */
function clientError(error: Error & {code?: string}, socket: Duplex) {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const apiError =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new ApiError(408, 'invalid_request', 'request_timeout', 'The request was not received in time')
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? new ApiError(431, 'invalid_request', 'headers_too_large', 'The request headers are too large')
        : invalid('invalid_http', 'The request is not valid HTTP/1.1')
  const id = nextRequestId()
  const body = JSON.stringify(apiError.envelope(id))
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${id}\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy()
}

function countHeader(rawHeaders: string[], name: string): number {
  let n = 0
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i].length === name.length && rawHeaders[i].toLowerCase() === name) n++
  return n
}

/**
 * A parsed body's nesting and keys, walked without recursion: deeper than MAX_BODY_DEPTH is refused
 * before anything (validation, fingerprints) recurses into it, and a `__proto__` key is refused by name
 * because objects built from it would silently lose it.
 */
function checkJsonShape(value: unknown): ApiError | undefined {
  // Only objects and arrays are visited (a value of neither kind neither nests nor holds a key), each with its
  // parent and key: its path is built only for an answer, not copied for every value of every body.
  type At = {v: object; depth: number; parent?: At; key?: PropertyKey}
  const pathOf = (at: At, last?: PropertyKey) => {
    const path: PropertyKey[] = last === undefined ? [] : [last]
    for (let a: At | undefined = at; a?.parent; a = a.parent) path.unshift(a.key!)
    return path
  }
  if (value === null || typeof value !== 'object') return undefined
  const stack: At[] = [{v: value, depth: 1}]
  while (stack.length > 0) {
    const at = stack.pop()!
    if (at.depth > MAX_BODY_DEPTH) return invalid('body_too_deep', `The request body nests deeper than ${MAX_BODY_DEPTH} levels`, paramName(pathOf(at)))
    const v = at.v
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const child: unknown = v[i]
        if (child !== null && typeof child === 'object') stack.push({v: child, depth: at.depth + 1, parent: at, key: i})
      }
      continue
    }
    for (const key of Object.keys(v)) {
      if (key === '__proto__') {
        const param = paramName(pathOf(at, key))
        return invalid('parameter_reserved', `${param}: "__proto__" is reserved and cannot be used as a key`, param)
      }
      const child = (v as Record<string, unknown>)[key]
      if (child !== null && typeof child === 'object') stack.push({v: child, depth: at.depth + 1, parent: at, key})
    }
  }
  return undefined
}

/**
 * A route's JSON body as an object (none sent: `{}`). Multipart bodies are left unread by their parser
 * until an upload route reads them, so off upload routes they are refused by type here.
 */
function jsonObjectBody(request: FastifyRequest): object {
  if (request.isMultipart()) throw multipartNotHere()
  const body = request.body
  if (body === undefined) return {}
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('invalid_body', 'The request body must be a JSON object')
  return body
}

/** A body on a route that takes none: refused like an unknown field anywhere else. */
function refuseBody(request: FastifyRequest): void {
  const [first] = Object.keys(jsonObjectBody(request))
  if (first !== undefined) throw new ApiError(400, 'invalid_request', 'parameter_unknown', `Received unknown parameter: ${first} (this route takes no body)`, first)
}

const multipartNotHere = () => invalid('unsupported_content_type', 'Send the body as application/json; multipart/form-data is for file uploads')

function noJsonSchemas(): never {
  throw new Error('The gateway validates with its zod model; a fastify JSON schema was given')
}

/** Fastify's own errors (parsers, limits, URL) as the spec's envelope, always a 4xx for bad input. */
function toApiError(error: Error & {code?: string; statusCode?: number; validation?: unknown}): ApiError {
  if (error instanceof ApiError) return error
  // The database did not answer (a restart, a failover): the request may be sent again as it was, in a moment.
  if (error instanceof StorageUnavailable) {
    const now = error.readOnly ? 'The gateway\'s database takes no writes right now (read-only for a switchover, or full)' : 'The gateway cannot reach its database right now'
    return new ApiError(503, 'api_error', 'database_unavailable', `${now}; retry with the same Idempotency-Key`, undefined, {'retry-after': '1'})
  }
  // Another request or process held what this write needs for longer than the gateway waits; it wrote nothing.
  if (error instanceof StorageBusy) {
    return new ApiError(429, 'rate_limit_error', 'lock_timeout', 'Another request is changing the same data; retry with the same Idempotency-Key in a moment', undefined, {'retry-after': '1'})
  }
  // A unique constraint refused a concurrent duplicate: the other request won; this one wrote nothing.
  if (error instanceof UniqueViolation) return new ApiError(409, 'resource_conflict', 'concurrent_write', 'Another request changed this resource at the same time; re-read it and retry')
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return invalid('unsupported_content_type', 'Send the body as application/json (or multipart/form-data for uploads)')
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return invalid('body_too_large', 'The request body is larger than 1 MB')
    case 'FST_REQ_FILE_TOO_LARGE':
      return new ApiError(413, 'invalid_request', 'file_too_large', `The file is larger than ${MAX_FILE_BYTES / 1024 / 1024} MB`, 'file')
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return invalid('invalid_content_length', 'Content-Length does not match the body')
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalid('invalid_json', 'The request body is empty')
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_ASYNC_CONSTRAINT':
      return invalid('invalid_url', 'The request URL is malformed')
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ApiError(414, 'invalid_request', 'uri_too_long', 'A path parameter of the request URL is too long')
  }
  if (error.code?.startsWith('FST_') && error.statusCode && error.statusCode < 500) {
    return new ApiError(error.statusCode, 'invalid_request', error.code.toLowerCase().replace(/^fst_(err_)?/, ''), error.message)
  }
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return new ApiError(error.statusCode, 'invalid_request', 'invalid_request', error.message)
  }
  return new ApiError(500, 'api_error', 'internal_error', 'The gateway failed to handle this request; retry with the same Idempotency-Key')
}

const queryCache = new Map<EndpointDef, z.ZodType | undefined>()
function querySchema(def: EndpointDef): z.ZodType | undefined {
  if (!queryCache.has(def)) {
    const base = def.list ? listQuery : undefined
    queryCache.set(def, base && def.query ? base.extend(def.query.shape) : (base ?? def.query))
  }
  return queryCache.get(def)
}

/** Stripe's spelling of a repeated query parameter, `expand[]=a&expand[]=b`, is the parameter `expand` repeated. */
function bracketless(query: Record<string, unknown>): Record<string, unknown> {
  let out = query
  for (const key in query) {
    const name = key.slice(0, -2)
    // `__proto__[]` stays an unknown parameter (ignored): assigning it would replace the copy's prototype.
    if (!key.endsWith('[]') || name === '__proto__') continue
    if (out === query) out = {...query}
    out[name] = [out[name] ?? [], query[key]].flat()
    delete out[key]
  }
  return out
}

/** A route that takes a client secret in `param` instead of a credential, when no Authorization header is sent. */
function bySecret(request: FastifyRequest, param: string | undefined): boolean {
  return param !== undefined && request.headers.authorization === undefined && typeof (request.query as Record<string, unknown>)?.[param] === 'string'
}

function endpointRunner(platform: Platform, def: EndpointDef, door: Door, handler: Handler<EndpointId>) {
  const isWrite = def.method === 'POST' || def.method === 'PATCH'
  const query = querySchema(def)
  return async function run(request: FastifyRequest, reply: FastifyReply) {
    const cred = bySecret(request, def.clientSecret) ? undefined : await admit(platform, request, door, def, reply)

    const ctx = {
      tx: undefined as never,
      cred,
      scope: cred && {merchant: cred.merchant, env: cred.env},
      door,
      params: request.params as Record<string, string>,
      query: undefined as never,
      body: undefined,
      request,
      requestId: request.id,
    } as RouteContext
    if (query) {
      const input = bracketless((request.query ?? {}) as Record<string, unknown>)
      const parsed = query.safeParse(input)
      if (!parsed.success) throw fromZodError(parsed.error, input, 'query')
      ctx.query = parsed.data as ListQuery
    }
    if (def.body) {
      const input = jsonObjectBody(request)
      const parsed = def.body.safeParse(input)
      if (!parsed.success) throw fromZodError(parsed.error, input)
      ctx.body = parsed.data
    } else if (!def.multipart) {
      refuseBody(request)
    }

    if (def.multipart) ctx.upload = await readUpload(request)

    if (!isWrite || !cred) return send(reply, await runUnit(platform, handler, ctx, def))
    const fingerprintBody = ctx.upload ? uploadFingerprint(ctx.upload) : JSON.stringify(request.body ?? {})
    return sendIdempotent(platform, request, reply, cred.id, fingerprintBody, (tx, onCommit) => runHandler(tx, handler, ctx, def, onCommit))
  }
}

/**
 * The gate of every API route, before its input is read: the credential for the door, no browser
 * Origin with a secret key, the route's scope and environment, then one hit on its rate-limit bucket.
 */
export async function admit(
  platform: Platform,
  request: FastifyRequest,
  door: Door,
  rule: Pick<EndpointDef, 'scope' | 'bucket' | 'env' | 'publishable'>,
  reply: FastifyReply,
): Promise<Credential> {
  const cred = await platform.credentials.authenticate(request.headers.authorization, door)
  const origin = request.headers.origin
  if (cred.kind === 'publishable_key') {
    if (origin === undefined || !cred.origins?.includes(origin)) {
      throw new ApiError(403, 'permission_error', 'origin_not_allowed', 'Publishable keys work only from a browser origin on the key\'s allow-list')
    }
    if (!rule.publishable) {
      throw new ApiError(403, 'permission_error', 'publishable_key_forbidden', 'A publishable key can only create checkout sessions with line_items; use a secret key server-side')
    }
  } else if (door !== 'app' && origin !== undefined) {
    throw new ApiError(403, 'permission_error', 'origin_forbidden', 'Secret keys are server-side only: requests with a browser Origin header are rejected')
  }
  if (!cred.scopes.has(rule.scope)) throw insufficientScope(rule.scope)
  if (rule.env && cred.env !== rule.env) {
    throw rule.env === 'live'
      ? invalid('livemode_required', 'This route is available to live installations only; a test installation cannot use it')
      : invalid('livemode_forbidden', 'This route is available in the sandbox only; a live credential cannot use it')
  }
  const state = await platform.rateLimiter.hit(cred.id, rule.bucket, request.method !== 'GET')
  if (state) reply.headers(rateLimitHeaders(state))
  return cred
}

/**
 * Sends a write's answer under the Idempotency-Key rules: without a key it just runs; with one, a
 * repeat replays the stored answer. The key is claimed in the write's own unit of work and `run`
 * stores its answer through `onCommit` there too, so a claim never outlives a crashed request: a
 * SIGKILL mid-write rolls back the claim with the write, and the retry runs the write afresh.
 */
export async function sendIdempotent(
  platform: Platform,
  request: FastifyRequest,
  reply: FastifyReply,
  /** Whose keys: the credential's id (the admin API's: its key's). */
  owner: string,
  fingerprintBody: string,
  run: (tx: Tx, onCommit?: (status: number, body: string) => Promise<void>) => Promise<Serialized>,
) {
  const header = request.headers['idempotency-key']
  const key = Array.isArray(header) ? header[0] : header
  if (key === undefined) return send(reply, await platform.write((tx) => run(tx)))

  Idempotency.checkKey(key)
  const fingerprint = Idempotency.fingerprint(request.method, request.url.split('?')[0], fingerprintBody)
  let claimed = false
  let out: Serialized | Replay
  try {
    out = await platform.write(async (tx): Promise<Serialized> => {
      // The claim goes out first and the handler runs alongside it, so on PostgreSQL the claim shares the
      // handler's first round trip. A key another request holds makes the answer a replay: the handler's
      // statements, queued behind the claim on the unit's connection, roll back with the unit.
      const start = platform.idempotency.begin(tx, owner, key, fingerprint)
      const ran = run(tx, (status, body) => platform.idempotency.finish(tx, owner, key, status, body))
      // Handled now (a handler that fails before the claim answers is not an unhandled rejection); returned below.
      const settled = ran.then(noop, noop)
      const started = await start.catch(async (error: unknown) => {
        await settled
        throw error
      })
      if (started.kind === 'replay') {
        await settled
        throw new ReplayInstead(started)
      }
      claimed = true
      return ran
    })
  } catch (error) {
    if (!(error instanceof ReplayInstead)) {
      if (!claimed) throw error
      const apiError = toApiError(error as Error)
      // A request rejected for its content replays the same rejection; a transient failure (5xx, 429)
      // rolled its claim back with its writes, so a retry runs afresh.
      if (apiError.status < 500 && apiError.status !== 429) {
        await platform.idempotency.remember(owner, key, fingerprint, apiError.status, JSON.stringify(apiError.envelope(request.id)))
      }
      throw apiError
    }
    out = error.replay
  }
  if ('kind' in out) {
    reply.header('idempotent-replayed', 'true')
    return reply.code(out.status).type('application/json').send(out.body)
  }
  return send(reply, out)
}

type Replay = Extract<IdempotencyStart, {kind: 'replay'}>

const noop = () => {}

/** Thrown out of an idempotent unit whose key holds an earlier answer: the unit rolls back what its handler ran meanwhile. */
class ReplayInstead extends Error {
  constructor(readonly replay: Replay) {
    super('idempotent replay')
  }
}

const missingFile = () => invalid('parameter_missing', 'Missing required parameter: file (a multipart/form-data part named "file")', 'file')

/** The one file part named `file` of a multipart request, whole (at most 5 MB). */
async function readUpload(request: FastifyRequest): Promise<Upload> {
  if (!request.isMultipart()) {
    if (request.body === undefined) throw missingFile()
    throw invalid('unsupported_content_type', 'Upload the file as multipart/form-data, in the field "file"')
  }
  let part: Awaited<ReturnType<FastifyRequest['file']>>
  let bytes: Buffer
  try {
    part = await request.file()
    if (!part || part.fieldname !== 'file') {
      await part?.toBuffer().catch(() => undefined)
      throw missingFile()
    }
    bytes = await part.toBuffer()
  } catch (error) {
    throw malformedMultipart(error as Error & {code?: string; statusCode?: number})
  }
  // toBuffer throws at the limit; a truncated stream is the same failure.
  if (part.file.truncated) throw toApiError(Object.assign(new Error('too large'), {code: 'FST_REQ_FILE_TOO_LARGE'}))
  if (bytes.length === 0) throw invalid('file_empty', 'The uploaded file is empty', 'file')
  return {filename: part.filename, contentType: part.mimetype, bytes}
}

/** The multipart parser's failures (no boundary, a part never closed) are the client's: a 4xx. */
function malformedMultipart(error: Error & {code?: string; statusCode?: number}): ApiError {
  if (error instanceof ApiError) return error
  const known = toApiError(error)
  if (known.status < 500) return known
  return invalid('invalid_multipart', `The multipart/form-data body is malformed: ${error.message}`)
}

/** An upload's identity for idempotency: its name, type and bytes, not the multipart boundary (random per send). */
function uploadFingerprint(upload: Upload): string {
  return createHash('sha256').update(upload.filename).update('\0').update(upload.contentType).update('\0').update(upload.bytes).digest('hex')
}

export interface Serialized {
  status: number
  /** A Buffer when the handler answered with ready bytes (a raw list), written as is. */
  body: string | Buffer
}

function serialize(result: unknown, def: EndpointDef): Serialized {
  if (result instanceof Reply) return {status: result.status, body: result.raw ? (result.body as string | Buffer) : JSON.stringify(result.body)}
  if (def.list && Array.isArray(result)) return {status: 200, body: JSON.stringify({object: 'list', has_more: false, data: result})}
  return {status: 200, body: JSON.stringify(result)}
}

/**
 * Runs a handler so that its writes, its events and its idempotency record commit together or not at
 * all: a write handler runs in one unit of work, and a throw rolls everything back; a GET reads
 * committed data and never waits for a write. An upload is read before the unit opens.
 */
function runUnit(platform: Platform, handler: Handler<EndpointId>, ctx: RouteContext, def: EndpointDef): Promise<Serialized> {
  if (def.method === 'GET') return platform.read((tx) => runHandler(tx, handler, ctx, def))
  return platform.write((tx) => runHandler(tx, handler, ctx, def))
}

async function runHandler(
  tx: Tx,
  handler: Handler<EndpointId>,
  ctx: RouteContext,
  def: EndpointDef,
  onCommit?: (status: number, body: string) => Promise<void>,
): Promise<Serialized> {
  ctx.tx = tx
  const serialized = serialize(await handler(ctx as never), def)
  await onCommit?.(serialized.status, serialized.body.toString())
  return serialized
}

function send(reply: FastifyReply, out: Serialized) {
  return reply.code(out.status).type('application/json').send(out.body)
}
