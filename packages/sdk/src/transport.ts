/**
 * The one place that speaks HTTP. All transport policy lives here: headers, idempotency keys,
 * timeouts, which failures are retried and how long to wait, and how a response becomes data or a
 * typed error. Each attempt is one node:http(s) request on the runtime's keep-alive agent (see `send`):
 * with retries, redirects and error mapping all decided below, an HTTP library's per-request option
 * merging and hooks were most of the CPU a request cost (got 14: ~420 µs against ~150 µs).
 */
import {randomUUID} from 'node:crypto'
import {existsSync, readFileSync} from 'node:fs'
import http from 'node:http'
import {dirname, join} from 'node:path'
import {setTimeout as delay} from 'node:timers/promises'
import {fileURLToPath} from 'node:url'

import {
  ConnectionError,
  InvalidRequestError,
  PayappError,
  ResponseValidationError,
  errorFromResponse,
  headerValue,
  parseRetryAfter,
  type ErrorHeaders,
} from './errors.js'
import {isLoopbackHost} from './hosts.js'
import {mask} from './mask.js'

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT'
/** Response headers as node:http gives them; the same shape errors carry. */
export type ResponseHeaders = ErrorHeaders

export interface RequestEvent {
  method: HttpMethod
  /** Origin and path, without the query string (which may carry a client secret). */
  url: string
  /** The query string without `?`, values of secret-looking parameters (`cs`, `*secret*`, `*token*`, `*key*`) redacted; absent when empty. */
  query?: string
  /** 1 for the first try, 2 for the first retry, ... */
  attempt: number
  maxAttempts: number
  /** Request headers with credentials redacted, e.g. `Bearer tok_…abcd`. */
  headers: Record<string, string>
  idempotencyKey?: string
}

export interface ResponseEvent {
  method: HttpMethod
  url: string
  attempt: number
  /** Attempts this call may make in all (set by the transport; optional for hand-made events). */
  maxAttempts?: number
  /** Absent when no response arrived (connection error or timeout). */
  status?: number
  requestId?: string
  /** Response headers (e.g. `x-ratelimit-remaining`, for client-side pacing); absent when no response arrived. */
  headers?: ResponseHeaders
  elapsedMs: number
  /** Set when no response arrived, e.g. `ECONNRESET`, `ETIMEDOUT`. */
  errorCode?: string
  /** Set when this attempt will be retried. */
  retry?: {delayMs: number; reason: string}
}

export interface TransportOptions {
  /** Full API root, e.g. `http://127.0.0.1:4242/v1/app`. */
  baseUrl: string
  /** Full header value, e.g. `Bearer tok_...`; omit for unauthenticated calls. */
  authorization?: string
  /** Retries after the first attempt; default 4 (at most 5 attempts, the spec's limit). */
  maxRetries?: number
  /** Milliseconds per attempt; default 30 000. */
  timeout?: number
  /** Milliseconds for the whole call, every attempt and wait included; default unbounded (retries are). A retry that would end past it is not made. */
  totalTimeout?: number
  /**
   * A refused connection to a loopback address (127.0.0.1, ::1, localhost): `'retry'` (default) like any
   * refused connection, or `'fail'` at once, for interactive tools where it means a local server is not running.
   */
  loopbackRefused?: 'retry' | 'fail'
  /** Backoff base and cap; default 1000 → 1 s, 2 s, 4 s, 8 s, capped at 8000. */
  retryDelays?: {initialMs?: number; maxMs?: number}
  /** Appended after `payapp-sdk/<version> node/<version>`, e.g. `my-app/1.2.0`. */
  userAgent?: string
  /** Extra headers sent on every request. */
  headers?: Record<string, string>
  /** Called before every attempt; the Authorization header arrives redacted. */
  onRequest?: (e: RequestEvent) => void
  /** Called after every attempt, with the status, request id, timing and any retry decision. */
  onResponse?: (e: ResponseEvent) => void
  /** Replaces the backoff wait (tests). */
  sleep?: (ms: number) => Promise<void>
}

/** The settings a client passes to its transport as given (credentials and baseUrl are the client's to make). */
const PASSED_THROUGH = ['maxRetries', 'timeout', 'totalTimeout', 'loopbackRefused', 'retryDelays', 'userAgent', 'headers', 'onRequest', 'onResponse'] as const satisfies readonly (keyof TransportOptions)[]
export type TransportOption = (typeof PASSED_THROUGH)[number]

