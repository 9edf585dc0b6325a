/**
 * The platform's shared state and rules that every route obeys: who a credential is (auth), what it
 * may do (scopes), how often (rate limits), and what a repeated write returns (idempotency). Routes
 * receive this as `ctx.gw`; nothing here knows about HTTP.
 */
import {hash} from 'node:crypto'
import {setTimeout as sleep} from 'node:timers/promises'

import type {Door, Bucket} from '@payapp/sdk/endpoints'
import type {EventType} from '@payapp/sdk/events'
import type {Scope as ScopeName} from '@payapp/sdk/schemas/common'
import {Clock} from './clock.js'
import type {Tx} from './domain/context.js'
import type {FaultInput} from './domain/faults.js'
import {ApiError, conflict, invalid, unauthenticated} from './errors.js'
import {newId, randomText} from './ids.js'
import {
  HandoverRateCounters,
  MemoryCredentialCache,
  MemoryRateCounters,
  MemoryReadCache,
  StoredFaults,
  StoredRateCounters,
  type CredentialCache,
  type FaultRules,
  type RateCounters,
  type ReadCache,
} from './process-state.js'
import type {Env, EventDoc, Kind, Scope} from './storage/documents.js'
import {openStorage} from './storage/open.js'
import type {IdempotencyRecord, Storage, Store} from './storage/storage.js'
import {SHARED_VERSION_KEY} from './storage/storage.js'
import {AdvanceAnswered, readOffsets, Scheduler, type AdvancePlan, type AdvancePlans, type AdvanceResult} from './scheduler.js'
import {Webhooks} from './webhooks.js'

export interface Credential {
  id: string
  kind: 'installation' | 'secret_key' | 'publishable_key'
  merchant: string
  env: Env
  scopes: ReadonlySet<string>
  /** Last characters of the token, for logs and listings. */
  hint: string
  /** A publishable key's allow-listed browser origins. */
  origins: readonly string[] | null
}

const TOKEN_PREFIX: Record<Credential['kind'], string> = {installation: 'app', secret_key: 'sk', publishable_key: 'pk'}
const ID_PREFIX: Record<Credential['kind'], string> = {installation: 'inst', secret_key: 'key', publishable_key: 'key'}

const sha256 = (s: string) => hash('sha256', s, 'hex')

/** `app_live_…` / `app_test_…` installation tokens; `sk_…` secret and `pk_…` publishable keys. */
const TOKEN_SHAPE = /^(app|sk|pk)_(live|test)_[0-9A-Za-z]{24,64}$/

