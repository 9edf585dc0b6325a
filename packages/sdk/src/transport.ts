/**
 * The one place that speaks HTTP. All transport policy lives here: headers, idempotency keys,
 * timeouts, which failures are retried and how long to wait, and how a response becomes data or a
 * typed error. Each attempt is one call of the runtime's `fetch` (or the one passed as the `fetch`
 * option): the same code runs in Node, Deno, Bun, workerd and browsers, and nothing here touches a
 * Node built-in or `process`, at load or at call.
 */
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
import {isBrowser, monotonicMs, randomUUID, runtimeName, warn} from './runtime.js'
import {SDK_VERSION} from './version.js'

export {SDK_VERSION}

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT'
/** Response headers by lower-case name; the same shape errors carry. */
export type ResponseHeaders = ErrorHeaders

/** What the transport reads of an answer: a `Response` has it, and so can a sender that never loads one. */
export interface FetchResponse {
  status: number
  headers: {forEach(callback: (value: string, name: string) => void): void}
  text(): Promise<string>
}

/**
 * The `fetch` the transport sends with: the runtime's by default. Any function with fetch's call shape
 * works (a wrapper that adds tracing, a proxy agent's, undici's, a test double); the transport never
 * follows redirects (`redirect: 'manual'`) and reads the whole body as text.
 */
export type Fetch = (url: string, init: RequestInit) => Promise<FetchResponse>

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
   * A refused connection to a loopback address (127.0.0.1, ::1, localhost): `'fail'` (default) at once, as
   * nothing listens there and nothing will within the backoff; or `'retry'` like any refused connection,
   * for a script that starts a local server at the same time as its first call.
   */
  loopbackRefused?: 'retry' | 'fail'
  /** The `fetch` to send with; default the runtime's `globalThis.fetch`, looked up per request. */
  fetch?: Fetch
  /** Backoff base and cap; default 1000 → 1 s, 2 s, 4 s, 8 s, capped at 8000. */
  retryDelays?: {initialMs?: number; maxMs?: number}
  /** Appended after `payapp-sdk/<version> <runtime>/<version>`, e.g. `my-app/1.2.0`; not sent from browsers, which set their own. */
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
const PASSED_THROUGH = ['maxRetries', 'timeout', 'totalTimeout', 'loopbackRefused', 'fetch', 'retryDelays', 'userAgent', 'headers', 'onRequest', 'onResponse'] as const satisfies readonly (keyof TransportOptions)[]
export type TransportOption = (typeof PASSED_THROUGH)[number]

/** The pass-through settings out of a client's (or the admin API's) options, and nothing else of them (no credential). */
export function transportOptions(opts: Partial<Pick<TransportOptions, TransportOption>>): Pick<TransportOptions, TransportOption> {
  const out: Partial<Record<TransportOption, unknown>> = {}
  for (const key of PASSED_THROUGH) out[key] = opts[key]
  return out as Pick<TransportOptions, TransportOption>
}

type QueryScalar = string | number | boolean
export type QueryValue = QueryScalar | readonly QueryScalar[] | undefined

