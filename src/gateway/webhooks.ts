/**
 * Webhooks (spec: Events, Authentication): endpoints per merchant and mode that select event types, an
 * outbox that `Platform.emit` fills in the event's own transaction, and a worker that POSTs due
 * deliveries signed with the endpoint's secret, retrying with backoff on the gateway clock.
 *
 *   POST   /_admin/webhook_endpoints                 {merchant, env, url, events?, secret?} → 201, secret in full
 *   GET    /_admin/webhook_endpoints?merchant=…      list, secrets masked
 *   DELETE /_admin/webhook_endpoints/{id}            stops its deliveries
 *   GET    /_admin/webhook_endpoints/{id}/deliveries the attempt log
 */
import type {FastifyRequest} from 'fastify'

import {adminWebhookEndpointCreate} from '../sdk/schemas/admin.js'
import {SDK_VERSION} from '../sdk/transport.js'
import {SIGNATURE_HEADER, signWebhookPayload} from '../sdk/webhooks.js'
import {adminBody, requireMerchant, type AdminRouteDef} from './admin.js'
import type {Env, Scope, Storage} from './db.js'
import {invalid, notFound} from './errors.js'
import {newId, randomText} from './ids.js'
import type {EventDoc, Platform} from './platform.js'

/** The spec's limit: the first attempt and six retries. */
export const MAX_ATTEMPTS = 7
/** Seconds (gateway clock) to wait after attempts 1–6 before the next one. */
export const BACKOFF_SECONDS = [1, 5, 30, 120, 600, 1800] as const
export const DELIVERY_TIMEOUT_MS = 15_000
const POLL_MS = 200
const BATCH = 100

export interface WebhookEndpointDoc {
  id: string
  object: 'webhook_endpoint'
  merchant: string
  env: Env
  url: string
  events: string[]
  secret: string
  created: number
}

interface EndpointRow {
  id: string
  merchant: string
  env: Env
  url: string
  events: string
  secret: string
  created: number
}

interface DeliveryRow {
  id: number
  endpoint: string
  event_id: string
  event_type: string
  body: string
  attempts: number
}

interface AttemptRow {
  delivery: number
  event_id: string
  event_type: string
  attempt: number
  attempted: number
  status: number | null
  error: string | null
  next_attempt: number | null
  delivered: number | null
}

/** `*` takes every type, `checkout.session.*` every type under that prefix, anything else one type. */
export function selects(patterns: readonly string[], type: string): boolean {
  return patterns.some((p) => p === '*' || p === type || (p.endsWith('.*') && type.startsWith(p.slice(0, -1))))
}

const view = (row: EndpointRow): WebhookEndpointDoc => ({
  id: row.id,
  object: 'webhook_endpoint',
  merchant: row.merchant,
  env: row.env,
  url: row.url,
  events: JSON.parse(row.events) as string[],
  secret: row.secret,
  created: row.created,
})

const masked = (secret: string) => `${secret.startsWith('whsec_') ? 'whsec_' : ''}…${secret.slice(-4)}`

/** What went wrong on a delivery that got no HTTP answer, in a word a log reader knows. */
function describeFailure(err: unknown): string {
  const e = err as {name?: string; message?: string; cause?: {code?: string; message?: string}}
  if (e?.name === 'TimeoutError') return `timeout after ${DELIVERY_TIMEOUT_MS / 1000} s`
  return e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err)
}

export class Webhooks {
  private readonly stmts
  private timer?: NodeJS.Timeout
  private started = false
  private kickQueued = false
  /** Endpoints with a delivery chain running: one request at a time per endpoint keeps events in order. */
  private readonly busy = new Map<string, Promise<void>>()
  private readonly abort = new AbortController()

