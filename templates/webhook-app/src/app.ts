/**
 * The webhook receiver: a plain node:http server, so every step is visible.
 *
 *   POST /webhooks  verify the signature on the raw body, record the event durably, answer 200, then
 *                   handle it from the inbox (retried there), so neither a slow nor a failing handler
 *                   can lose an event or make the platform believe it was handled when it was not
 *   GET  /events    the inbox, newest first: each event's status, attempts and last error
 *   GET  /healthz   200 once the inbox is open
 */
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'

import {AppClient, SIGNATURE_HEADER, SignatureVerificationError, verifyWebhook, type WebhookEvent} from 'payapp/sdk'

import {handlerFor, type Actions} from './handlers.js'
import {Inbox} from './inbox.js'

// Webhook bodies above this are refused without being buffered.
const MAX_BODY_BYTES = 1024 * 1024

export interface AppOptions {
  /** Installation access token (PAYAPP_TOKEN): the handlers re-read orders with it. */
  token: string
  /** Platform base URL (PAYAPP_BASE_URL). */
  baseUrl: string
  /** Signing secret(s) (PAYAPP_WEBHOOK_SECRET); two while rotating. */
  webhookSecret: string | string[]
  /** The inbox file (PAYAPP_INBOX), e.g. `.data/inbox.jsonl`. */
  inboxFile: string
  actions: Actions
  /** Waits before retrying a failed handler; after the last one the event is marked dead. */
  retryDelaysMs?: number[]
}

export interface App {
  server: Server
  inbox: Inbox
  /** Resolves once no handler is running or waiting to retry (for tests). */
  idle(): Promise<void>
  /** Stops taking events and retries, lets running handlers finish, closes the inbox. */
  close(): Promise<void>
}

export async function createApp(opts: AppOptions): Promise<App> {
  const secrets = [opts.webhookSecret].flat().filter(Boolean)
  // Fail at start-up, not on the first webhook.
  if (secrets.length === 0) throw new TypeError('createApp: webhookSecret is required')
  const client = new AppClient({token: opts.token, baseUrl: opts.baseUrl})
  const inbox = await Inbox.open(opts.inboxFile)
  const retryDelays = opts.retryDelaysMs ?? [1_000, 5_000, 30_000, 120_000, 600_000]
  const timers = new Set<NodeJS.Timeout>()
  let running = 0
  let closed = false
  let waiters: Array<() => void> = []

  const settleIdle = () => {
    if (running > 0 || timers.size > 0) return
    for (const resolve of waiters) resolve()
    waiters = []
  }

  /** Handles one recorded event; on failure schedules the next try, or marks it dead after the last. */
  async function handle(event: WebhookEvent): Promise<void> {
    running++
    try {
      const handler = handlerFor(event.type)
      await handler?.(event, {app: client, actions: opts.actions})
      await inbox.handled(event.id)
    } catch (error) {
      const attempts = (inbox.get(event.id)?.attempts ?? 0) + 1
      const dead = attempts > retryDelays.length
      // If even this cannot be written, the event is still pending on disk: the next start handles it.
      await inbox.failed(event.id, error instanceof Error ? error.message : String(error), dead).catch((e: unknown) => console.error(e))
      if (!dead && !closed) {
        const timer = setTimeout(() => {
          timers.delete(timer)
          void handle(event)
        }, retryDelays[attempts - 1])
        timers.add(timer)
      }
    } finally {
      running--
      settleIdle()
    }
  }

  async function receiveWebhook(req: IncomingMessage, res: ServerResponse) {
    const raw = await readRawBody(req, MAX_BODY_BYTES)
    if (raw === null) return send(res, 413, {error: {code: 'payload_too_large', message: `Webhook bodies are limited to ${MAX_BODY_BYTES} bytes`}})
    let event: WebhookEvent
    try {
      // The raw bytes, never re-serialised JSON: the signature covers exactly what was sent.
      event = verifyWebhook(raw, req.headers[SIGNATURE_HEADER.toLowerCase()] as string | undefined, secrets)
    } catch (error) {
      if (error instanceof SignatureVerificationError) return send(res, 400, {error: {code: error.code, message: error.message}})
      throw error
    }
    if (typeof event.id !== 'string' || typeof event.type !== 'string') {
      return send(res, 400, {error: {code: 'invalid_event', message: 'The event has no id or type'}})
    }
    // Durably recorded before the answer: a crash after this line loses nothing, and a throw here is a
    // 500 the platform retries. A redelivery of a recorded event is acknowledged and not handled again.
    const fresh = await inbox.record(event)
    send(res, 200, {received: true, ...(fresh ? {} : {duplicate: true})})
    if (fresh) void handle(event)
  }

  function listEvents(res: ServerResponse) {
    const data = inbox.recent(100).map((e) => ({id: e.event.id, type: e.event.type, status: e.status, attempts: e.attempts, last_error: e.last_error, received: e.received}))
    send(res, 200, {object: 'list', data})
  }

  const routes: Record<string, Record<string, (req: IncomingMessage, res: ServerResponse) => unknown>> = {
    '/webhooks': {POST: receiveWebhook},
    '/events': {GET: (_req, res) => listEvents(res)},
    '/healthz': {GET: (_req, res) => send(res, 200, {ok: true})},
  }

  const server = createServer((req, res) => {
    const {pathname} = new URL(req.url ?? '/', 'http://localhost')
    const route = routes[pathname]
    const handler = route?.[req.method ?? 'GET']
    if (!route) return send(res, 404, {error: {code: 'not_found', message: `No route ${pathname}`}})
    if (!handler) return send(res, 405, {error: {code: 'method_not_allowed', message: `Use ${Object.keys(route).join(', ')}`}}, {allow: Object.keys(route).join(', ')})
    Promise.resolve(handler(req, res)).catch((error: unknown) => {
      console.error(error)
      if (res.headersSent) res.destroy()
      else send(res, 500, {error: {code: 'internal_error', message: 'Internal error'}})
    })
  })

  // Events recorded before a crash or restart but never handled: handle them now.
  for (const entry of inbox.pending()) void handle(entry.event)

  return {
    server,
    inbox,
    idle: () => new Promise<void>((resolve) => {
      waiters.push(resolve)
      settleIdle()
    }),
    async close() {
      closed = true
      for (const timer of timers) clearTimeout(timer)
      timers.clear()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      // Handlers already running get 10 s to finish and record their outcome; one still running stays
      // pending in the inbox and is handled again at the next start.
      for (let waited = 0; running > 0 && waited < 10_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20))
      await inbox.close()
    },
  }
}

/** The body as received, or null when it is larger than `limit` (the rest is drained, not kept). */
function readRawBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size <= limit) chunks.push(chunk)
    })
    req.on('end', () => resolve(size > limit ? null : Buffer.concat(chunks)))
    req.on('error', reject)
  })
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const json = JSON.stringify(body)
  res.writeHead(status, {'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json), ...headers})
  res.end(json)
}
