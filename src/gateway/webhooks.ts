/**
 * Webhooks (spec: Events, Authentication): endpoints per merchant and mode that select event types, an
 * outbox that `Platform.emit` fills in the event's own transaction, and a worker that POSTs due
 * deliveries signed with the endpoint's secret (one `v1` per valid secret while a rotation overlaps),
 * retrying with backoff on the gateway clock. Webhook fault rules (domain/faults.ts) are applied as a
 * delivery is queued (duplicate, delay, reorder) and as it is attempted (failed attempts), and recorded
 * with it, so the delivery log says what was injected. The admin API manages endpoints through
 * domain/webhook-endpoints.ts.
 */
import {Agent as HttpAgent, request as httpRequest, type ClientRequest} from 'node:http'
import {Agent as HttpsAgent, request as httpsRequest} from 'node:https'

import {SDK_VERSION} from '@payapp/sdk/transport'
import {DELIVERY_ID_HEADER, matchesEventType, SIGNATURE_HEADER, signWebhookPayload} from '@payapp/sdk/webhooks-node'
import {newId, randomText} from './ids.js'
import type {FaultRules} from './process-state.js'
import type {Env, EventDoc, Scope} from './storage/documents.js'
import type {DeliveryFault, DueDelivery, Storage, Store, WebhookEndpointRecord} from './storage/storage.js'

/** The spec's limit: the first attempt and six retries. */
export const MAX_ATTEMPTS = 7
/** Seconds (gateway clock) to wait after attempts 1–6 before the next one. */
export const BACKOFF_SECONDS = [1, 5, 30, 120, 600, 1800] as const
export const DELIVERY_TIMEOUT_MS = 15_000
const POLL_MS = 200
/** How many of an endpoint's due deliveries one claim takes (under one lease, sent one at a time in order). */
const CLAIM_BATCH = 50
/** How often an advance's drain looks again while another process holds due deliveries. */
const DRAIN_POLL_MS = 20

export type WebhookEndpointDoc = Omit<WebhookEndpointRecord, 'previous_secrets'> & {
  object: 'webhook_endpoint'
  /** When each earlier secret that still signs stops signing (gateway clock), newest first. */
  previous_secrets_expire: number[]
}

const newSecret = () => `whsec_${randomText(32)}`

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

/** One attempt's outcome, to be logged: at the merchant's clock time it ended. */
interface Attempt {
  attempt: number
  at: number
  status: number | null
  error: string | null
  injected?: boolean
}

/** What went wrong on a delivery that got no HTTP answer, in a word a log reader knows. */
function describeFailure(err: unknown): string {
  const e = err as {name?: string; code?: string; message?: string}
  if (e?.name === 'TimeoutError') return `timeout after ${DELIVERY_TIMEOUT_MS / 1000} s`
  return e?.code ?? e?.message ?? String(err)
}

export class Webhooks {
  private timer?: NodeJS.Timeout
  private started = false
  private kickQueued = false
  private kickOnCommit = false
  /** Endpoints with a delivery chain running: one request at a time per endpoint keeps events in order. */
  private readonly busy = new Map<string, Promise<void>>()
  /** Endpoints found due while their chain ran: when it ends, it looks again. */
  private readonly lookAgain = new Set<string>()
  /** Attempts finished and logged since start, so `drain` can tell progress from a stall. */
  private attemptsMade = 0

  /** Per endpoint, the reordered deliveries queued in this request or clock step (one turn of the event loop). */
  private readonly reorderBatches = new Map<string, {first: number; rank: number}>()

  constructor(
    private readonly storage: Storage,
    /** The merchant's clock: an endpoint's attempts fall due on its merchant's time. */
    private readonly now: (merchant: string) => number,
    private readonly faults: Pick<FaultRules, 'forDelivery'>,
    /**
     * This process as the owner of the deliveries it claims, and how long a claim lasts (wall-clock ms)
     * before another process may take it over (this one died mid-attempt).
     */
    private readonly claims: {owner: string; leaseMs: number} = {owner: 'local', leaseMs: 30_000},
  ) {}