export class Credentials {
  /** The origins of every unrevoked publishable key (CORS reads it on browser routes), and when they were read. */
  private origins: {set: ReadonlySet<string>; readAt: number} | undefined
  /**
   * Counts `forget()`s. A read that began before one may have read a credential as it was before the
   * change, so its answer serves its own request but is not cached: a token revoked while a request
   * for it was reading storage must fail on the next one.
   */
  private forgotten = 0

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    /** Marks credentials changed, in the changing unit: for the other processes (the shared version) and this one (`Platform.write`). */
    private readonly changed: (store: Store) => Promise<void> = async () => {},
    /** token → credential; the hot path of every request, so lookups never touch storage twice. */
    private readonly cache: CredentialCache<Credential> = new MemoryCredentialCache(),
  ) {}

  async issue(store: Store, kind: Credential['kind'], merchant: string, env: Env, scopes: readonly ScopeName[], extra: {appName?: string; origins?: readonly string[]} = {}) {
    const token = `${TOKEN_PREFIX[kind]}_${env}_${randomText(32)}`
    const id = newId(ID_PREFIX[kind], 16)
    const hint = token.slice(-4)
    const origins = kind === 'publishable_key' ? [...new Set(extra.origins ?? [])] : null
    await store.credentials.insert({id, tokenHash: sha256(token), kind, merchant, env, scopes: [...new Set(scopes)], hint, origins, appName: extra.appName ?? null, created: this.clock.now(merchant)})
    // The origins this process keeps are forgotten once the unit settled (`Platform.write`).
    if (origins?.length) await this.changed(store)
    return {id, token}
  }

  async revoke(store: Store, id: string, kinds: readonly Credential['kind'][]): Promise<boolean> {
    let revoked = false
    for (const kind of kinds) if (await store.credentials.revoke(id, kind, this.clock.now())) revoked = true
    // A revoked token must fail on its very next request: this process forgets every cached answer once the
    // unit settled (`Platform.write`), every other through the shared version.
    if (revoked) await this.changed(store)
    return revoked
  }

  /** Forgets every cached answer (a credential was revoked, here or by another process). */
  forget(): void {
    this.forgotten += 1
    this.cache.invalidate()
    this.origins = undefined
  }

  /**
   * Whether some unrevoked publishable key lists this browser origin. Read from storage once and kept
   * until a key is issued or revoked here; an origin not in the set re-reads it at most once a second,
   * so a key another process issued on the same database is seen without a query per request.
   */
  async listsOrigin(origin: string): Promise<boolean> {
    const known = this.origins
    if (known && (known.set.has(origin) || performance.now() - known.readAt < 1000)) return known.set.has(origin)
    const forgotten = this.forgotten
    const origins = {set: new Set(await this.storage.reads.credentials.browserOrigins()), readAt: performance.now()}
    if (forgotten === this.forgotten) this.origins = origins
    return origins.set.has(origin)
  }

  /** The credential behind an `Authorization` header for a door, or a 401 that says why. */
  async authenticate(header: string | undefined, door: Door): Promise<Credential> {
    if (!header) throw unauthenticated('No credential: send Authorization: Bearer <token>', 'missing_credential')
    const match = /^Bearer ([^\s]+)$/.exec(header)
    if (!match) throw unauthenticated('Malformed Authorization header: expected "Bearer <token>"', 'invalid_authorization_header')
    const token = match[1]
    let cred = this.cache.get(token)
    if (cred === undefined) {
      const forgotten = this.forgotten
      cred = TOKEN_SHAPE.test(token) ? await this.load(token) : null
      if (forgotten === this.forgotten) this.cache.set(token, cred)
    }
    if (!cred) throw unauthenticated('Invalid, revoked or unknown credential', 'invalid_api_key')
    // The merchant API also takes publishable keys; admit() confines them to their one route.
    const fits = door === 'app' ? cred.kind === 'installation' : cred.kind === 'secret_key' || (door === 'merchant' && cred.kind === 'publishable_key')
    if (!fits) {
      throw unauthenticated(
        door === 'app'
          ? 'The App API takes an installation token, not an API key'
          : door === 'store'
            ? 'The store API takes a secret key'
            : 'This API takes a secret or publishable key, not an installation token',
        'wrong_credential_type',
      )
    }
    return cred
  }

  private async load(token: string): Promise<Credential | null> {
    const row = await this.storage.reads.credentials.byTokenHash(sha256(token))
    if (!row) return null
    // A token whose prefix names another environment than it was issued for is malformed: wrong mode.
    if (!token.includes(`_${row.env}_`)) return null
    return {...row, scopes: new Set(row.scopes)}
  }
}

/** Requests per credential per bucket in fixed one-minute windows (spec: Limits). */
export const RATE_LIMITS: Record<Bucket, number> = {checkout: 120, read: 300, write: 60}

/** Limits other than the spec's, e.g. `{write: 600}` (`gateway start --rate-limit writes=600`). */
export interface RateLimitConfig {
  limits?: Partial<Record<Bucket, number>>
  /** Window length; 60 s is the spec's, shorter ones let tests meet a limit quickly. */
  windowSeconds?: number
}

/** One bucket's standing after a request, sent as the `X-RateLimit-*` headers (an extension, docs/spec-gaps.md). */
export interface RateLimitState {
  limit: number
  remaining: number
  /** Seconds until the window resets. */
  reset: number
}

export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  return {'x-ratelimit-limit': String(state.limit), 'x-ratelimit-remaining': String(state.remaining), 'x-ratelimit-reset': String(state.reset)}
}

export class RateLimiter {
  readonly limits: Record<Bucket, number>
  readonly windowSeconds: number

  constructor(
    private readonly clock: Clock,
    public enabled: boolean,
    config: RateLimitConfig = {},
    private readonly counters: RateCounters = new MemoryRateCounters(),
  ) {
    this.limits = {...RATE_LIMITS, ...config.limits}
    this.windowSeconds = config.windowSeconds ?? 60
  }

  /**
   * Counts one request (`writes`: one that goes on to its own unit of work); throws 429 with
   * `Retry-After` once the bucket is spent for this window.
   */
  async hit(credentialId: string, bucket: Bucket, writes = false): Promise<RateLimitState | undefined> {
    if (!this.enabled) return undefined
    const now = this.clock.now()
    const window = Math.floor(now / this.windowSeconds)
    const count = await this.counters.hit(`${credentialId}:${bucket}`, window, writes)
    const limit = this.limits[bucket]
    const reset = Math.max(1, (window + 1) * this.windowSeconds - now)
    const state = {limit, remaining: Math.max(0, limit - count), reset}
    if (count > limit) {
      const per = this.windowSeconds === 60 ? 'a minute' : `per ${this.windowSeconds} s`
      throw new ApiError(429, 'rate_limit_error', 'rate_limited', `Too many ${bucket} requests: at most ${limit} ${per}`, undefined, {
        'retry-after': String(reset),
        ...rateLimitHeaders(state),
      })
    }
    return state
  }
}

