/**
 * Webhook signatures: `Service-Signature: t=<unix>,v1=<hex>`, hex = HMAC-SHA256(secret, `${t}.${rawBody}`).
 * Verification works on the exact bytes received; several `v1` values and several secrets are accepted
 * so a secret can be rotated without dropping events.
 */
import {createHmac, timingSafeEqual} from 'node:crypto'

import {SignatureVerificationError} from './errors.js'

/** The spec's event envelope. */
export interface WebhookEvent {
  id: string
  object: 'event'
  type: string
  livemode: boolean
  created: number
  data: {object: Record<string, unknown>}
}

export interface VerifyWebhookOptions {
  /** Largest allowed distance, past or future, between the signed timestamp and now. Default 300. */
  toleranceSeconds?: number
  /** Current time in unix seconds (for tests). */
  now?: number
}

export const SIGNATURE_HEADER = 'Service-Signature'
export const DEFAULT_TOLERANCE_SECONDS = 300

const NOT_RAW_HINT =
  "pass the raw request body (string or Buffer), not the parsed JSON — e.g. express.raw({type: 'application/json'})"

function fail(code: string, message: string): SignatureVerificationError {
  return new SignatureVerificationError({message, code, type: 'signature_verification_error'})
}

/** Hex HMAC-SHA256 of `${timestamp}.${body}`; the body is hashed as given, bytes untouched. */
export function computeSignature(secret: string, timestamp: number, body: string | Buffer): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')
}

/** Signs a payload the way the platform does; used by tests and by the gateway's webhook delivery. */
export function signWebhookPayload(
  payload: string | Buffer | object,
  secret: string,
  opts: {timestamp?: number} = {},
): {header: string; body: string; timestamp: number} {
  const body =
    typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : JSON.stringify(payload)
  const timestamp = opts.timestamp ?? Math.floor(Date.now() / 1000)
  return {header: `t=${timestamp},v1=${computeSignature(secret, timestamp, body)}`, body, timestamp}
}

function parseHeader(header: string | string[] | undefined): {timestamp: number; signatures: Buffer[]} {
  const value = (Array.isArray(header) ? header.join(',') : header)?.trim()
  if (!value) throw fail('signature_missing', `No ${SIGNATURE_HEADER} header on the request`)
  let timestamp: number | undefined
  const signatures: Buffer[] = []
  for (const part of value.split(',')) {
    const eq = part.indexOf('=')
    if (eq < 0) continue
    const key = part.slice(0, eq).trim()
    const val = part.slice(eq + 1).trim()
    if (key === 't' && /^\d{1,12}$/.test(val)) timestamp = Number(val)
    // Other schemes (and garbled v1 values) are skipped, as a rotation may add ones we do not know.
    else if (key === 'v1' && /^[0-9a-f]{64}$/i.test(val)) signatures.push(Buffer.from(val, 'hex'))
  }
  if (timestamp === undefined || signatures.length === 0) {
    throw fail(
      'signature_malformed',
      `${SIGNATURE_HEADER} header is not of the form t=<unix seconds>,v1=<64 hex chars>`,
    )
  }
  return {timestamp, signatures}
}

function rawBytes(rawBody: unknown): Buffer {
  if (typeof rawBody === 'string') return Buffer.from(rawBody, 'utf8')
  if (rawBody instanceof Uint8Array) return Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength)
  const got = rawBody === null ? 'null' : rawBody === undefined ? 'undefined' : `a ${typeof rawBody}`
  throw fail('payload_not_raw', `Webhook payload is ${got}: ${NOT_RAW_HINT}`)
}

/**
 * Verifies a webhook and returns its event. Throws `SignatureVerificationError` (answer 400) with
 * `code` one of signature_missing, signature_malformed, signature_mismatch,
 * timestamp_outside_tolerance, payload_not_raw, payload_invalid_json.
 */
export function verifyWebhook(
  rawBody: string | Buffer,
  signatureHeader: string | string[] | undefined,
  secretOrSecrets: string | string[],
  opts: VerifyWebhookOptions = {},
): WebhookEvent {
  const body = rawBytes(rawBody)
  const secrets = (Array.isArray(secretOrSecrets) ? secretOrSecrets : [secretOrSecrets]).filter(
    (s) => typeof s === 'string' && s !== '',
  )
  // A TypeError, not a verification error: a missing secret is a server misconfiguration, not a bad request.
  if (secrets.length === 0) throw new TypeError('verifyWebhook: no signing secret given')

  const {timestamp, signatures} = parseHeader(signatureHeader)
  const matched = secrets.some((secret) => {
    const expected = Buffer.from(computeSignature(secret, timestamp, body), 'hex')
    return signatures.some((candidate) => timingSafeEqual(candidate, expected))
  })
  if (!matched) {
    throw fail(
      'signature_mismatch',
      'No v1 signature matches the payload for the given secret(s); check the signing secret, and that the ' +
        'body is the raw bytes received (re-serialised JSON never matches)',
    )
  }

  const tolerance = opts.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS
  const now = opts.now ?? Math.floor(Date.now() / 1000)
  // Both directions: an old timestamp is a replay, a far-future one would stay replayable for long.
  if (Math.abs(now - timestamp) > tolerance) {
    throw fail(
      'timestamp_outside_tolerance',
      `Signature timestamp ${timestamp} is ${Math.abs(now - timestamp)} s from now (tolerance ${tolerance} s)`,
    )
  }

  let event: unknown
  try {
    event = JSON.parse(body.toString('utf8'))
  } catch (err) {
    throw new SignatureVerificationError({
      message: 'Webhook payload is signed correctly but is not valid JSON',
      code: 'payload_invalid_json',
      type: 'signature_verification_error',
      cause: err,
    })
  }
  if (event === null || typeof event !== 'object' || Array.isArray(event)) {
    throw fail('payload_invalid_json', 'Webhook payload is not a JSON object')
  }
  return event as WebhookEvent
}

/**
 * Whether an endpoint's event pattern selects an event type: `*` takes every type, `checkout.session.*`
 * every type under that prefix, anything else one type. The gateway selects deliveries with it.
 */
export function matchesEventType(pattern: string, type: string): boolean {
  return pattern === type || (pattern.endsWith('*') && type.startsWith(pattern.slice(0, -1)))
}