  private view(record: WebhookEndpointRecord): WebhookEndpointDoc {
    const {previous_secrets: previous, ...rest} = record
    return {...rest, object: 'webhook_endpoint', previous_secrets_expire: this.stillValid(record.merchant, previous).map((p) => p.expires)}
  }

  private stillValid(merchant: string, previous: WebhookEndpointRecord['previous_secrets']) {
    const now = this.now(merchant)
    return previous.filter((p) => p.expires > now)
  }

  /** The secrets a delivery is signed with now: the current one, then earlier ones not yet expired. */
  signingSecrets(record: WebhookEndpointRecord): string[] {
    return [record.secret, ...this.stillValid(record.merchant, record.previous_secrets).map((p) => p.secret)]
  }

  /**
   * A new secret for the endpoint, answered in full; the one it replaces keeps signing (as a second `v1`)
   * for `expirePreviousIn` seconds of gateway-clock time, 0 ending it at once.
   */
  async rotateSecret(store: Store, id: string, expirePreviousIn: number, secret = newSecret()): Promise<WebhookEndpointDoc | undefined> {
    const record = await store.webhooks.endpoint(id)
    if (!record) return undefined
    const kept = this.stillValid(record.merchant, record.previous_secrets)
    const previous = expirePreviousIn > 0 ? [{secret: record.secret, expires: this.now(record.merchant) + expirePreviousIn}, ...kept] : kept
    await store.webhooks.setSecrets(id, secret, previous)
    return this.view({...record, secret, previous_secrets: previous})
  }

  async create(store: Store, input: {merchant: string; env: Env; url: string; events: string[]; secret?: string; installation?: string}): Promise<WebhookEndpointDoc> {
    const record: WebhookEndpointRecord = {
      id: newId('we', 24),
      merchant: input.merchant,
      env: input.env,
      url: input.url,
      events: [...new Set(input.events)],
      secret: input.secret ?? newSecret(),
      installation: input.installation ?? null,
      created: this.now(input.merchant),
      previous_secrets: [],
    }
    await store.webhooks.insertEndpoint(record)
    return this.view(record)
  }

  async get(store: Store, id: string): Promise<WebhookEndpointDoc | undefined> {
    const record = await store.webhooks.endpoint(id)
    return record && this.view(record)
  }

  async list(store: Store, merchant: string): Promise<WebhookEndpointDoc[]> {
    return (await store.webhooks.endpointsOf(merchant)).map((record) => this.view(record))
  }

  /** Deletes the endpoint with its pending deliveries and their log. */
  remove(store: Store, id: string): Promise<boolean> {
    return store.webhooks.removeEndpoint(id)
  }

  async deliveries(store: Store, id: string) {
    return (await store.webhooks.attempts(id)).map((a) => {
      const delivered = a.status !== null && a.status >= 200 && a.status < 300
      // Delivery-level effects show on its first attempt; a failure the rule injected on each attempt it failed.
      const injected: Array<'duplicate' | 'delayed' | 'reordered' | 'failed'> = a.attempt === 1 ? [...a.effects] : []
      if (a.injected) injected.push('failed')
      return {
        object: 'webhook_delivery_attempt' as const,
        delivery: a.delivery,
        event: a.event_id,
        type: a.event_type,
        attempt: a.attempt,
        attempted: a.attempted,
        status: a.status,
        error: a.error,
        next_attempt: a.next_attempt,
        delivered,
        outcome: delivered ? ('delivered' as const) : a.next_attempt !== null ? ('retrying' as const) : ('failed' as const),
        fault: a.fault,
        injected,
        duplicate_of: a.duplicate_of,
        held_until: a.held_until,
      }
    })
  }

  /** Queues the event for every endpoint of its scope that selects it, in the caller's unit of work. */
  async enqueue(store: Store, scope: Scope, event: EventDoc): Promise<void> {
    let queued = false
    for (const endpoint of await store.webhooks.endpointsIn(scope)) {
      if (!endpoint.events.some((pattern) => matchesEventType(pattern, event.type))) continue
      if (!(await this.mayReceive(store, endpoint, event.type))) continue
      await this.queue(store, endpoint, event, event.created)
      queued = true
    }
    if (queued) this.kickSoon()
  }