/** Stored responses are replayed for 24 hours (spec: Limits). */
export const IDEMPOTENCY_RETENTION_SECONDS = 24 * 3600
/**
 * How long a request with a keyed clock advance's key that found its jump ended waits for the answer of the
 * request that ended it (ms), polled every `ANSWER_POLL_MS`: that one stores it right after; one silent for this
 * long died (or stalls), and the waiting request answers in its place.
 */
const ANSWER_WAIT_MS = 2000
const ANSWER_POLL_MS = 20

const inFlight = () =>
  conflict('idempotency_in_flight', 'A request with this Idempotency-Key is still being processed; retry shortly', 'Idempotency-Key', 'idempotency_error')

/** What a live record of the key answers instead of running the request: a replay, or a 409; undefined to claim it. */
function answerFor(row: IdempotencyRecord | undefined, fingerprint: string, now: number): AdvanceStart | undefined {
  if (!row || row.created + IDEMPOTENCY_RETENTION_SECONDS <= now) return undefined
  if (row.fingerprint !== fingerprint) {
    throw conflict(
      'idempotency_key_reused',
      'This Idempotency-Key was already used with a different request (method, path or body); use a new key',
      'Idempotency-Key',
      'idempotency_error',
    )
  }
  if (row.state === 'in_flight') throw inFlight()
  if (row.state === 'advancing') return {kind: 'join'}
  return {kind: 'replay', status: row.status!, body: row.body!}
}

export type IdempotencyStart = {kind: 'replay'; status: number; body: string} | {kind: 'started'}
/** A keyed clock advance's start: also `join`, when the key's first request has not answered (it runs, or died). */
export type AdvanceStart = IdempotencyStart | {kind: 'join'}

export class Idempotency {
  private lastPrune = 0

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
  ) {}

  /**
   * Claims are made in their write's unit, so none is ever committed "in flight" now; rows in that
   * state were left by a crashed process of an older version, and would block their key for 24 h.
   */
  releaseInFlight(): Promise<void> {
    return this.storage.write((tx) => tx.idempotency.releaseInFlight())
  }

  /** Validates the header value: 1 to 255 printable ASCII characters. */
  static checkKey(key: string): void {
    if (key.length < 1 || key.length > 255 || !/^[\x20-\x7e]+$/.test(key)) {
      throw invalid('idempotency_key_invalid', 'Idempotency-Key must be 1 to 255 printable ASCII characters', 'Idempotency-Key')
    }
  }

  /**
   * SHA-256 of `method NUL path NUL body` (the bytes of the three parts in turn, as stored fingerprints were
   * made), with the one-shot `hash`: 1.1 µs against the createHash/update/digest chain's 3.5 µs in a loop (the
   * chain took 13 µs of a keyed write in the gateway's CPU profile).
   */
  static fingerprint(method: string, path: string, body: string): string {
    return hash('sha256', `${method}\0${path}\0${body}`, 'hex')
  }

  /**
   * Claims a key for a request, inside the request's write transaction, or says what to answer instead:
   * the first response (replay), 409 `idempotency_key_reused` (another body), or 409
   * `idempotency_in_flight` (a claim left by an older version; freed at start-up).
   */
  async begin(tx: Store, credential: string, key: string, fingerprint: string): Promise<IdempotencyStart> {
    const now = this.clock.now()
    // Claim first: a new key (the usual case) takes one statement, sent at once (sendIdempotent runs the
    // handler alongside). The claim fails when a live record holds the key (on PostgreSQL after waiting for
    // a concurrent unit's claim to commit or roll back): then that record's answer is the one to give.
    const claimed = tx.idempotency.claim(credential, key, fingerprint, now, now - IDEMPOTENCY_RETENTION_SECONDS)
    // Expired keys go in batches, at most every ten minutes of (test) clock time (the claim replaces an expired row itself).
    if (now - this.lastPrune > 600) {
      this.lastPrune = now
      // Awaited with the claim: when both fail (the connection lost under the unit), the claim's failure is not left unhandled, which ends the process.
      await Promise.all([claimed, tx.idempotency.prune(now - IDEMPOTENCY_RETENTION_SECONDS)])
    }
    if (!(await claimed)) {
      // (A clock advance's record, `join`, has another path than any write's: its fingerprint never matches one.)
      const replay = answerFor(await tx.idempotency.read(credential, key), fingerprint, now)
      if (replay?.kind === 'replay') return replay
      throw inFlight()
    }
    return {kind: 'started'}
  }

  /**
   * Claims a key for a clock advance, in a unit of its own (the advance is many units): `started`, the
   * first response to replay, `join` while the key's first request has not answered, or 409
   * `idempotency_key_reused`. The claim stays until the advance answers: a request sent again after its
   * process died joins it and walks the jump the first one planned (`plans`), to its end.
   */
  beginAdvance(owner: string, key: string, fingerprint: string): Promise<AdvanceStart> {
    return this.storage.write(async (tx) => {
      const now = this.clock.now()
      if (await tx.idempotency.claim(owner, key, fingerprint, now, now - IDEMPOTENCY_RETENTION_SECONDS, 'advancing')) return {kind: 'started'}
      const answer = answerFor(await tx.idempotency.read(owner, key), fingerprint, now)
      // The record that refused the claim was pruned meanwhile (expired): the key is free again, for a retry to claim.
      if (!answer) throw inFlight()
      return answer
    })
  }

  /** Where a keyed clock advance keeps the jump it walks (its key's record, dated the jump's end on the clock). */
  plans(owner: string, key: string): AdvancePlans {
    return {
      settle: async (fresh, created) => {
        const kept = await this.storage.write((tx) => tx.idempotency.plan(owner, key, JSON.stringify(fresh), created))
        // No plan: the key's record is answered (its first request ended, and answered, while this one waited for the clock).
        if (kept === undefined) throw new AdvanceAnswered()
        return JSON.parse(kept) as AdvancePlan
      },
      end: async (store, plan, jobs) => {
        await store.idempotency.plan(owner, key, JSON.stringify({...plan, ended: true, jobs}), undefined)
      },
      answered: async () => {
        // Polled: the request that ended the jump stores its answer in the unit right after it gives the clock back.
        const deadline = performance.now() + ANSWER_WAIT_MS
        for (;;) {
          const record = await this.storage.reads.idempotency.read(owner, key)
          if (record?.state !== 'advancing') return record?.state === 'done'
          if (performance.now() >= deadline) return false
          await sleep(ANSWER_POLL_MS)
        }
      },
    }
  }

  /**
   * Stores a keyed clock advance's answer (or its rejection) to replay, in a unit of its own, unless another
   * request with the key stored one first (it found the jump ended and its first request silent: `AdvancePlans.answered`):
   * answers the one stored, so every request with the key gets the same answer.
   */
  answer(owner: string, key: string, status: number, body: string): Promise<{status: number; body: string; replayed: boolean}> {
    return this.storage.write(async (tx) => {
      if (await tx.idempotency.answer(owner, key, status, body)) return {status, body, replayed: false}
      const stored = await tx.idempotency.read(owner, key)
      return stored?.state === 'done' ? {status: stored.status!, body: stored.body!, replayed: true} : {status, body, replayed: false}
    })
  }

  /** Stores the response to replay; called inside the route's transaction for a success. */
  finish(tx: Store, credential: string, key: string, status: number, body: string): Promise<void> {
    return tx.idempotency.finish(credential, key, status, body)
  }

  /** Stores the rejection a key's request got (a 4xx), outside the rolled-back transaction of its write. */
  remember(credential: string, key: string, fingerprint: string, status: number, body: string): Promise<void> {
    return this.storage.write(async (tx) => {
      // The key's earlier record (a success committed meanwhile) wins: only an absent or expired one is replaced.
      if (await tx.idempotency.claim(credential, key, fingerprint, this.clock.now(), this.clock.now() - IDEMPOTENCY_RETENTION_SECONDS)) {
        await tx.idempotency.finish(credential, key, status, body)
      }
    })
  }
}