/** The pass-through settings out of a client's (or the admin API's) options, and nothing else of them (no credential). */
export function transportOptions(opts: Partial<Pick<TransportOptions, TransportOption>>): Pick<TransportOptions, TransportOption> {
  const out: Partial<Record<TransportOption, unknown>> = {}
  for (const key of PASSED_THROUGH) out[key] = opts[key]
  return out as Pick<TransportOptions, TransportOption>
}

export interface RequestOptions {
  method: HttpMethod
  /** Path below `baseUrl`, starting with `/`; build it with the `path` tag. */
  path: string
  query?: Record<string, string | number | boolean | undefined>
  /** Sent as JSON. */
  body?: unknown
  /** Sent as multipart; the encoder sets the boundary. */
  form?: FormData
  idempotencyKey?: string
  /** Extra headers for this call, over the transport's. */
  headers?: Record<string, string>
  /** Aborts the call, its retries and waits included. */
  signal?: AbortSignal
  /** This call's retries, over the transport's setting. */
  maxRetries?: number
  /** This call's milliseconds per attempt, over the transport's setting. */
  timeout?: number
  totalTimeout?: number
}

export interface ApiResponse<T> {
  data: T
  statusCode: number
  headers: ResponseHeaders
  requestId?: string
}

export const DEFAULT_MAX_RETRIES = 4
export const DEFAULT_TIMEOUT_MS = 30_000
export const DEFAULT_INITIAL_DELAY_MS = 1000
export const DEFAULT_MAX_DELAY_MS = 8000
/** Longest `Retry-After` we honour; a larger value is capped rather than blocking a caller for minutes. */
export const MAX_RETRY_AFTER_MS = 60_000

/** Failures where the request most likely never completed, so sending it again (same key) is safe. */
const RETRYABLE_CONNECTION_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN'])

/** Methods that create or change state; the spec dedupes them by `Idempotency-Key`. */
const KEYED_METHODS = new Set<HttpMethod>(['POST', 'PATCH'])

/**
 * Reads the version of the package that contains this file: @payapp/sdk from its src/ (tsx) or dist/, or
 * payapp where the CLI's bundle carries the SDK inside (payapp pins the @payapp/sdk of its own version).
 */
function readSdkVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const file = join(dir, 'package.json')
    if (existsSync(file)) {
      try {
        const pkg = JSON.parse(readFileSync(file, 'utf8')) as {name?: unknown; version?: unknown}
        if ((pkg.name === '@payapp/sdk' || pkg.name === 'payapp') && typeof pkg.version === 'string') return pkg.version
      } catch {
        // An unreadable package.json on the way up is not ours; keep climbing.
      }
    }
    const parent = dirname(dir)
    if (parent === dir) return '0.0.0'
    dir = parent
  }
}

export const SDK_VERSION = readSdkVersion()

/** `Bearer tok_…abcd`: keeps the scheme and masks the credential by the one masking rule (mask.ts). */
export function redactAuthorization(value: string): string {
  const match = /^(\S+)\s+(\S.*)$/.exec(value.trim())
  return match ? `${match[1]} ${mask(match[2])}` : mask(value.trim())
}

const SECRET_HEADERS = /^(authorization|proxy-authorization|cookie|x-api-key|.*-secret|.*-token)$/i

function redactHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    out[name] = SECRET_HEADERS.test(name) ? redactAuthorization(value) : value
  }
  return out
}

function redactQuery(params: URLSearchParams): string {
  const shown = new URLSearchParams()
  // `cs` is the checkout session's client secret (the merchant API's `?cs=`).
  for (const [name, value] of params) shown.append(name, /^cs$|secret|token|key|password/i.test(name) ? '[REDACTED]' : value)
  return shown.toString()
}

function lowerKeys(headers: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers ?? {})) out[name.toLowerCase()] = value
  return out
}

function nonNegativeInt(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < 0) {
    throw new InvalidRequestError({message: `${name} must be a non-negative integer, got ${value}`, code: 'invalid_option', param: name})
  }
  return value
}

function positiveTimeout(value: number | undefined, fallback: number, name = 'timeout'): number {
  // Zero would time every request out at once rather than mean "no timeout".
  if (value !== undefined && !(Number.isInteger(value) && value > 0)) {
    throw new InvalidRequestError({message: `${name} must be a positive number of ms, got ${value}`, code: 'invalid_option', param: name})
  }
  return value ?? fallback
}

