/**
 * Webhooks (spec: Events, Authentication): endpoints per merchant and mode that select event types, an
 * outbox that `Platform.emit` fills in the event's own transaction, and a worker that POSTs due
 * deliveries signed with the endpoint's secret, retrying with backoff on the gateway clock. The admin
 * API manages endpoints through domain/webhook-endpoints.ts.
 */
import {SDK_VERSION} from '@payapp/sdk/transport'
import {matchesEventType, SIGNATURE_HEADER, signWebhookPayload} from '@payapp/sdk/webhooks-node'
import {newId, randomText} from './ids.js'
import type {Env, EventDoc, Scope} from './storage/documents.js'
import type {DueDelivery, Storage, Store, WebhookEndpointRecord} from './storage/storage.js'

/** The spec's limit: the first attempt and six retries. */
export const MAX_ATTEMPTS = 7
/** Seconds (gateway clock) to wait after attempts 1–6 before the next one. */
export const BACKOFF_SECONDS = [1, 5, 30, 120, 600, 1800] as const
export const DELIVERY_TIMEOUT_MS = 15_000
const POLL_MS = 200
const BATCH = 100

export type WebhookEndpointDoc = WebhookEndpointRecord & {object: 'webhook_endpoint'}

const view = (record: WebhookEndpointRecord): WebhookEndpointDoc => ({
  id: record.id,
  object: 'webhook_endpoint',
  merchant: record.merchant,
  env: record.env,
  url: record.url,
  events: record.events,
  secret: record.secret,
  installation: record.installation,
  created: record.created,
})

/**
 * The scope an app needs to receive an event family (spec: `fraud_warning.*` only with
 * `fraud_warnings:read`; the others follow the App API read of the same objects). First match wins.
 */
const EVENT_SCOPES: ReadonlyArray<[prefix: string, scope: string]> = [
  ['fraud_warning.', 'fraud_warnings:read'],
  ['charge.dispute.', 'disputes:read'],
  ['charge.refunded', 'refunds:read'],
  ['refund.', 'refunds:read'],
  ['payment', 'payments:read'],
  ['subscription_link.', 'subscriptions:read'],
  ['subscription.', 'subscriptions:read'],
  ['customer.', 'subscriptions:read'],
  ['invoice.', 'invoices:read'],
  ['payout.', 'payouts:read'],
  ['store.order.', 'orders:read'],
  ['product.', 'products:read'],
  ['price.', 'products:read'],
]

function scopeForEvent(type: string): string | undefined {
  return EVENT_SCOPES.find(([prefix]) => type.startsWith(prefix))?.[1]
}

/** What went wrong on a delivery that got no HTTP answer, in a word a log reader knows. */
function describeFailure(err: unknown): string {
  const e = err as {name?: string; message?: string; cause?: {code?: string; message?: string}}
  if (e?.name === 'TimeoutError') return `timeout after ${DELIVERY_TIMEOUT_MS / 1000} s`
  return e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err)
}

export class Webhooks {
  private timer?: NodeJS.Timeout
  private started = false
  private kickQueued = false
  /** Endpoints with a delivery chain running: one request at a time per endpoint keeps events in order. */
  private readonly busy = new Map<string, Promise<void>>()
  private readonly abort = new AbortController()
  /** Attempts finished and logged since start, so `drain` can tell progress from a stall. */
  private attemptsMade = 0

  constructor(
    private readonly storage: Storage,
    private readonly now: () => number,
  ) {}

  async create(store: Store, input: {merchant: string; env: Env; url: string; events: string[]; secret?: string; installation?: string}): Promise<WebhookEndpointDoc> {
    const record: WebhookEndpointRecord = {
      id: newId('we', 24),
      merchant: input.merchant,
      env: input.env,
      url: input.url,
      events: [...new Set(input.events)],
      secret: input.secret ?? `whsec_${randomText(32)}`,
      installation: input.installation ?? null,
      created: this.now(),
    }
    await store.webhooks.insertEndpoint(record)
    return view(record)
  }

  async get(store: Store, id: string): Promise<WebhookEndpointDoc | undefined> {
    const record = await store.webhooks.endpoint(id)
    return record && view(record)
  }

  async list(store: Store, merchant: string): Promise<WebhookEndpointDoc[]> {
    return (await store.webhooks.endpointsOf(merchant)).map(view)
  }

  /** Deletes the endpoint with its pending deliveries and their log. */
  remove(store: Store, id: string): Promise<boolean> {
    return store.webhooks.removeEndpoint(id)
  }

