/**
 * The app: a plain node:http server, so every step is visible.
 *   POST /webhooks   platform events: signature checked on the raw body, each event id processed once
 *   GET  /catalogue  the store's active products with their default price, read through the App API
 *   GET  /events     the events processed most recently (newest first)
 */
import {createServer} from 'node:http'

import {AppClient, PayappError, SIGNATURE_HEADER, SignatureVerificationError, verifyWebhook} from 'payapp/sdk'

// Webhook bodies above this are refused without being buffered.
const MAX_BODY_BYTES = 1024 * 1024
// The platform redelivers an event a few times (up to seven attempts), not forever; older ids can be forgotten.
const MAX_REMEMBERED_EVENTS = 10_000
const MAX_LISTED_EVENTS = 100

/**
 * @param {object} options
 * @param {string} options.token installation access token (PAYAPP_TOKEN)
 * @param {string} options.baseUrl platform base URL, e.g. http://127.0.0.1:4242
 * @param {string | string[]} options.webhookSecret signing secret; several while one is being rotated
 * @param {(event: import('payapp/sdk').WebhookEvent) => unknown} [options.onEvent] your handler: called once per event id
 * @returns {import('node:http').Server}
 */
export function createApp({token, baseUrl, webhookSecret, onEvent = () => {}}) {
  const secrets = [webhookSecret].flat().filter(Boolean)
  // Fail at start-up, not on the first webhook.
  if (secrets.length === 0) throw new TypeError('createApp: webhookSecret is required')
  const client = new AppClient({token, baseUrl})

  // In memory, so a restart forgets: use a unique key in your database when processing must survive restarts.
  const processed = new Map()

  async function receiveWebhook(req, res) {
    const raw = await readRawBody(req, MAX_BODY_BYTES)
    if (raw === null) return send(res, 413, {error: {code: 'payload_too_large', message: `Webhook bodies are limited to ${MAX_BODY_BYTES} bytes`}})

    let event
    try {
      // The raw bytes, never re-serialised JSON: the signature covers exactly what was sent.
      event = verifyWebhook(raw, req.headers[SIGNATURE_HEADER.toLowerCase()], secrets)
    } catch (error) {
      if (error instanceof SignatureVerificationError) return send(res, 400, {error: {code: error.code, message: error.message}})
      throw error
    }
    if (typeof event.id !== 'string' || typeof event.type !== 'string') {
      return send(res, 400, {error: {code: 'invalid_event', message: 'The event has no id or type'}})
    }

    // A redelivery is acknowledged (so the platform stops retrying) but not processed again.
    if (processed.has(event.id)) return send(res, 200, {received: true, duplicate: true})
    processed.set(event.id, {id: event.id, type: event.type, created: event.created, received: Math.floor(Date.now() / 1000)})
    if (processed.size > MAX_REMEMBERED_EVENTS) processed.delete(processed.keys().next().value)
    try {
      await onEvent(event)
    } catch (error) {
      // Forget it and answer 500, so the platform's retry gets another chance.
      processed.delete(event.id)
      throw error
    }
    send(res, 200, {received: true})
  }

  async function catalogue(res) {
    const products = []
    for await (const product of client.products.list({limit: 100})) {
      if (!product.active) continue
      products.push({id: product.id, name: product.name, default_price: await defaultPrice(product)})
    }
    send(res, 200, {object: 'list', data: products})
  }

  // The App API's catalogue carries price ids only, so the default price is looked up among the product's prices.
  async function defaultPrice(product) {
    if (!product.default_price) return null
    for await (const price of client.products.prices.list(product.id, {limit: 100})) {
      if (price.id === product.default_price) {
        return {id: price.id, unit_amount: price.unit_amount, currency: price.currency, display: formatMoney(price.unit_amount, price.currency)}
      }
    }
    return null
  }

  function recentEvents(res) {
    const data = [...processed.values()].reverse().slice(0, MAX_LISTED_EVENTS)
    send(res, 200, {object: 'list', data})
  }

  const routes = {
    '/webhooks': {POST: receiveWebhook},
    '/catalogue': {GET: (_req, res) => catalogue(res)},
    '/events': {GET: (_req, res) => recentEvents(res)},
  }

  return createServer((req, res) => {
    const {pathname} = new URL(req.url ?? '/', 'http://localhost')
    const route = routes[pathname]
    const handler = route?.[req.method ?? 'GET']
    if (!route) return send(res, 404, {error: {code: 'not_found', message: `No route ${pathname}`}})
    if (!handler) return send(res, 405, {error: {code: 'method_not_allowed', message: `Use ${Object.keys(route).join(', ')}`}}, {allow: Object.keys(route).join(', ')})
    Promise.resolve(handler(req, res)).catch((error) => {
      if (error instanceof PayappError) {
        // The platform answered with an error (bad token, missing scope, outage): say which, with its request id.
        return send(res, 502, {error: {code: error.code ?? error.type ?? 'platform_error', message: error.message, request_id: error.requestId ?? null}})
      }
      console.error(error)
      if (res.headersSent) res.destroy()
      else send(res, 500, {error: {code: 'internal_error', message: 'Internal error'}})
    })
  })
}

/** The body as received, or null when it is larger than `limit` (the rest is drained, not kept). */
function readRawBody(req, limit) {
  return new Promise((resolve, reject) => {
    const chunks = []
    let size = 0
    req.on('data', (chunk) => {
      size += chunk.length
      if (size <= limit) chunks.push(chunk)
    })
    req.on('end', () => resolve(size > limit ? null : Buffer.concat(chunks)))
    req.on('error', reject)
  })
}

function send(res, status, body, headers = {}) {
  const json = JSON.stringify(body)
  res.writeHead(status, {'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json), ...headers})
  res.end(json)
}

/** Minor units to a display string: 1250 eur → "€12.50" (the currency decides how many decimals). */
export function formatMoney(minor, currency) {
  const format = new Intl.NumberFormat('en', {style: 'currency', currency: currency.toUpperCase()})
  return format.format(minor / 10 ** format.resolvedOptions().maximumFractionDigits)
}