export interface RequestOptions {
  method: HttpMethod
  /** Path below `baseUrl`, starting with `/`; build it with the `path` tag. */
  path: string
  /** An array is the parameter repeated (`expand=a&expand=b`: OpenAPI's form style, exploded). */
  query?: Record<string, QueryValue>
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

/** No response and no cause given (browsers, workerd): the connection failed somewhere. */
const NETWORK_ERROR = 'ENETWORK'

/** Failures where the request most likely never completed, so sending it again (same key) is safe. */
const RETRYABLE_CONNECTION_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', NETWORK_ERROR])

/** Methods that create or change state; the spec dedupes them by `Idempotency-Key`. */
const KEYED_METHODS = new Set<HttpMethod>(['POST', 'PATCH'])

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

/**
 * A failed attempt with no response, as one code. Each runtime's fetch says it differently: Node's
 * `TypeError('fetch failed')` carries the socket's error as `cause` (an AggregateError when several
 * addresses were tried), Bun sets `code: 'ConnectionRefused'`, Deno puts the OS message in its own, and
 * a browser says nothing beyond `TypeError` (NETWORK_ERROR).
 */
export function failureCode(err: unknown): string {
  const chain: {code?: unknown; message?: unknown}[] = []
  const walk = (e: unknown, depth: number): void => {
    if (!e || typeof e !== 'object' || depth > 5 || chain.includes(e)) return
    chain.push(e)
    walk((e as {cause?: unknown}).cause, depth + 1)
    const inner = (e as {errors?: unknown}).errors
    if (Array.isArray(inner)) for (const one of inner) walk(one, depth + 1)
  }
  walk(err, 0)
  const codes = chain.flatMap((e) => (typeof e.code === 'string' ? [e.code] : []))
  const text = [...codes, ...chain.map((e) => String(e.message ?? ''))].join('\n')
  if (/ECONNREFUSED|ConnectionRefused|connection refused/i.test(text)) return 'ECONNREFUSED'
  if (/ECONNRESET|UND_ERR_SOCKET|ConnectionClosed|other side closed|connection reset|socket hang up/i.test(text)) return 'ECONNRESET'
  if (/UND_ERR_(CONNECT|HEADERS|BODY)_TIMEOUT/.test(text)) return 'ETIMEDOUT'
  return codes.find((code) => !/^ERR_INVALID|^ABORT_ERR$/.test(code)) ?? NETWORK_ERROR
}

/** A failed attempt with no response (`code` as failureCode gives it), or our timeout. */
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
    // Nothing listens on this machine's port, and nothing will within the backoff: say so at once. (A browser
    // names no cause, and a failure on this machine is a refusal or a CORS refusal, neither of which a retry fixes.)
    if ((code === 'ECONNREFUSED' || code === NETWORK_ERROR) && policy.refusedIsFinal) return {retry: false}
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
  readonly #authorization?: string
  readonly #maxRetries: number
  readonly #timeout: number
  readonly #totalTimeout?: number
  /** baseUrl is this machine and `loopbackRefused` is not `'retry'`: decided once, every request goes to that host. */
  readonly #refusedIsFinal: boolean
  readonly #initialDelayMs: number
  readonly #maxDelayMs: number
  /** Absent in browsers: theirs is sent, and a header of ours would have to be allowed by every CORS preflight. */
  readonly #userAgent?: string
  readonly #headers: Record<string, string>
  readonly #fetch?: Fetch
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
    if (opts.fetch !== undefined && typeof opts.fetch !== 'function') {
      throw new InvalidRequestError({message: 'fetch must be a function with the call shape of fetch', code: 'invalid_option', param: 'fetch'})
    }
    this.#baseUrl = opts.baseUrl.replace(/\/+$/, '')
    this.#authorization = opts.authorization
    this.#maxRetries = nonNegativeInt(opts.maxRetries, DEFAULT_MAX_RETRIES, 'maxRetries')
    this.#timeout = positiveTimeout(opts.timeout, DEFAULT_TIMEOUT_MS)
    this.#totalTimeout = opts.totalTimeout === undefined ? undefined : positiveTimeout(opts.totalTimeout, 0, 'totalTimeout')
    this.#refusedIsFinal = opts.loopbackRefused !== 'retry' && isLoopbackHost(base.hostname)
    this.#initialDelayMs = nonNegativeInt(opts.retryDelays?.initialMs, DEFAULT_INITIAL_DELAY_MS, 'retryDelays.initialMs')
    this.#maxDelayMs = nonNegativeInt(opts.retryDelays?.maxMs, DEFAULT_MAX_DELAY_MS, 'retryDelays.maxMs')
    const extra = opts.userAgent?.trim()
    this.#userAgent = isBrowser() ? undefined : `payapp-sdk/${SDK_VERSION} ${runtimeName()}${extra ? ` ${extra}` : ''}`
    this.#headers = lowerKeys(opts.headers)
    this.#fetch = opts.fetch
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
    // Looked up per call, so a fetch replaced after the client was made (instrumentation, test doubles) is used.
    const fetch = this.#fetch ?? (globalThis.fetch as Fetch | undefined)
    if (typeof fetch !== 'function') {
      throw new InvalidRequestError({message: 'this runtime has no global fetch: pass one as the fetch option', code: 'invalid_option', param: 'fetch'})
    }
    const maxRetries = nonNegativeInt(req.maxRetries, this.#maxRetries, 'maxRetries')
    const timeout = positiveTimeout(req.timeout, this.#timeout)
    const totalTimeout = req.totalTimeout === undefined ? this.#totalTimeout : positiveTimeout(req.totalTimeout, 0, 'totalTimeout')
    const deadline = totalTimeout === undefined ? Infinity : monotonicMs() + totalTimeout

    const url = new URL(this.#baseUrl + req.path)
    for (const [name, value] of Object.entries(req.query ?? {})) {
      for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) url.searchParams.append(name, String(one))
    }
    const displayUrl = `${url.origin}${url.pathname}`
    // Only a request hook reads it: without one, redacting would be a URLSearchParams per call for nothing.
    const displayQuery = this.#onRequest ? redactQuery(url.searchParams) : ''

    // Serialised once so every retry sends identical bytes (the server fingerprints the body per key).
    const payload = req.form !== undefined ? await encodeForm(req.form) : req.body === undefined ? undefined : {bytes: JSON.stringify(req.body), type: 'application/json'}

    const callHeaders = lowerKeys(req.headers)
    const headers: Record<string, string> = {
      accept: 'application/json',
      ...this.#headers,
      ...(this.#userAgent === undefined ? {} : {'user-agent': this.#userAgent}),
      ...(this.#authorization === undefined ? {} : {authorization: this.#authorization}),
      ...(payload ? {'content-type': payload.type} : {}),
      ...callHeaders,
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
    const href = url.href
    for (let attempt = 1; ; attempt++) {
      if (req.signal?.aborted) throw aborted(req.method, displayUrl, req.signal)
      if (this.#onRequest) {
        this.#emit(this.#onRequest, {method: req.method, url: displayUrl, ...(displayQuery ? {query: displayQuery} : {}), attempt, maxAttempts, headers: redactHeaders(headers), idempotencyKey})
      }

      const started = monotonicMs()
      // The last attempt before the deadline gets only the time that is left.
      const attemptTimeout = Math.max(1, Math.min(timeout, Math.round(deadline - started)))
      let outcome: Outcome
      try {
        const res = await send(fetch, href, req.method, headers, payload?.bytes, attemptTimeout, req.signal)
        outcome = {kind: 'response', status: res.status, headers: res.headers, text: res.text, ...parseBody(res.text)}
      } catch (err) {
        if (req.signal?.aborted) throw aborted(req.method, displayUrl, req.signal, err)
        if (!(err instanceof Error)) throw err
        outcome = {kind: 'error', error: err}
      }
      const elapsedMs = Math.round(monotonicMs() - started)
      const requestId = outcome.kind === 'response' ? headerValue(outcome.headers['x-request-id']) : undefined

      let decision = retryDecision(outcome, attempt - 1, policy)
      const delayMs = decision.retry ? (decision.retryAfterMs ?? this.#backoff(attempt)) : 0
      // A wait that ends past the total time bound cannot lead to an answer in time: report the failure now.
      if (decision.retry && monotonicMs() + delayMs >= deadline) decision = {retry: false}
      if (this.#onResponse) this.#emit(this.#onResponse, {
        method: req.method,
        url: displayUrl,
        attempt,
        maxAttempts,
        status: outcome.kind === 'response' ? outcome.status : undefined,
        requestId,
        headers: outcome.kind === 'response' ? outcome.headers : undefined,
        elapsedMs,
        errorCode: outcome.kind === 'error' ? (outcome.error.code ?? outcome.error.name) : undefined,
        retry: decision.retry ? {delayMs, reason: decision.reason} : undefined,
      })

      if (decision.retry) {
        await this.#wait(delayMs, req.signal)
        continue
      }
      if (outcome.kind === 'error') throw connectionError(outcome.error, req.method, displayUrl, attempt, attemptTimeout)
      // 0 is a browser's opaque answer to a redirect (never followed: it could replay a POST or carry the key away).
      if (outcome.status >= 300 || outcome.status < 200) throw errorFromResponse(outcome.status, outcome.body, outcome.headers)
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
    // Ends early when the caller aborts; the loop's abort check then reports it.
    await new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve()
      const done = () => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', done)
        resolve()
      }
      const timer = setTimeout(done, ms)
      signal?.addEventListener('abort', done, {once: true})
    })
  }

  /** A throwing logging hook must not turn a completed payment call into a failure. */
  #emit<E>(hook: ((e: E) => void) | undefined, event: E): void {
    if (!hook) return
    try {
      hook(event)
    } catch (err) {
      warn(`payapp transport hook threw: ${err instanceof Error ? err.message : String(err)}`)
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

/** The multipart encoding of `form` (boundary included), as fetch would send it; once per call, so retries send identical bytes. */
async function encodeForm(form: FormData): Promise<{bytes: Uint8Array<ArrayBuffer>; type: string}> {
  const encoded = new Response(form)
  return {bytes: new Uint8Array(await encoded.arrayBuffer()), type: encoded.headers.get('content-type') ?? 'multipart/form-data'}
}

/**
 * One attempt: a fetch, the whole response read as text (fetch decompresses it). Never follows a redirect:
 * an API does not send one, and following it could replay a POST or carry the token to another host.
 * `timeoutMs` bounds the attempt from start to the last byte of the body.
 */
async function send(
  fetch: Fetch,
  url: string,
  method: HttpMethod,
  headers: Record<string, string>,
  body: string | Uint8Array<ArrayBuffer> | undefined,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<{status: number; headers: ResponseHeaders; text: string}> {
  const controller = new AbortController()
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    controller.abort()
  }, timeoutMs)
  const onAbort = () => controller.abort(signal?.reason)
  if (signal?.aborted) onAbort()
  else signal?.addEventListener('abort', onAbort, {once: true})
  try {
    const res = await fetch(url, {method, headers, body, signal: controller.signal, redirect: 'manual'})
    const text = await res.text()
    const out: ResponseHeaders = {}
    res.headers.forEach((value, name) => {
      out[name] = value
    })
    return {status: res.status, headers: out, text}
  } catch (err) {
    if (timedOut) throw Object.assign(new Error(`timed out after ${timeoutMs} ms`), {code: 'ETIMEDOUT', timedOut: true, cause: err})
    const code = failureCode(err)
    const message = err instanceof Error ? err.message : String(err)
    throw Object.assign(new Error(message, {cause: err}), {code})
  } finally {
    clearTimeout(timer)
    signal?.removeEventListener('abort', onAbort)
  }
}
