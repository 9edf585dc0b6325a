/**
 * Webhook verification on Web Crypto, for runtimes without `node:crypto` or `Buffer` (edge functions,
 * Deno, workers). Imports nothing from Node: `@payapp/sdk/webhooks` (webhooks-edge.ts) loads only this
 * and errors.ts. The rules (header format, several v1 values and secrets, tolerance both ways, raw
 * bytes only) are the ones webhooks.ts applies synchronously on Node; both share the parsing below.
 */
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

export const NOT_RAW_HINT =
  "pass the raw request body (string or Buffer), not the parsed JSON — e.g. express.raw({type: 'application/json'}) or await request.text()"

export function fail(code: string, message: string, cause?: unknown): SignatureVerificationError {
  return new SignatureVerificationError({message, code, type: 'signature_verification_error', cause})
}

export function notRaw(rawBody: unknown): SignatureVerificationError {
  const type = typeof rawBody
  const got = rawBody === null ? 'null' : type === 'undefined' ? 'undefined' : `${type === 'object' ? 'an' : 'a'} ${type}`
  return fail('payload_not_raw', `Webhook payload is ${got}: ${NOT_RAW_HINT}`)
}

/** The non-empty secrets; none is a TypeError: a server misconfiguration, not a bad request. */
export function secretList(secretOrSecrets: string | string[], fn: string): string[] {
  const secrets = (Array.isArray(secretOrSecrets) ? secretOrSecrets : [secretOrSecrets]).filter((s) => typeof s === 'string' && s !== '')
  if (secrets.length === 0) throw new TypeError(`${fn}: no signing secret given`)
  return secrets
}

/** `t=<unix>,v1=<hex>[,v1=<hex>…]`: the timestamp and the v1 signatures as lowercase hex. */
export function parseSignatureHeader(header: string | string[] | null | undefined): {timestamp: number; signatures: string[]} {
  const value = (Array.isArray(header) ? header.join(',') : header)?.trim()
  if (!value) throw fail('signature_missing', `No ${SIGNATURE_HEADER} header on the request`)
  let timestamp: number | undefined
  const signatures: string[] = []
  for (const part of value.split(',')) {
    const eq = part.indexOf('=')
    if (eq < 0) continue
    const key = part.slice(0, eq).trim()
    const val = part.slice(eq + 1).trim()
    if (key === 't' && /^\d{1,12}$/.test(val)) timestamp = Number(val)
    // Other schemes (and garbled v1 values) are skipped, as a rotation may add ones we do not know.
    else if (key === 'v1' && /^[0-9a-f]{64}$/i.test(val)) signatures.push(val.toLowerCase())
  }
  if (timestamp === undefined || signatures.length === 0) {
    throw fail('signature_malformed', `${SIGNATURE_HEADER} header is not of the form t=<unix seconds>,v1=<64 hex chars>`)
  }
  return {timestamp, signatures}
}

export const mismatch = () =>
  fail(
    'signature_mismatch',
    'No v1 signature matches the payload for the given secret(s); check the signing secret, and that the ' +
      'body is the raw bytes received (re-serialised JSON never matches)',
  )

/** Both directions: an old timestamp is a replay, a far-future one would stay replayable for long. */
export function checkTimestamp(timestamp: number, opts: VerifyWebhookOptions): void {
  const tolerance = opts.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS
  const now = opts.now ?? Math.floor(Date.now() / 1000)
  if (Math.abs(now - timestamp) > tolerance) {
    throw fail('timestamp_outside_tolerance', `Signature timestamp ${timestamp} is ${Math.abs(now - timestamp)} s from now (tolerance ${tolerance} s)`)
  }
}

export function parseEvent(text: string): WebhookEvent {
  let event: unknown
  try {
    event = JSON.parse(text)
  } catch (err) {
    throw fail('payload_invalid_json', 'Webhook payload is signed correctly but is not valid JSON', err)
  }
  if (event === null || typeof event !== 'object' || Array.isArray(event)) throw fail('payload_invalid_json', 'Webhook payload is not a JSON object')
  return event as WebhookEvent
}

const encoder = new TextEncoder()

export function hexBytes(hex: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(hex.length / 2)
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16)
  return bytes
}

/** The part of Web Crypto used here, typed without the DOM library or @types/node. */
interface HmacSubtle {
  importKey(format: 'raw', key: Uint8Array<ArrayBuffer>, algorithm: {name: 'HMAC'; hash: 'SHA-256'}, extractable: false, usages: ['verify']): Promise<unknown>
  verify(algorithm: 'HMAC', key: unknown, signature: Uint8Array<ArrayBuffer>, data: Uint8Array<ArrayBuffer>): Promise<boolean>
}

function subtleCrypto(): HmacSubtle {
  const subtle = (globalThis as {crypto?: {subtle?: HmacSubtle}}).crypto?.subtle
  if (!subtle) throw new TypeError('verifyWebhookAsync: this runtime has no Web Crypto (globalThis.crypto.subtle)')
  return subtle
}

function webBytes(rawBody: unknown): Uint8Array<ArrayBuffer> {
  if (typeof rawBody === 'string') return encoder.encode(rawBody)
  if (rawBody instanceof ArrayBuffer) return new Uint8Array(rawBody)
  // A copy: Web Crypto wants bytes over a plain ArrayBuffer, and a Node Buffer may sit in a shared pool.
  if (rawBody instanceof Uint8Array) return new Uint8Array(rawBody)
  throw notRaw(rawBody)
}

/**
 * `verifyWebhook` on Web Crypto: verifies a webhook and resolves to its event, or rejects with the same
 * `SignatureVerificationError` codes. `rawBody` is the text or bytes received (e.g. `await request.text()`).
 */
export async function verifyWebhookAsync(
  rawBody: string | Uint8Array | ArrayBuffer,
  signatureHeader: string | string[] | null | undefined,
  secretOrSecrets: string | string[],
  opts: VerifyWebhookOptions = {},
): Promise<WebhookEvent> {
  const body = webBytes(rawBody)
  const secrets = secretList(secretOrSecrets, 'verifyWebhookAsync')
  const {timestamp, signatures} = parseSignatureHeader(signatureHeader)
  const subtle = subtleCrypto()

  const prefix = encoder.encode(`${timestamp}.`)
  const signed = new Uint8Array(prefix.length + body.length)
  signed.set(prefix)
  signed.set(body, prefix.length)
  let matched = false
  for (const secret of secrets) {
    const key = await subtle.importKey('raw', encoder.encode(secret), {name: 'HMAC', hash: 'SHA-256'}, false, ['verify'])
    // subtle.verify compares in constant time.
    for (const signature of signatures) if (await subtle.verify('HMAC', key, hexBytes(signature), signed)) matched = true
  }
  if (!matched) throw mismatch()
  checkTimestamp(timestamp, opts)
  return parseEvent(new TextDecoder().decode(body))
}