export interface PlatformOptions {
  db: string
  rateLimit: boolean
  rateLimits?: RateLimitConfig
  /** Base URL the gateway is reachable at; checkout URLs point there. Set once listening. */
  baseUrl?: string
  /**
   * How long a process's claim on a webhook delivery or a merchant's clock walk lasts (ms) before another
   * process may take it over (the claimer died). Default: `PAYAPP_GATEWAY_LEASE_MS`, else 30 s.
   */
  leaseMs?: number
}

/** The meta key whose value changes (a new random one) whenever credentials, fault rules or clocks change. */
const SHARED_VERSION = SHARED_VERSION_KEY
/** A unit's context's store (`Platform.contextClass`). */
const STORE = Symbol('store')
/**
 * The meta key naming the process that runs alone on the database, if one does: it skips the per-request
 * comparison of the shared version (`mustSync`) and counts rate limits in memory.
 */
const ALONE = 'process:alone'
/** How often a process alone on the database looks for one that joins (ms): what a join may wait. */
const JOIN_WATCH_MS = 50
/**
 * How long before its lease ends a process alone stops trusting that it still is (ms): an event loop stalled
 * past its lease may have let another process start alone meanwhile, so from then on each request compares
 * the shared version again, until a renewal finds the process still named alone.
 */
const ALONE_MARGIN_MS = 1000