  constructor(
    private readonly storage: Storage,
    private readonly now: () => number,
  ) {
    const db = storage.db
    this.stmts = {
      insertEndpoint: db.prepare('INSERT INTO webhook_endpoints (id, merchant, env, url, events, secret, created) VALUES (?, ?, ?, ?, ?, ?, ?)'),
      endpoint: db.prepare<[string], EndpointRow>('SELECT * FROM webhook_endpoints WHERE id = ?'),
      byMerchant: db.prepare<[string], EndpointRow>('SELECT * FROM webhook_endpoints WHERE merchant = ? ORDER BY created DESC, rowid DESC'),
      byScope: db.prepare<[string, string], EndpointRow>('SELECT * FROM webhook_endpoints WHERE merchant = ? AND env = ?'),
      removeEndpoint: db.prepare('DELETE FROM webhook_endpoints WHERE id = ?'),
      enqueue: db.prepare('INSERT INTO webhook_deliveries (endpoint, event_id, event_type, body, next_attempt, created) VALUES (?, ?, ?, ?, ?, ?)'),
      due: db.prepare<[number, number], DeliveryRow>(
        'SELECT id, endpoint, event_id, event_type, body, attempts FROM webhook_deliveries WHERE next_attempt IS NOT NULL AND next_attempt <= ? ORDER BY id LIMIT ?',
      ),
      record: db.prepare('UPDATE webhook_deliveries SET attempts = ?, next_attempt = ?, delivered = ? WHERE id = ?'),
      logAttempt: db.prepare('INSERT INTO webhook_attempts (delivery, attempt, attempted, status, error, next_attempt) VALUES (?, ?, ?, ?, ?, ?)'),
      attempts: db.prepare<[string], AttemptRow>(
        `SELECT a.delivery, d.event_id, d.event_type, a.attempt, a.attempted, a.status, a.error, a.next_attempt, d.delivered
         FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery WHERE d.endpoint = ? ORDER BY a.delivery, a.attempt`,
      ),
    }
  }

  create(input: {merchant: string; env: Env; url: string; events: string[]; secret?: string}): WebhookEndpointDoc {
    const row: EndpointRow = {
      id: newId('we', 24),
      merchant: input.merchant,
      env: input.env,
      url: input.url,
      events: JSON.stringify([...new Set(input.events)]),
      secret: input.secret ?? `whsec_${randomText(32)}`,
      created: this.now(),
    }
    this.stmts.insertEndpoint.run(row.id, row.merchant, row.env, row.url, row.events, row.secret, row.created)
    return view(row)
  }

  get(id: string): WebhookEndpointDoc | undefined {
    const row = this.stmts.endpoint.get(id)
    return row && view(row)
  }

  list(merchant: string): WebhookEndpointDoc[] {
    return this.stmts.byMerchant.all(merchant).map(view)
  }

  /** Deletes the endpoint with its pending deliveries and their log. */
  remove(id: string): boolean {
    return this.stmts.removeEndpoint.run(id).changes > 0
  }

  deliveries(id: string) {
    return this.stmts.attempts.all(id).map((a) => ({
      object: 'webhook_delivery_attempt' as const,
      delivery: a.delivery,
      event: a.event_id,
      type: a.event_type,
      attempt: a.attempt,
      attempted: a.attempted,
      status: a.status,
      error: a.error,
      next_attempt: a.next_attempt,
      delivered: a.status !== null && a.status >= 200 && a.status < 300,
    }))
  }

  /** Queues the event for every endpoint of its scope that selects it, in the caller's transaction. */
  enqueue(scope: Scope, event: EventDoc): void {
    const endpoints = this.stmts.byScope.all(scope.merchant, scope.env)
    let queued = false
    for (const endpoint of endpoints) {
      if (!selects(JSON.parse(endpoint.events) as string[], event.type)) continue
      this.stmts.enqueue.run(endpoint.id, event.id, event.type, JSON.stringify(event), event.created, event.created)
      queued = true
    }
    // setImmediate runs after the synchronous transaction has committed (or rolled back: then nothing is due).
    if (queued && this.started && !this.kickQueued) {
      this.kickQueued = true
      setImmediate(() => {
        this.kickQueued = false
        this.kick()
      })
    }
  }

  start(): void {
    if (this.started) return
    this.started = true
    this.timer = setInterval(() => this.kick(), POLL_MS)
    this.timer.unref()
    this.kick()
  }

  /** Stops polling and aborts requests in flight; an aborted attempt stays due for the next start. */
  async stop(): Promise<void> {
    this.started = false
    clearInterval(this.timer)
    this.abort.abort()
    await Promise.allSettled([...this.busy.values()])
  }