function errorCode(err: unknown): string | undefined {
  return err && typeof err === 'object' && typeof (err as {code?: unknown}).code === 'string'
    ? (err as {code: string}).code
    : undefined
}

/** A failed attempt with no response: the socket's error (`code`: ECONNRESET, ECONNREFUSED, …), or our timeout. */
type SendError = Error & {code?: string; timedOut?: boolean}

type Outcome =
  | {kind: 'response'; status: number; headers: ResponseHeaders; body: unknown; text: string; isJson: boolean}
  | {kind: 'error'; error: SendError}

type Decision = {retry: false} | {retry: true; reason: string; retryAfterMs?: number}

interface RetryPolicy {
  maxRetries: number
  /** Refused connections to this machine are final (nothing listens; it will not start within the backoff). */
  refusedIsFinal: boolean
  signal?: AbortSignal
}

/**
 * Every retry rule, each with its reason (spec, "Client handling": never retry a 4xx except 429;
 * retry 5xx and 429 with backoff using the same key).
 */
function retryDecision(outcome: Outcome, retriesDone: number, policy: RetryPolicy): Decision {
  // The caller gave up; a retry would ignore their abort.
  if (policy.signal?.aborted) return {retry: false}
  // Out of budget: report the last failure as it is.
  if (retriesDone >= policy.maxRetries) return {retry: false}

  if (outcome.kind === 'error') {
    const code = outcome.error.timedOut ? 'ETIMEDOUT' : (outcome.error.code ?? '')
    // Nothing listens on this machine's port: the caller chose to hear that at once rather than after the backoff.
    if (code === 'ECONNREFUSED' && policy.refusedIsFinal) return {retry: false}
    // Reset, refused, timed out: the request probably never completed, and the key makes a repeat harmless.
    if (RETRYABLE_CONNECTION_CODES.has(code)) return {retry: true, reason: `connection error ${code}`}
    // DNS failures (ENOTFOUND), TLS errors and the like will not fix themselves within seconds.
    return {retry: false}
  }

  const {status, headers, body} = outcome
  // The server knows when it can take the request again; honour that over our own schedule.
  const retryAfter = parseRetryAfter(headers['retry-after'])
  const retryAfterMs = retryAfter === undefined ? undefined : Math.min(retryAfter * 1000, MAX_RETRY_AFTER_MS)

  // Rate limited: the request was not processed; wait as told (spec default 1 s) and send it again.
  if (status === 429) return {retry: true, reason: 'rate limited (429)', retryAfterMs}
  // Same key still processing on the server: the spec says "retry shortly" and the replay returns its result.
  if (status === 409 && apiErrorCode(body) === 'idempotency_in_flight') {
    return {retry: true, reason: 'idempotency key still in flight (409)', retryAfterMs}
  }
  // Service error (incl. 503 rate_limiter_unavailable): transient per the spec; the same key dedupes the repeat.
  if (status >= 500) return {retry: true, reason: `server error (${status})`, retryAfterMs}
  // Any other 4xx describes the request itself; sending it unchanged cannot succeed. 2xx/3xx are final.
  return {retry: false}
}

function apiErrorCode(body: unknown): string | undefined {
  const error = body && typeof body === 'object' ? (body as {error?: {code?: unknown}}).error : undefined
  return typeof error?.code === 'string' ? error.code : undefined
}

function parseBody(text: string): {body: unknown; isJson: boolean} {
  // /\S/ stops at the first character of a body; trim() would copy the whole of it first.
  if (!/\S/.test(text)) return {body: undefined, isJson: true}
  try {
    return {body: JSON.parse(text) as unknown, isJson: true}
  } catch {
    return {body: text, isJson: false}
  }
}

export class Transport {
  readonly #baseUrl: string
  readonly #target: Target
  readonly #authorization?: string
  readonly #maxRetries: number
  readonly #timeout: number
  readonly #totalTimeout?: number
  /** `loopbackRefused: 'fail'` and baseUrl is this machine: decided once, every request goes to that host. */
  readonly #refusedIsFinal: boolean
  readonly #initialDelayMs: number
  readonly #maxDelayMs: number
  readonly #userAgent: string
  readonly #headers: Record<string, string>
  readonly #onRequest?: (e: RequestEvent) => void
  readonly #onResponse?: (e: ResponseEvent) => void
  readonly #sleep?: (ms: number) => Promise<void>

