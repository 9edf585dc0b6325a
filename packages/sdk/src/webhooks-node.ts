/**
 * Webhook signatures: `Service-Signature: t=<unix>,v1=<hex>`, hex = HMAC-SHA256(secret, `${t}.${rawBody}`).
 * Verification works on the exact bytes received; several `v1` values and several secrets are accepted
 * so a secret can be rotated without dropping events.
 *
 * The synchronous forms need `node:crypto` (Node, Bun, Deno, workerd with nodejs_compat), loaded at the
 * first call rather than imported, so the SDK's main entry loads in browsers and edge runtimes too;
 * `verifyWebhookAsync` (Web Crypto) works everywhere.
 */
import {nodeBuiltin} from './runtime.js'
import {checkTimestamp, hexBytes, mismatch, notRaw, parseEvent, parseSignatureHeader, secretList, type VerifyWebhookOptions, type WebhookEvent} from './webhooks-web.js'

export {
  verifyWebhookAsync,
  SIGNATURE_HEADER,
  DEFAULT_TOLERANCE_SECONDS,
  type WebhookEvent,
  type VerifyWebhookOptions,
} from './webhooks-web.js'

/**
 * The gateway's delivery number (as in its delivery log): the same on every attempt of one delivery, another
 * on a duplicate, so a relay can tell a redelivery it already forwarded from a second delivery of an event.
 */
export const DELIVERY_ID_HEADER = 'Service-Delivery-Id'

interface NodeCrypto {
  createHmac(algorithm: 'sha256', key: string): {update(data: string | Uint8Array): {update(data: string | Uint8Array): {digest(encoding: 'hex'): string}}}
  timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean
}

const nodeCrypto = (feature: string) => nodeBuiltin<NodeCrypto>('node:crypto', `${feature} (use verifyWebhookAsync where Node's crypto is missing)`)

/** Hex HMAC-SHA256 of `${timestamp}.${body}`; the body is hashed as given, bytes untouched. */
export function computeSignature(secret: string, timestamp: number, body: string | Uint8Array): string {
  return nodeCrypto('computeSignature').createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')
}

/**
 * Signs a payload the way the platform does; used by tests and by the gateway's webhook delivery. With
 * several secrets (during a rotation, newest first) the header carries one `v1` per secret, in that order.
 */
export function signWebhookPayload(
  payload: string | Uint8Array | object,
  secretOrSecrets: string | readonly string[],
  opts: {timestamp?: number} = {},
): {header: string; body: string; timestamp: number} {
  const body = typeof payload === 'string' ? payload : payload instanceof Uint8Array ? new TextDecoder().decode(payload) : JSON.stringify(payload)
  const timestamp = opts.timestamp ?? Math.floor(Date.now() / 1000)
  const secrets = typeof secretOrSecrets === 'string' ? [secretOrSecrets] : secretOrSecrets
  return {header: [`t=${timestamp}`, ...secrets.map((secret) => `v1=${computeSignature(secret, timestamp, body)}`)].join(','), body, timestamp}
}

/**
 * Verifies a webhook and returns its event. Throws `SignatureVerificationError` (answer 400) with
 * `code` one of signature_missing, signature_malformed, signature_mismatch,
 * timestamp_outside_tolerance, payload_not_raw, payload_invalid_json.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  signatureHeader: string | string[] | undefined,
  secretOrSecrets: string | string[],
  opts: VerifyWebhookOptions = {},
): WebhookEvent {
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) throw notRaw(rawBody)
  const secrets = secretList(secretOrSecrets, 'verifyWebhook')
  const {timestamp, signatures} = parseSignatureHeader(signatureHeader)
  const {timingSafeEqual} = nodeCrypto('verifyWebhook')
  const matched = secrets.some((secret) => {
    const expected = hexBytes(computeSignature(secret, timestamp, rawBody))
    return signatures.some((candidate) => timingSafeEqual(hexBytes(candidate), expected))
  })
  if (!matched) throw mismatch()
  checkTimestamp(timestamp, opts)
  return parseEvent(typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody))
}

/**
 * Whether an endpoint's event pattern selects an event type: `*` takes every type, `checkout.session.*`
 * every type under that prefix, anything else one type. The gateway selects deliveries with it.
 */
export function matchesEventType(pattern: string, type: string): boolean {
  return pattern === type || (pattern.endsWith('*') && type.startsWith(pattern.slice(0, -1)))
}
