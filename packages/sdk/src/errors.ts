/**
 * Typed errors of the platform's API. One base class carries every field of the spec's error envelope
 * (`{error: {type, code, param, message, request_id}}`); one subclass per family; the mapping from a
 * response to a class lives in one function, `errorFromResponse`.
 */

export type ErrorHeaders = Record<string, string | string[] | undefined>

export interface PayappErrorFields {
  message: string
  statusCode?: number
  type?: string
  code?: string
  param?: string
  requestId?: string
  headers?: ErrorHeaders
  /** The parsed response body, when there was one. */
  raw?: unknown
  cause?: unknown
}

export class PayappError extends Error {
  readonly statusCode?: number
  /** The family, e.g. `invalid_request`, `authentication_error`, `insufficient_scope`. */
  readonly type?: string
  /** Machine-readable code, e.g. `out_of_stock`, `variant_exists`. */
  readonly code?: string
  /** The offending request field, e.g. `features[3]`. */
  readonly param?: string
  readonly requestId?: string
  readonly headers: ErrorHeaders
  readonly raw?: unknown

  constructor(fields: PayappErrorFields) {
    super(fields.message, fields.cause === undefined ? undefined : {cause: fields.cause})
    // Each class names itself in a literal: a minifier renames classes, so new.target.name would say 'si' in a browser bundle.
    this.name = 'PayappError'
    this.statusCode = fields.statusCode
    this.type = fields.type
    this.code = fields.code
    this.param = fields.param
    this.requestId = fields.requestId
    this.headers = fields.headers ?? {}
    this.raw = fields.raw
  }

  /** `code: message (request_id)`, the one-line form the CLI prints. */
  override toString(): string {
    const head = this.code ?? this.type ?? this.name
    return `${head}: ${this.message}${this.requestId ? ` (${this.requestId})` : ''}`
  }

  toJSON(): Record<string, unknown> {
    return {
      type: this.type,
      code: this.code,
      param: this.param,
      message: this.message,
      request_id: this.requestId,
      status: this.statusCode,
    }
  }
}

/** 400, 405, 410, 413, 422: the request itself is wrong; retrying it unchanged cannot help. */
export class InvalidRequestError extends PayappError {
  override name = 'InvalidRequestError'
}
/** 401: missing, malformed, revoked or wrong-mode credential. */
export class AuthenticationError extends PayappError {
  override name = 'AuthenticationError'
}
/** 402: payment declined or plan limit reached. */
export class PaymentRequiredError extends PayappError {
  override name = 'PaymentRequiredError'
}
/** 403: the credential lacks the scope (type `insufficient_scope`) or the origin is not allowed. */
export class PermissionError extends PayappError {
  override name = 'PermissionError'
}
/** 404: no such object for this credential's merchant and environment. */
export class NotFoundError extends PayappError {
  override name = 'NotFoundError'
}
/** 409: a state conflict such as `out_of_stock` or `variant_exists`. */
export class ConflictError extends PayappError {
  override name = 'ConflictError'
}
/** 409 with type `idempotency_error`: the key was reused with another body, or is still in flight. */
export class IdempotencyError extends ConflictError {
  override name = 'IdempotencyError'
}
/** 429 (and 503 `rate_limiter_unavailable`): slow down; `retryAfter` says for how long. */
export class RateLimitError extends PayappError {
  override name = 'RateLimitError'
  /** Seconds to wait, from the `Retry-After` header (the spec's default is 1). */
  get retryAfter(): number {
    return parseRetryAfter(this.headers['retry-after']) ?? 1
  }
}
/** 5xx: the service failed; safe to retry with the same idempotency key. */
export class APIError extends PayappError {
  override name = 'APIError'
}
/** No HTTP response at all: refused, reset, timed out or DNS failure. */
export class ConnectionError extends PayappError {
  override name = 'ConnectionError'
}
/** A response arrived but its body does not match the expected shape. */
export class ResponseValidationError extends PayappError {
  override name = 'ResponseValidationError'
}
/** A webhook signature, timestamp or payload failed verification. */
export class SignatureVerificationError extends PayappError {
  override name = 'SignatureVerificationError'
}

/** The first value of a header that may repeat. */
export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}

/** Seconds from a `Retry-After` value (delta-seconds or an HTTP date); undefined when absent or bad. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const raw = headerValue(value)?.trim()
  if (!raw) return undefined
  if (/^\d+(\.\d+)?$/.test(raw)) return Number(raw)
  const date = Date.parse(raw)
  if (Number.isNaN(date)) return undefined
  return Math.max(0, (date - now) / 1000)
}

interface Envelope {
  error?: {type?: unknown; code?: unknown; param?: unknown; message?: unknown; request_id?: unknown}
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)

/**
 * A body that is not the platform's envelope (a proxy's 502 page, another service's JSON) as a message:
 * the status and the body's first 200 characters, an HTML page's tags dropped, whitespace folded.
 */
function messageOf(statusCode: number, body: unknown): string {
  const text = typeof body === 'string' ? body : body === undefined ? '' : JSON.stringify(body)
  const plain = /^\s*</.test(text) ? text.replace(/<(script|style)\b[\s\S]*?<\/\1>/gi, ' ').replace(/<[^>]*>/g, ' ') : text
  const start = plain.replace(/\s+/g, ' ').trim()
  if (start === '') return `HTTP ${statusCode} with an empty body`
  return `HTTP ${statusCode}: ${start.length > 200 ? `${start.slice(0, 200)}…` : start}`
}

/** The one mapping from an HTTP error response to an error class. */
export function errorFromResponse(statusCode: number, body: unknown, headers: ErrorHeaders = {}): PayappError {
  const envelope = (body && typeof body === 'object' ? (body as Envelope).error : undefined) ?? {}
  const type = str(envelope.type)
  const fields: PayappErrorFields = {
    statusCode,
    type,
    code: str(envelope.code),
    param: str(envelope.param),
    message: str(envelope.message) ?? messageOf(statusCode, body),
    requestId: str(envelope.request_id) ?? headerValue(headers['x-request-id']),
    headers,
    raw: body,
  }
  if (statusCode === 429 || (statusCode === 503 && type === 'rate_limit_error')) return new RateLimitError(fields)
  if (statusCode === 401) return new AuthenticationError(fields)
  if (statusCode === 402) return new PaymentRequiredError(fields)
  if (statusCode === 403) return new PermissionError(fields)
  if (statusCode === 404) return new NotFoundError(fields)
  if (statusCode === 409) return type === 'idempotency_error' ? new IdempotencyError(fields) : new ConflictError(fields)
  if (statusCode >= 500) return new APIError(fields)
  if (statusCode >= 400) return new InvalidRequestError(fields)
  return new PayappError(fields)
}