  constructor(opts: TransportOptions) {
    let base: URL
    try {
      base = new URL(opts.baseUrl)
    } catch {
      throw new InvalidRequestError({message: `baseUrl is not a URL: ${JSON.stringify(opts.baseUrl)}`, code: 'invalid_option', param: 'baseUrl'})
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new InvalidRequestError({message: `baseUrl must be http(s), got ${base.protocol}`, code: 'invalid_option', param: 'baseUrl'})
    }
    this.#baseUrl = opts.baseUrl.replace(/\/+$/, '')
    // An IPv6 literal keeps its brackets in a URL, not in a hostname to connect to.
    this.#target = {protocol: base.protocol, hostname: base.hostname.replace(/^\[(.*)\]$/, '$1'), port: base.port}
    this.#authorization = opts.authorization
    this.#maxRetries = nonNegativeInt(opts.maxRetries, DEFAULT_MAX_RETRIES, 'maxRetries')
    this.#timeout = positiveTimeout(opts.timeout, DEFAULT_TIMEOUT_MS)
    this.#totalTimeout = opts.totalTimeout === undefined ? undefined : positiveTimeout(opts.totalTimeout, 0, 'totalTimeout')
    this.#refusedIsFinal = opts.loopbackRefused === 'fail' && isLoopbackHost(this.#target.hostname)
    this.#initialDelayMs = nonNegativeInt(opts.retryDelays?.initialMs, DEFAULT_INITIAL_DELAY_MS, 'retryDelays.initialMs')
    this.#maxDelayMs = nonNegativeInt(opts.retryDelays?.maxMs, DEFAULT_MAX_DELAY_MS, 'retryDelays.maxMs')
    const extra = opts.userAgent?.trim()
    this.#userAgent = `payapp-sdk/${SDK_VERSION} node/${process.versions.node}${extra ? ` ${extra}` : ''}`
    this.#headers = lowerKeys(opts.headers)
    this.#onRequest = opts.onRequest
    this.#onResponse = opts.onResponse
    this.#sleep = opts.sleep
  }