  async deliveries(store: Store, id: string) {
    return (await store.webhooks.attempts(id)).map((a) => ({
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
  async enqueue(store: Store, scope: Scope, event: EventDoc): Promise<void> {
    let queued = false
    for (const endpoint of await store.webhooks.endpointsIn(scope)) {
      if (!endpoint.events.some((pattern) => matchesEventType(pattern, event.type))) continue
      if (!(await this.mayReceive(store, endpoint, event.type))) continue
      await store.webhooks.enqueue(endpoint.id, event, JSON.stringify(event))
      queued = true
    }
    // setImmediate runs after the unit has committed on SQLite, whose units never wait on I/O (rolled back: nothing is due).
    if (queued && this.started && !this.kickQueued) {
      this.kickQueued = true
      setImmediate(() => {
        this.kickQueued = false
        this.kick()
      })
    }
  }

  /** A merchant's endpoint receives everything it selects; an app's only what its installation (not revoked) may read. */
  private async mayReceive(store: Store, endpoint: WebhookEndpointRecord, type: string): Promise<boolean> {
    if (endpoint.installation === null) return true
    const installation = await store.credentials.byId(endpoint.installation)
    if (!installation) return false
    const needed = scopeForEvent(type)
    return needed === undefined || installation.scopes.includes(needed)
  }

  /** Queues a logged event again, now: for one endpoint, or every endpoint of its scope that selects it. */
  async resend(store: Store, scope: Scope, event: EventDoc, endpointId?: string): Promise<number> {
    const endpoints = endpointId === undefined ? await store.webhooks.endpointsIn(scope) : [await store.webhooks.endpoint(endpointId)].filter((e) => e !== undefined)
    let queued = 0
    for (const endpoint of endpoints) {
      if (endpoint.merchant !== scope.merchant || endpoint.env !== scope.env) continue
      if (endpointId === undefined && !endpoint.events.some((pattern) => matchesEventType(pattern, event.type))) continue
      if (!(await this.mayReceive(store, endpoint, event.type))) continue
      await store.webhooks.enqueue(endpoint.id, event, JSON.stringify(event), this.now())
      queued += 1
    }
    if (queued > 0 && this.started) setImmediate(() => this.kick())
    return queued
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
    if (!this.started || !this.storage.open) return
    this.storage.reads.webhooks.due(this.now(), BATCH).then(
      (due) => this.startChains(due),
      // The database closed under the poll (shutdown).
      () => {},
    )
  }

  /** The earliest pending attempt's due time on the gateway clock. */
  async nextDue(): Promise<number | undefined> {
    if (!this.started || !this.storage.open) return undefined
    return this.storage.reads.webhooks.nextDue()
  }

  /**
   * Makes every attempt due at or before `upTo` (the clock's pinned moment during an advance), waits
   * for each to finish and be logged, and says how many were made. Chains already running count too.
   */
  async drain(upTo: number): Promise<number> {
    const before = this.attemptsMade
    for (;;) {
      if (!this.started || !this.storage.open) break
      const round = this.attemptsMade
      await Promise.allSettled([...this.busy.values()])
      const due = await this.storage.reads.webhooks.due(upTo, BATCH)
      if (due.length === 0) break
      this.startChains(due)
      await Promise.allSettled([...this.busy.values()])
      if (this.attemptsMade === round) break
    }
    return this.attemptsMade - before
  }

  private startChains(due: DueDelivery[]): void {
    const byEndpoint = new Map<string, DueDelivery[]>()
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

  private async deliver(row: DueDelivery): Promise<void> {
    const endpoint = await this.storage.reads.webhooks.endpoint(row.endpoint)
    if (!endpoint) return
    const attempt = row.attempts + 1
    // Signed with the wall clock, not the test clock: receivers check the timestamp against their own time.
    const signed = signWebhookPayload(row.body, endpoint.secret)
    let status: number | null = null
    let error: string | null = null
    // One controller per attempt, its timer and stop listener removed after: AbortSignal.any would hang a
    // listener per attempt on the worker's long-lived signal, which slows every later attempt.
    const attemptAbort = new AbortController()
    const timer = setTimeout(() => attemptAbort.abort(new DOMException('timed out', 'TimeoutError')), DELIVERY_TIMEOUT_MS)
    const stop = () => attemptAbort.abort()
    this.abort.signal.addEventListener('abort', stop, {once: true})
    try {
      const res = await fetch(endpoint.url, {
        method: 'POST',
        headers: {'content-type': 'application/json', [SIGNATURE_HEADER]: signed.header, 'user-agent': `payapp-gateway/${SDK_VERSION}`},
        body: signed.body,
        redirect: 'manual',
        signal: attemptAbort.signal,
      })
      status = res.status
      await res.body?.cancel().catch(() => {})
    } catch (err) {
      if (this.abort.signal.aborted) return
      error = describeFailure(err)
    } finally {
      clearTimeout(timer)
      this.abort.signal.removeEventListener('abort', stop)
    }
    if (!this.storage.open) return
    const now = this.now()
    const delivered = status !== null && status >= 200 && status < 300
    const next = delivered || attempt >= MAX_ATTEMPTS ? null : now + BACKOFF_SECONDS[attempt - 1]
    await this.storage.write(async (tx) => {
      // The endpoint may have been deleted while the request was out: then there is nothing to record.
      if (!(await tx.webhooks.endpoint(row.endpoint))) return
      await tx.webhooks.recordAttempt(row.id, attempt, now, {status, error, next, delivered})
    })
    this.attemptsMade += 1
  }
}