/** Everything a route may use besides its own request. */
export class Platform {
  readonly storage: Storage
  readonly clock: Clock
  readonly credentials: Credentials
  readonly rateLimiter: RateLimiter
  readonly idempotency: Idempotency
  readonly webhooks: Webhooks
  /** Fault-injection rules (test set-up, per process): see domain/faults.ts. */
  readonly faults: FaultRules
  /** Due work on the clock (renewals, dunning, expiries); `advanceClock` walks it in time order. */
  readonly scheduler: Scheduler
  baseUrl: string
  /** The domain's context over the read handle; each write unit gets its own (`context`). */
  private readonly readTx: Tx
  /** The class of the contexts over one kind of store (`contextClass`): by the store's prototype, or a plain store itself. */
  private readonly contextClasses = new WeakMap<object, new (store: Store, services: object) => Tx>()

  /**
   * Whether other processes may share the database (any but `:memory:`): then each request first
   * compares the shared version (`sync`), unless this process is alone on it (`mustSync`), and rate
   * limits are counted in storage once another process joins (in memory while this one is alone: `rateCounters`).
   */
  readonly shared: boolean
  /** A shared database's rate counts: in memory while this process is alone on it, else in storage. */
  private readonly rateCounters?: HandoverRateCounters
  /** Whether this process started alone on the database and no other process has joined since (`start`). */
  private alone = false
  /** While alone: until when (ms) its lease, last renewed, vouches that no other process started meanwhile. */
  private aloneUntil = 0
  /** Since when (ms) this process is alone: any process lease live after it is one that joined (`leaveAlone`). */
  private aloneSince = 0
  /** While alone: the timer that looks for a joining process between requests. */
  private watch?: NodeJS.Timeout
  /** This process among those on the database: the owner of its delivery claims and clock leases. */
  readonly processId = newId('proc', 16)
  readonly leaseMs: number
  /** The shared version this process's caches, fault kinds and clock offsets were last read at. */
  private seen: string | undefined
  private syncing: Promise<void> | undefined
  /** The re-read started by the request that first met the current `external` token, while it runs. */
  private catchingUp: Promise<void> | undefined
  /** The storage's `external()` token at the last request, and how often it moved (part of every cached read's generation). */
  private external: string | undefined
  private externalChanges = 0

  private constructor(opts: PlatformOptions, storage: Storage, clockOffsets: ReadonlyMap<string, number>) {
    this.storage = storage
    this.shared = storage.location !== ':memory:'
    this.leaseMs = opts.leaseMs ?? (Number(process.env.PAYAPP_GATEWAY_LEASE_MS) || 30_000)
    this.clock = new Clock()
    this.clock.load(clockOffsets)
    const changed = (store: Store) => this.changed(store)
    this.credentials = new Credentials(this.storage, this.clock, changed)
    if (this.shared) this.rateCounters = new HandoverRateCounters(new StoredRateCounters(this.storage))
    this.rateLimiter = new RateLimiter(this.clock, opts.rateLimit, opts.rateLimits, this.rateCounters ?? new MemoryRateCounters())
    this.idempotency = new Idempotency(this.storage, this.clock)
    this.faults = new StoredFaults(this.storage, () => this.now(), changed)
    this.webhooks = new Webhooks(this.storage, (merchant) => this.clock.now(merchant), this.faults, {owner: this.processId, leaseMs: this.leaseMs})
    this.scheduler = new Scheduler(this.storage, this.clock, this.webhooks, (fn) => this.write(fn), {
      owner: this.processId,
      leaseMs: this.leaseMs,
      changed,
      sync: () => this.sync(),
    })
    this.baseUrl = opts.baseUrl ?? 'http://127.0.0.1'
    this.readTx = this.context(this.storage.reads, false)
  }

  /** Opens the storage and reads what the platform keeps across restarts (the clocks' offsets). */
  static async open(opts: PlatformOptions): Promise<Platform> {
    const storage = await openStorage(opts.db)
    // What tells of other processes' changes (the token, the shared version) before what they version: a change
    // committed in between (another process's clock walk storing its end) makes the first request read again.
    // Read after the offsets, they passed for them: this process kept a merchant's clock where the walk stood
    // when it started, until the next change. (This process's own release below moves neither.)
    const external = await storage.external()
    const seen = await storage.reads.meta(SHARED_VERSION)
    const platform = new Platform(opts, storage, await readOffsets(storage))
    await platform.idempotency.releaseInFlight()
    platform.external = external
    platform.seen = seen
    await platform.faults.refresh()
    return platform
  }