  async request<T = unknown>(req: RequestOptions): Promise<ApiResponse<T>> {
    if (typeof req.path !== 'string' || !req.path.startsWith('/')) {
      // A relative or absolute URL here could send the credential somewhere other than baseUrl.
      throw new InvalidRequestError({message: `path must start with '/', got ${JSON.stringify(req.path)}`, code: 'invalid_path', param: 'path'})
    }
    if (req.body !== undefined && req.form !== undefined) {
      throw new InvalidRequestError({message: 'pass either body (JSON) or form (multipart), not both', code: 'invalid_option', param: 'body'})
    }
    if (req.method === 'GET' && (req.body !== undefined || req.form !== undefined)) {
      throw new InvalidRequestError({message: 'a GET request cannot have a body; use query', code: 'invalid_option', param: 'body'})
    }
    const maxRetries = nonNegativeInt(req.maxRetries, this.#maxRetries, 'maxRetries')
    const timeout = positiveTimeout(req.timeout, this.#timeout)
    const totalTimeout = req.totalTimeout === undefined ? this.#totalTimeout : positiveTimeout(req.totalTimeout, 0, 'totalTimeout')
    const deadline = totalTimeout === undefined ? Infinity : performance.now() + totalTimeout

    const url = new URL(this.#baseUrl + req.path)
    for (const [name, value] of Object.entries(req.query ?? {})) {
      if (value !== undefined) url.searchParams.append(name, String(value))
    }
    const displayUrl = `${url.origin}${url.pathname}`
    // Only a request hook reads it: without one, redacting would be a URLSearchParams per call for nothing.
    const displayQuery = this.#onRequest ? redactQuery(url.searchParams) : ''

    // Serialised once so every retry sends identical bytes (the server fingerprints the body per key).
    const payload = req.form !== undefined ? await encodeForm(req.form) : req.body === undefined ? undefined : {bytes: Buffer.from(JSON.stringify(req.body)), type: 'application/json'}

    const callHeaders = lowerKeys(req.headers)
    const headers: Record<string, string> = {
      accept: 'application/json',
      'accept-encoding': 'gzip, deflate, br',
      ...this.#headers,
      'user-agent': this.#userAgent,
      ...(this.#authorization === undefined ? {} : {authorization: this.#authorization}),
      ...(payload ? {'content-type': payload.type} : {}),
      ...callHeaders,
      ...(payload ? {'content-length': String(payload.bytes.length)} : {}),
    }
    // Generated once per logical call and reused on every retry, so the server can dedupe them. A key in
    // the transport-wide headers is ignored: shared by every call, it would make each a replay of the first.
    const idempotencyKey =
      req.idempotencyKey ?? callHeaders['idempotency-key'] ?? (KEYED_METHODS.has(req.method) ? randomUUID() : undefined)
    delete headers['idempotency-key']
    if (idempotencyKey !== undefined) {
      if (!/^[\x20-\x7e]{1,255}$/.test(idempotencyKey)) {
        throw new InvalidRequestError({
          message: 'idempotencyKey must be 1 to 255 printable ASCII characters',
          code: 'invalid_idempotency_key',
          param: 'idempotencyKey',
        })
      }
      headers['idempotency-key'] = idempotencyKey
    }
    // The multipart boundary is the encoder's; a caller's content-type cannot describe these bytes.
    if (payload && req.form !== undefined) headers['content-type'] = payload.type

    const maxAttempts = maxRetries + 1
    const policy: RetryPolicy = {maxRetries, refusedIsFinal: this.#refusedIsFinal, signal: req.signal}
    for (let attempt = 1; ; attempt++) {
      if (req.signal?.aborted) throw aborted(req.method, displayUrl, req.signal)
      if (this.#onRequest) {
        this.#emit(this.#onRequest, {method: req.method, url: displayUrl, ...(displayQuery ? {query: displayQuery} : {}), attempt, maxAttempts, headers: redactHeaders(headers), idempotencyKey})
      }

      const started = performance.now()
      // The last attempt before the deadline gets only the time that is left.
      const attemptTimeout = Math.max(1, Math.min(timeout, Math.round(deadline - started)))
      let outcome: Outcome
      try {
        const res = await send(this.#target, url.pathname + url.search, req.method, headers, payload?.bytes, attemptTimeout, req.signal)
        outcome = {kind: 'response', status: res.status, headers: res.headers, text: res.text, ...parseBody(res.text)}
      } catch (err) {
        if (req.signal?.aborted) throw aborted(req.method, displayUrl, req.signal, err)
        if (!(err instanceof Error)) throw err
        outcome = {kind: 'error', error: err}
      }
      const elapsedMs = Math.round(performance.now() - started)
      const requestId = outcome.kind === 'response' ? headerValue(outcome.headers['x-request-id']) : undefined

      let decision = retryDecision(outcome, attempt - 1, policy)
      const delayMs = decision.retry ? (decision.retryAfterMs ?? this.#backoff(attempt)) : 0
      // A wait that ends past the total time bound cannot lead to an answer in time: report the failure now.
      if (decision.retry && performance.now() + delayMs >= deadline) decision = {retry: false}
      if (this.#onResponse) this.#emit(this.#onResponse, {
        method: req.method,
        url: displayUrl,
        attempt,
        maxAttempts,
        status: outcome.kind === 'response' ? outcome.status : undefined,
        requestId,
        headers: outcome.kind === 'response' ? outcome.headers : undefined,
        elapsedMs,
        errorCode: outcome.kind === 'error' ? (errorCode(outcome.error) ?? outcome.error.name) : undefined,
        retry: decision.retry ? {delayMs, reason: decision.reason} : undefined,
      })

      if (decision.retry) {
        await this.#wait(delayMs, req.signal)
        continue
      }
      if (outcome.kind === 'error') throw connectionError(outcome.error, req.method, displayUrl, attempt, attemptTimeout)
      if (outcome.status >= 300) throw errorFromResponse(outcome.status, outcome.body, outcome.headers)
      if (!outcome.isJson) {
        throw new ResponseValidationError({
          message: `Expected a JSON response from ${req.method} ${displayUrl}, got ${String(outcome.headers['content-type'] ?? 'no content-type')}`,
          code: 'response_not_json',
          statusCode: outcome.status,
          requestId,
          headers: outcome.headers,
          raw: outcome.text.slice(0, 2000),
        })
      }
      return {data: outcome.body as T, statusCode: outcome.status, headers: outcome.headers, requestId}
    }
  }

  /** 1 s, 2 s, 4 s, 8 s ... capped; no jitter because the spec prescribes these exact steps. */
  #backoff(attempt: number): number {
    return Math.min(this.#initialDelayMs * 2 ** (attempt - 1), this.#maxDelayMs)
  }

  async #wait(ms: number, signal?: AbortSignal): Promise<void> {
    if (this.#sleep) return this.#sleep(ms)
    try {
      await delay(ms, undefined, signal ? {signal} : undefined)
    } catch {
      // Aborted mid-wait: the loop's abort check reports it.
    }
  }

  /** A throwing logging hook must not turn a completed payment call into a failure. */
  #emit<E>(hook: ((e: E) => void) | undefined, event: E): void {
    if (!hook) return
    try {
      hook(event)
    } catch (err) {
      process.emitWarning(`payapp transport hook threw: ${err instanceof Error ? err.message : String(err)}`)
    }
  }
}

function aborted(method: HttpMethod, url: string, signal: AbortSignal, cause?: unknown): PayappError {
  return new PayappError({
    message: `Request aborted by the caller: ${method} ${url}`,
    type: 'connection_error',
    code: 'request_aborted',
    cause: cause ?? signal.reason,
  })
}

function connectionError(err: SendError, method: HttpMethod, url: string, attempts: number, timeout: number): ConnectionError {
  const isTimeout = err.timedOut === true
  const code = isTimeout ? 'ETIMEDOUT' : err.code
  const tries = attempts > 1 ? ` (${attempts} attempts)` : ''
  const what = isTimeout ? `timed out after ${timeout} ms` : `failed: ${err.message} (${code})`
  return new ConnectionError({message: `Could not reach the API: ${method} ${url} ${what}${tries}`, type: 'connection_error', code, cause: err})
}

/** The multipart encoding of `form` (boundary included), as the platform's fetch would send it; once per call, so retries send identical bytes. */
async function encodeForm(form: FormData): Promise<{bytes: Buffer; type: string}> {
  const encoded = new Response(form)
  return {bytes: Buffer.from(await encoded.arrayBuffer()), type: encoded.headers.get('content-type') ?? 'multipart/form-data'}
}

/** Where requests go, parsed once: Node's URL-to-options conversion per request was a tenth of a request's CPU. */
interface Target {
  protocol: string
  hostname: string
  port: string
}

let https: typeof import('node:https') | undefined

/**
 * One attempt: the request on node:http(s)'s global agent (keep-alive by default since Node 19), the
 * whole response read as text. Never follows a redirect: an API does not send one, and following it
 * could replay a POST or carry the token to another host. `timeoutMs` bounds the attempt from start
 * to the last byte of the body. Called through the module objects, so nock's patches apply.
 */
async function send(
  target: Target,
  path: string,
  method: HttpMethod,
  headers: Record<string, string>,
  body: Buffer | undefined,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<{status: number; headers: ResponseHeaders; text: string}> {
  const client = target.protocol === 'https:' ? (https ??= (await import('node:https')).default) : http
  return new Promise((resolve, reject) => {
    const req = client.request({...target, path, method, headers, signal})
    const timer = setTimeout(() => req.destroy(Object.assign(new Error(`timed out after ${timeoutMs} ms`), {code: 'ETIMEDOUT', timedOut: true})), timeoutMs)
    const fail = (err: Error) => {
      clearTimeout(timer)
      reject(err)
    }
    req.on('error', fail)
    req.once('response', (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('error', fail)
      res.once('end', () => {
        clearTimeout(timer)
        decode(Buffer.concat(chunks), res.headers['content-encoding']).then(
          (text) => resolve({status: res.statusCode ?? 0, headers: res.headers, text}),
          reject,
        )
      })
    })
    req.end(body)
  })
}

/** A compressed body (we send `accept-encoding: gzip, deflate, br`) as text; zlib loads only when one arrives. */
async function decode(raw: Buffer, encoding: string | undefined): Promise<string> {
  const coding = encoding?.trim().toLowerCase()
  if (!coding || coding === 'identity') return raw.toString('utf8')
  const zlib = await import('node:zlib')
  if (coding === 'gzip' || coding === 'x-gzip') return zlib.gunzipSync(raw).toString('utf8')
  if (coding === 'deflate') return zlib.inflateSync(raw).toString('utf8')
  if (coding === 'br') return zlib.brotliDecompressSync(raw).toString('utf8')
  return raw.toString('utf8')
}