  /** Starts a delivery chain for every endpoint that has due deliveries and none running. */
  kick(): void {
    if (!this.started || !this.storage.db.open) return
    let due: DeliveryRow[]
    try {
      due = this.stmts.due.all(this.now(), BATCH)
    } catch {
      return
    }
    const byEndpoint = new Map<string, DeliveryRow[]>()
    for (const row of due) {
      if (this.busy.has(row.endpoint)) continue
      const rows = byEndpoint.get(row.endpoint) ?? []
      rows.push(row)
      byEndpoint.set(row.endpoint, rows)
    }
    for (const [endpoint, rows] of byEndpoint) {
      const chain = (async () => {
        for (const row of rows) {
          if (!this.started) return
          await this.deliver(row).catch(() => {})
        }
      })().finally(() => {
        this.busy.delete(endpoint)
        // More may have come due while this chain ran.
        if (this.started) setImmediate(() => this.kick())
      })
      this.busy.set(endpoint, chain)
    }
  }

  private async deliver(row: DeliveryRow): Promise<void> {
    const endpoint = this.stmts.endpoint.get(row.endpoint)
    if (!endpoint) return
    const attempt = row.attempts + 1
    // Signed with the wall clock, not the test clock: receivers check the timestamp against their own time.
    const signed = signWebhookPayload(row.body, endpoint.secret)
    let status: number | null = null
    let error: string | null = null
    try {
      const res = await fetch(endpoint.url, {
        method: 'POST',
        headers: {'content-type': 'application/json', [SIGNATURE_HEADER]: signed.header, 'user-agent': `payapp-gateway/${SDK_VERSION}`},
        body: signed.body,
        redirect: 'manual',
        signal: AbortSignal.any([AbortSignal.timeout(DELIVERY_TIMEOUT_MS), this.abort.signal]),
      })
      status = res.status
      await res.body?.cancel().catch(() => {})
    } catch (err) {
      if (this.abort.signal.aborted) return
      error = describeFailure(err)
    }
    if (!this.storage.db.open) return
    const now = this.now()
    const delivered = status !== null && status >= 200 && status < 300
    const next = delivered || attempt >= MAX_ATTEMPTS ? null : now + BACKOFF_SECONDS[attempt - 1]
    this.storage.transaction(() => {
      // The endpoint may have been deleted while the request was out: then there is nothing to record.
      if (!this.stmts.endpoint.get(row.endpoint)) return
      this.stmts.record.run(attempt, next, delivered ? now : null, row.id)
      this.stmts.logAttempt.run(row.id, attempt, now, status, error, next)
    })
  }
}

const param = (request: FastifyRequest, name: string) => (request.params as Record<string, string>)[name]

function requireEndpoint(gw: Platform, id: string): WebhookEndpointDoc {
  const endpoint = gw.webhooks.get(id)
  if (!endpoint) throw notFound('webhook endpoint', id)
  return endpoint
}

export const webhookAdminRoutes: AdminRouteDef[] = [
  [
    'POST',
    '/webhook_endpoints',
    (request, gw) => {
      const body = adminBody(adminWebhookEndpointCreate, request)
      requireMerchant(gw, body.merchant)
      return gw.webhooks.create(body)
    },
    201,
  ],
  [
    'GET',
    '/webhook_endpoints',
    (request, gw) => {
      const merchant = (request.query as Record<string, unknown>).merchant
      if (typeof merchant !== 'string' || !merchant) throw invalid('parameter_missing', 'Missing required query parameter: merchant', 'merchant')
      const data = gw.webhooks.list(merchant).map((e) => ({...e, secret: masked(e.secret)}))
      return {object: 'list', has_more: false, data}
    },
  ],
  [
    'DELETE',
    '/webhook_endpoints/:id',
    (request, gw) => {
      const {id} = requireEndpoint(gw, param(request, 'id'))
      gw.webhooks.remove(id)
      return {id, object: 'webhook_endpoint', deleted: true}
    },
  ],
  [
    'GET',
    '/webhook_endpoints/:id/deliveries',
    (request, gw) => {
      const {id} = requireEndpoint(gw, param(request, 'id'))
      return {object: 'list', has_more: false, data: gw.webhooks.deliveries(id)}
    },
  ],
]