  /**
   * Kicks the worker once the current unit has committed (or rolled back: then nothing is due): on the next
   * turn (SQLite's group commit is done by then) and when `committed` says a unit ended (a database server
   * commits later); a delivery not yet committed is found by the next poll.
   */
  private kickSoon(): void {
    if (!this.started) return
    this.kickOnCommit = true
    if (this.kickQueued) return
    this.kickQueued = true
    setImmediate(() => {
      this.kickQueued = false
      this.kick()
    })
  }

  /** A unit of work committed: kicks the worker if the unit queued a delivery. */
  committed(): void {
    if (!this.kickOnCommit) return
    this.kickOnCommit = false
    this.kick()
  }

  /** Queues one delivery due at `at`, as the first webhook fault rule that strikes it (if any) says. */
  private async queue(store: Store, endpoint: WebhookEndpointRecord, event: EventDoc, at: number): Promise<void> {
    const body = JSON.stringify(event)
    const rule = await this.faults.forDelivery(store, {merchant: endpoint.merchant, endpoint: endpoint.id, type: event.type})
    if (!rule) {
      await store.webhooks.enqueue(endpoint.id, event, body, at)
      return
    }
    const effects: DeliveryFault['effects'] = []
    const due = at + (rule.delay_seconds ?? 0)
    if (rule.delay_seconds) effects.push('delayed')
    if (rule.reorder) effects.push('reordered')
    const fault = (extra: Partial<DeliveryFault> = {}): DeliveryFault => ({
      rule: rule.id,
      failAttempts: rule.fail_attempts ?? 0,
      effects,
      heldUntil: rule.delay_seconds ? due : undefined,
      ...extra,
    })
    const id = await this.enqueueOrdered(store, endpoint.id, event, body, due, fault(), rule.reorder)
    if (rule.duplicate) await this.enqueueOrdered(store, endpoint.id, event, body, due, fault({effects: [...effects, 'duplicate'], duplicateOf: id}), rule.reorder)
  }