  /**
   * Joins the processes on the database (a `process:<id>` lease, renewed while this one runs) and sets
   * the fault rules up: the first process to start (none other is live) starts them afresh, clearing
   * what an earlier run left and adding `faults` (`gateway start --faults`); one that joins running
   * processes keeps the gateway's rules and adds none, so N processes started with one file strike once.
   *
   * Alone: the first process is named alone in storage. While it is, nothing but it commits to the
   * database, so its requests skip the comparison of the shared version (`mustSync`; on SQLite that read
   * was a sixth of a cached read's CPU), and it counts rate limits in memory (no storage write per
   * request). One that joins bumps the shared version in its joining unit and waits until the first has
   * seen it (within `JOIN_WATCH_MS`), compares the shared version on every request from then on, and
   * added the window's rate counts to storage: so no request of either process misses a change the
   * other made, and no request of the window is counted apart from the others.
   */
  async start(faults: readonly FaultInput[] = []): Promise<void> {
    const name = `process:${this.processId}`
    // Short (at most 5 s), so a process restarted soon after a kill -9 finds itself alone again.
    const leaseMs = Math.min(this.leaseMs, 5000)
    const join = (tx: Store, at: number) => tx.leases.acquire(name, this.processId, at + leaseMs, at)
    const countsRates = this.shared && this.rateLimiter.enabled
    let holder: string | undefined
    const at = Date.now()
    let since = 0
    const alone = await this.write(async (tx) => {
      since = Date.now()
      const alone = (await tx.leases.live('process:', since)) === 0
      // From the count on, so that `leaveAlone` counts this process's own lease among those since `since` too.
      await join(tx, since)
      if (!alone) {
        // A process alone until now trusts that nothing else commits: it must stop before this one serves.
        holder = (await tx.meta(ALONE)) || undefined
        if (holder) await this.changed(tx)
        return false
      }
      if (this.shared) await tx.setMeta(ALONE, this.processId)
      if (this.shared) await this.faults.clear(tx)
      for (const rule of faults) await this.faults.add(tx, rule)
      // This unit's own change of the shared version is no other process's.
      if (this.shared) this.seen = await tx.meta(SHARED_VERSION)
      return true
    })
    if (!this.shared) return
    if (alone) {
      this.alone = true
      this.aloneSince = since
      this.aloneUntil = at + leaseMs - ALONE_MARGIN_MS
      if (countsRates) this.rateCounters!.alone()
      this.watch = setInterval(() => void this.sync().catch(() => {}), JOIN_WATCH_MS)
      this.watch.unref()
    }
    // Renewed from now on, also while this one waits for the hand-over: a lease that ran out meanwhile would
    // let a process starting next believe itself alone.
    this.heartbeat = setInterval(() => void this.beat(join, leaseMs).catch(() => {}), Math.max(50, leaseMs / 3))
    this.heartbeat.unref()
    if (holder) await this.handedOver(holder)
  }

  /**
   * Whether a request must first compare the shared version (`sync`): on a database other processes may
   * share, unless this process is alone on it and its lease still vouches that no other has started.
   */
  get mustSync(): boolean {
    return this.shared && !(this.alone && this.aloneUntil > Date.now())
  }

  /** Renews this process's lease; one alone that finds itself no longer named alone leaves that state. */
  private async beat(join: (tx: Store, at: number) => Promise<boolean>, leaseMs: number): Promise<void> {
    let lost = false
    const at = Date.now()
    await this.storage.write(async (tx) => {
      await join(tx, at)
      // Its lease ran out (a stalled event loop) and a process that started meanwhile is alone too:
      // both leave that state (the other through the shared version).
      const named = await tx.meta(ALONE)
      if (this.alone && named !== this.processId) {
        lost = true
        await this.changed(tx)
      }
      // It left the state but its unit that clears the name failed: a joining process waits for the name.
      if (!this.alone && named === this.processId) await tx.setMeta(ALONE, '')
    })
    if (lost) await this.leaveAlone(true)
    else if (this.alone) this.aloneUntil = at + leaseMs - ALONE_MARGIN_MS
  }