  /**
   * Queues a delivery; a reordered one sorts before the reordered ones queued earlier in the same batch
   * (this request or clock step: everything queued before the event loop turns), so they go newest first.
   */
  private async enqueueOrdered(store: Store, endpoint: string, event: EventDoc, body: string, due: number, fault: DeliveryFault, reorder: boolean): Promise<number> {
    if (!reorder) return store.webhooks.enqueue(endpoint, event, body, due, fault)
    const batch = this.reorderBatches.get(endpoint)
    if (batch === undefined && this.reorderBatches.size === 0) setImmediate(() => this.reorderBatches.clear())
    const rank = batch ? batch.rank + 1 : 0
    // Just before the batch's first delivery (and after everything queued before it): later ones first.
    const id = await store.webhooks.enqueue(endpoint, event, body, due, {...fault, ord: batch ? batch.first - rank / 1e6 : undefined})
    if (batch) batch.rank = rank
    else this.reorderBatches.set(endpoint, {first: id, rank})
    return id
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
      await this.queue(store, endpoint, event, this.now(scope.merchant))
      queued += 1
    }
    if (queued > 0) this.kickSoon()
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
    for (const req of this.inFlight) req.destroy(new Error('gateway stopping'))
    await Promise.allSettled([...this.busy.values()])
    // Another process on the database may send what this one held at once, without waiting for the lease.
    if (this.storage.open) await this.storage.write((tx) => tx.webhooks.release(this.claims.owner)).catch(() => {})
    this.agents?.http.destroy()
    this.agents?.https.destroy()
    this.agents = undefined
  }

  /** Starts a delivery chain for every endpoint that has due deliveries and none running. */
  kick(): void {
    if (!this.started || !this.storage.open) return
    // A rejection: the database closed under the poll (shutdown).
    this.startChains().catch(() => {})
  }

  /** The earliest pending attempt's due time on the merchant's clock. */
  async nextDue(merchant: string): Promise<number | undefined> {
    if (!this.started || !this.storage.open) return undefined
    return this.storage.reads.webhooks.nextDue(merchant)
  }

  /** The merchants whose endpoints have attempts pending. */
  async merchantsPending(): Promise<string[]> {
    if (!this.started || !this.storage.open) return []
    return [...new Set((await this.storage.reads.webhooks.pendingEndpoints()).map((row) => row.merchant))]
  }

  /**
   * Makes every attempt of the merchant's endpoints due at or before `upTo` on its clock (pinned there
   * during an advance), and resolves once storage has none left due by then, whichever process made
   * them (another may hold an endpoint's claim; a dead one's is taken over after its lease). Says how
   * many attempts this process made.
   */
  async drain(merchant: string, upTo: number): Promise<number> {
    const before = this.attemptsMade
    for (;;) {
      if (!this.started || !this.storage.open) break
      await Promise.allSettled([...this.busy.values()])
      await this.startChains(merchant, upTo)
      await Promise.allSettled([...this.busy.values()])
      if ((await this.storage.reads.webhooks.dueCount(merchant, upTo)) === 0) break
      await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS))
    }
    return this.attemptsMade - before
  }

  /**
   * One chain per endpoint with deliveries due (by `upTo`, else by its merchant's clock) and no chain
   * running: each endpoint's deliveries go one at a time, in order, and never wait for another
   * endpoint's. Without a merchant, every merchant's. Answers whether any endpoint had some.
   */
  private async startChains(only?: string, upTo?: number): Promise<boolean> {
    const pending = await this.storage.reads.webhooks.pendingEndpoints(only)
    const due = pending.filter((row) => row.due <= (upTo ?? this.now(row.merchant)))
    for (const {endpoint, merchant} of due) {
      if (this.busy.has(endpoint)) {
        this.lookAgain.add(endpoint)
        continue
      }
      this.lookAgain.delete(endpoint)
      let claimed = false
      const chain = (async () => {
        // The chain runs while its endpoint has due deliveries (up to the clock's pinned moment during an
        // advance), claimed a batch at a time: one process sends to an endpoint at a time, in order.
        const {owner, leaseMs} = this.claims
        for (;;) {
          if (!this.started || !this.storage.open) return
          // The merchant's now: the pinned moment during an advance, so nothing due later is sent early.
          const now = this.now(merchant)
          const leaseUntil = Date.now() + leaseMs
          const rows = await this.storage.write((tx) => tx.webhooks.claim(endpoint, owner, now, Date.now(), leaseUntil, CLAIM_BATCH))
          if (rows.length === 0) return
          claimed = true
          // Attempts are logged in order while the next ones are sent, all before the next claim (which would
          // take a sent but unlogged delivery again).
          const log = this.attemptLog()
          for (const [i, row] of rows.entries()) {
            if (!this.started) break
            // Claimed again (renewed) before the next attempt unless two thirds of the lease are left, and at
            // least an attempt's timeout: a slow receiver's delivery is not taken over while it is being sent.
            if (i > 0 && leaseUntil - Date.now() < Math.max((2 * leaseMs) / 3, DELIVERY_TIMEOUT_MS)) break
            const result = await this.attempt(row, merchant)
            if (result) log.add(row, result)
          }
          await log.written()
        }
      })()
        .catch(() => {})
        .finally(() => {
          this.busy.delete(endpoint)
          // A delivery queued as the chain found none left finds it gone: look again. Not when it claimed
          // nothing (another process holds the endpoint) and nothing was queued meanwhile: the next poll will.
          if (this.lookAgain.delete(endpoint) || claimed) this.kickSoon()
        })
      this.busy.set(endpoint, chain)
    }
    return due.length > 0
  }

  /** Keep-alive connections per scheme, made on the first delivery. */
  private agents?: {http: HttpAgent; https: HttpsAgent}
  private readonly inFlight = new Set<ClientRequest>()

  /**
   * POSTs one delivery with node:http(s) (fetch's per-request streams, abort signals and errors cost more
   * than the request itself here) and answers the receiver's status; rejects with what went wrong.
   */
  private post(url: string, headers: Record<string, string>, body: string): Promise<number> {
    this.agents ??= {http: new HttpAgent({keepAlive: true}), https: new HttpsAgent({keepAlive: true})}
    const target = new URL(url)
    const https = target.protocol === 'https:'
    return new Promise<number>((resolve, reject) => {
      const req = (https ? httpsRequest : httpRequest)(
        target,
        {method: 'POST', headers: {...headers, 'content-length': String(Buffer.byteLength(body))}, agent: https ? this.agents!.https : this.agents!.http},
        (res) => {
          res.on('error', reject)
          res.on('end', () => resolve(res.statusCode ?? 0))
          res.resume()
        },
      )
      const timer = setTimeout(() => req.destroy(Object.assign(new Error('timed out'), {name: 'TimeoutError'})), DELIVERY_TIMEOUT_MS)
      this.inFlight.add(req)
      req.on('close', () => {
        clearTimeout(timer)
        this.inFlight.delete(req)
      })
      req.on('error', reject)
      req.end(body)
    })
  }

  /**
   * Makes one attempt of a claimed delivery (or fails it as its fault rule says, without sending) and
   * answers what to log, at the merchant's time it ended; nothing when there is nothing to log (the
   * endpoint is gone, or the worker is stopping: the attempt stays due for the next start).
   */
  private async attempt(row: DueDelivery, merchant: string): Promise<Attempt | undefined> {
    const endpoint = await this.storage.reads.webhooks.endpoint(row.endpoint)
    if (!endpoint) return undefined
    const attempt = row.attempts + 1
    if (attempt <= row.fail_attempts) {
      // A fault rule fails this attempt as a timeout would, without sending it: the retry schedule runs on.
      return {attempt, at: this.now(merchant), status: null, error: `timeout (injected by fault ${row.fault})`, injected: true}
    }
    // Signed with the wall clock, not the test clock: receivers check the timestamp against their own time.
    const signed = signWebhookPayload(row.body, this.signingSecrets(endpoint))
    let status: number | null = null
    let error: string | null = null
    try {
      status = await this.post(
        endpoint.url,
        {
          'content-type': 'application/json',
          [SIGNATURE_HEADER]: signed.header,
          [DELIVERY_ID_HEADER]: String(row.id),
          'user-agent': `payapp-gateway/${SDK_VERSION}`,
        },
        signed.body,
      )
    } catch (err) {
      if (!this.started) return undefined
      error = describeFailure(err)
    }
    return {attempt, at: this.now(merchant), status, error}
  }

  /**
   * Logs attempts in the order added, several per unit of work: those made while one unit is being
   * written go in the next. A unit that fails logs none of its attempts; their claims stay, so the
   * deliveries are sent again (at least once).
   */
  private attemptLog() {
    const waiting: Array<[DueDelivery, Attempt]> = []
    let writing = Promise.resolve()
    let queued = false
    const write = async () => {
      queued = false
      await this.record(waiting.splice(0)).catch(() => {})
    }
    return {
      add: (row: DueDelivery, attempt: Attempt) => {
        waiting.push([row, attempt])
        if (queued) return
        queued = true
        writing = writing.then(write)
      },
      written: () => writing,
    }
  }

  /** Logs attempts, scheduling each delivery's next one on the gateway clock or ending it (delivered or given up). */
  private async record(attempts: ReadonlyArray<[DueDelivery, Attempt]>): Promise<void> {
    if (!this.storage.open) return
    await this.storage.write(async (tx) => {
      for (const [row, {attempt, at, ...result}] of attempts) {
        const delivered = result.status !== null && result.status >= 200 && result.status < 300
        const next = delivered || attempt >= MAX_ATTEMPTS ? null : at + BACKOFF_SECONDS[attempt - 1]
        // Only while this process holds the claim; a delivery whose endpoint was deleted meanwhile is gone with it (nothing logged).
        await tx.webhooks.recordAttempt(row.id, attempt, at, {...result, next, delivered}, this.claims.owner)
      }
    })
    this.attemptsMade += attempts.length
  }
}