  /** Waits until `holder` has left the alone state, or is gone (its lease ran out). */
  private async handedOver(holder: string): Promise<void> {
    for (;;) {
      if ((await this.storage.reads.meta(ALONE)) !== holder) return
      if ((await this.storage.reads.leases.live(`process:${holder}`, Date.now())) === 0) return
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }

  /**
   * Leaves the alone state once another process runs on the database (or `force`): each request compares
   * the shared version from now on, and rate limits are counted in storage, with what memory counted in
   * the window added. The switch is synchronous: a request after it syncs and is counted in storage, one
   * before it is in the carried counts. The name is cleared last, which lets the joining process go on.
   */
  private async leaveAlone(force = false): Promise<void> {
    if (!this.alone) return
    // The shared version also moves for this process's own changes (on PostgreSQL it is the sync token). Another
    // process is one whose lease was live at any time since this one went alone, not only now: every lease may
    // have run out meanwhile (a start-up that stalled before its first renewal), and one that joined still counts.
    if (!force && (await this.storage.reads.leases.live('process:', this.aloneSince)) <= 1 && (await this.storage.reads.meta(ALONE)) === this.processId) return
    if (!this.alone) return
    this.alone = false
    this.aloneUntil = 0
    clearInterval(this.watch)
    const carried = this.rateCounters?.share()
    await this.storage.write(async (tx) => {
      for (const [key, count] of carried?.counts ?? []) await tx.rates.hit(key, carried!.window, count)
      if ((await tx.meta(ALONE)) === this.processId) await tx.setMeta(ALONE, '')
    })
  }

  private heartbeat?: NodeJS.Timeout

  /**
   * Marks credentials, fault rules or clocks changed, in the changing unit: every process compares
   * this version on its next request (`sync`) and re-reads what it keeps of them.
   */
  async changed(store: Store): Promise<void> {
    this.changing.add(store)
    if (this.shared) await store.setMeta(SHARED_VERSION, randomText(16))
  }

  /** The units (their contexts) of `write` that changed credentials or fault rules (`changed`), until they settle. */
  private readonly changing = new WeakSet<object>()

  /**
   * After a unit of this process changed credentials or fault rules and settled (committed or rolled back):
   * what this process keeps of them is read again from committed data, before the unit answers. Not inside
   * the unit: a request reading storage before its commit would cache what was there before (a credential
   * then revoked), and a rolled-back unit would leave what never committed. Other processes catch up
   * through the shared version (`sync`).
   */
  private async reread(): Promise<void> {
    this.credentials.forget()
    await this.faults.refresh().catch(() => {})
  }

  /**
   * Brings this process's copies of shared state up to date before a request: the storage's `external()`
   * token says whether another process may have committed a change (SQLite: `data_version`; PostgreSQL: the
   * notifications its listening connection took in, or a version read while that cannot vouch); only when it
   * moved, one read of the shared version, and when that changed, the credential cache is dropped and the
   * fault rules' kinds and the clocks' offsets are read again. A change acknowledged before the request
   * began is seen.
   */
  async sync(): Promise<void> {
    if (!this.shared || !this.storage.open) return
    // Nothing committed by another process since the last request: nothing to compare (one query). A
    // request that met this token while an earlier one is still re-reading for it waits for that re-read.
    const external = await this.storage.external()
    if (external === this.external) return this.catchingUp
    this.external = external
    // Cached reads computed before may miss what another process wrote.
    this.externalChanges += 1
    const catchingUp = this.catchUp()
    this.catchingUp = catchingUp
    try {
      await catchingUp
    } finally {
      if (this.catchingUp === catchingUp) this.catchingUp = undefined
    }
  }

  /** Re-reads the shared version and, when it moved, what this process keeps of the shared state. */
  private async catchUp(): Promise<void> {
    // Twice at most: a re-read already under way may have started before this request's change.
    for (let round = 0; round < 2; round++) {
      const version = await this.storage.reads.meta(SHARED_VERSION)
      if (version === this.seen) return
      // Requests that meet the same change wait for one re-read.
      this.syncing ??= (async () => {
        this.credentials.forget()
        await this.faults.refresh()
        await this.scheduler.loadOffsets()
        // A process that joined bumped the version: this one leaves the alone state before it serves more.
        await this.leaveAlone()
        this.seen = version
      })().finally(() => (this.syncing = undefined))
      await this.syncing
    }
  }

  /**
   * A unit of work: `fn` gets the domain's context over one transaction; its writes, events, jobs and
   * webhook deliveries commit together when it resolves, or none when it throws. Never nest one.
   */
  async write<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    // Each run of `fn` (an engine may run a unit again) gets a context of its own.
    const units: Tx[] = []
    try {
      const result = await this.storage.write((store) => {
        const tx = this.context(store, true)
        units.push(tx)
        return fn(tx)
      })
      this.webhooks.committed()
      return result
    } finally {
      if (units.some((tx) => this.changing.delete(tx))) await this.reread()
    }
  }

  /** A read: `fn` gets the domain's context over committed data; it never waits for a unit of work. */
  read<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return fn(this.readTx)
  }

  /** The narrow context (domain/context.ts) over one storage handle: the store's members plus the platform's services. */
  private context(store: Store, writable: boolean): Tx {
    const services: Omit<Tx, keyof Store | 'baseUrl'> = {
      writable,
      writing: (fn) => (writable ? fn(tx) : this.write(fn)),
      now: (scope) => this.clock.now(scope.merchant),
      emit: (scope, type, object) => this.emit(store, scope, type, object),
      schedule: (scope, kind, ref, due) => store.jobs.insert({due, kind, merchant: scope.merchant, env: scope.env, ref}),
      cancelJobs: (ref, kind) => store.jobs.cancel(ref, kind),
      pendingJobs: (refs) => store.jobs.pending(refs),
      cachedRead: (key, kinds, compute) => this.cachedRead(key, kinds, compute),
      readsCached: this.storage.readsCached === true,
      // Given the unit's context, not its store: a change of shared state is marked on the unit (`changed`).
      issueCredential: (kind, merchant, env, scopes, more) => this.credentials.issue(tx, kind, merchant, env, scopes, more),
      revokeCredential: (id, kinds) => this.credentials.revoke(tx, id, kinds),
      endpoints: {
        create: (input) => this.webhooks.create(store, input),
        get: (id) => this.webhooks.get(store, id),
        list: (merchant) => this.webhooks.list(store, merchant),
        remove: (id) => this.webhooks.remove(store, id),
        deliveries: (id) => this.webhooks.deliveries(store, id),
        resend: (scope, event, endpoint) => this.webhooks.resend(store, scope, event, endpoint),
        rotateSecret: (id, expirePreviousIn, secret) => this.webhooks.rotateSecret(store, id, expirePreviousIn, secret),
      },
    }
    // PostgreSQL's units each have a store of their own, all of one prototype: one class serves them all.
    const proto = Object.getPrototypeOf(store) as object | null
    const key = proto === null || proto === Object.prototype ? store : proto
    let Context = this.contextClasses.get(key)
    if (!Context) this.contextClasses.set(key, (Context = this.contextClass(store)))
    const tx = new Context(store, services)
    return tx
  }

  /**
   * A class whose instances pass the members of a store like `sample` on to their own store (methods called on
   * it, other values read from it), with the platform's services as own properties. A unit's context used to be
   * an object whose prototype was its store: V8 turns each new prototype into a map of its own (12 µs a unit on
   * PostgreSQL, where every unit has a new store), and the domain's property reads through it missed their caches.
   */
  private contextClass(sample: Store): new (store: Store, services: object) => Tx {
    const baseUrl = () => this.baseUrl
    class Context {
      readonly [STORE]: Store
      constructor(store: Store, services: object) {
        this[STORE] = store
        Object.assign(this, services)
      }
      get baseUrl() {
        return baseUrl()
      }
    }
    const members = new Set<PropertyKey>()
    for (let o: object | null = sample; o && o !== Object.prototype; o = Object.getPrototypeOf(o) as object | null) {
      for (const k of Reflect.ownKeys(o)) if (k !== 'constructor') members.add(k)
    }
    for (const k of members) {
      const call = function (this: Context, ...args: unknown[]) {
        return (this[STORE] as unknown as Record<PropertyKey, (...a: unknown[]) => unknown>)[k]!(...args)
      }
      const read = function (this: Context) {
        return (this[STORE] as unknown as Record<PropertyKey, unknown>)[k]
      }
      const member = (sample as unknown as Record<PropertyKey, unknown>)[k]
      Object.defineProperty(Context.prototype, k, typeof member === 'function' ? {value: call} : {get: read})
    }
    return Context as unknown as new (store: Store, services: object) => Tx
  }

  /** Computed reads of this process (see `cachedRead`). */
  private readonly readCache: ReadCache = new MemoryReadCache()

  /**
   * A read served from memory while no document of the kinds it depends on has been written since it
   * was computed. Only for reads that depend on stored documents alone, not on the clock.
   */
  async cachedRead<T>(key: string, kinds: readonly Kind[], compute: () => Promise<T>): Promise<T> {
    const generation = `${this.externalChanges}/${this.storage.generation(kinds)}`
    const hit = this.readCache.get(key, generation)
    if (hit !== undefined) return hit as T
    const value = await compute()
    this.readCache.set(key, generation, value)
    return value
  }

  /**
   * Moves the merchant's clock forward (every clock without one); resolves once everything due up to
   * the new time has happened in time order (jobs, then the webhook attempts they and earlier events
   * made due, each finished and logged).
   */
  advanceClock(by: {seconds: number} | {to: number}, merchant?: string, plans?: AdvancePlans): Promise<AdvanceResult> {
    return this.scheduler.advance(by, merchant, plans)
  }

  /** The merchant's clock; without one, the shared clock (merchants that never moved alone). */
  now(merchant?: string): number {
    return this.clock.now(merchant)
  }

  /**
   * Appends an event to the merchant's log in the spec's envelope, in the caller's unit of work, so an
   * event exists exactly when its state change does; so do its webhook deliveries.
   */
  async emit(store: Store, scope: Scope, type: EventType, object: unknown): Promise<EventDoc> {
    const event: EventDoc = {id: newId('evt', 24), object: 'event', type, livemode: scope.env === 'live', created: this.now(scope.merchant), data: {object}}
    await store.insert('event', scope, event, {created: event.created})
    await this.webhooks.enqueue(store, scope, event)
    return event
  }

  /** Leaves the processes on the database (its lease released) and closes the storage. */
  async close(): Promise<void> {
    clearInterval(this.heartbeat)
    clearInterval(this.watch)
    if (this.heartbeat && this.storage.open) {
      const name = `process:${this.processId}`
      await this.storage.write((tx) => tx.leases.release(name, this.processId)).catch(() => {})
    }
    await this.storage.close()
  }
}
