/**
 * The gateway's storage, as the domain sees it: one interface, so a second backend (a PostgreSQL server
 * shared by many CI jobs) can be added next to storage/sqlite.ts without touching a rule. Platform
 * objects are JSON documents scoped by merchant and environment, so that "another merchant's or
 * environment's id is a 404" holds for every kind by construction, and a sandbox reset is one wipe.
 * Every call is asynchronous, as a database server's are. Writes happen only inside a unit of work
 * (`Storage.write`): its function gets a handle whose calls all belong to one transaction, committed when
 * the function resolves and rolled back when it throws. Reads outside a unit see committed data only.
 * Invariants (stock, idempotency, one payment per session) are conditional updates and unique
 * constraints, never "nothing else runs in between" (docs/architecture.md lists them).
 */
import {hash} from 'node:crypto'

import type {Documents, Env, Kind, MerchantDoc, Scope} from './documents.js'

export type {Documents, Env, Kind, Scope}

/** The meta key of the shared version: a new value whenever credentials, fault rules or clocks change (`Platform.changed`). */
export const SHARED_VERSION_KEY = 'shared_version'

/**
 * A condition on a document field. `eq`, `in`, `gt` and `lte` compare with a caller's value; `is`
 * compares with a constant of the code (a status), which a backend may inline so partial indexes apply.
 */
export type Condition =
  | {field: string; eq: string | number}
  | {field: string; is: string}
  | {field: string; in: readonly (string | number)[]}
  | {field: string; gt: number}
  | {field: string; lte: number}

/**
 * A write refused by a unique constraint (one payment per session, one active price per lookup key):
 * another unit stored the same thing first. The API answers 409; nothing of the unit is kept.
 */
export class UniqueViolation extends Error {
  override readonly name = 'UniqueViolation'
}

/**
 * The database could not be reached for a unit or a read (a server restarting or failing over, the network):
 * not the request's fault, and over once the server is back. The API answers 503, which clients retry with the
 * same Idempotency-Key: a unit whose commit never reached the server stored nothing, and one whose commit did is
 * replayed from its idempotency record.
 */
export class StorageUnavailable extends Error {
  override readonly name = 'StorageUnavailable'
  /**
   * The server answers but takes no writes (SQLSTATE 25006: a standby, or a primary fenced read-only for a
   * switchover; 53100: its disk is full): reads still work, writes are refused until a writable server is behind
   * the URL, or there is room again.
   */
  readonly readOnly: boolean

  constructor(message: string, options?: ErrorOptions & {readOnly?: boolean}) {
    super(message, options)
    this.readOnly = options?.readOnly ?? false
  }
}

/**
 * Another request or process held what this write needs (PostgreSQL: its rows, past `lock_timeout`; SQLite: the
 * file's write lock, past the busy timeout) for longer than the gateway waits: nothing was written, and the same
 * request may be sent again in a moment (429 lock_timeout, as the best-known payments API answers contention).
 */
export class StorageBusy extends Error {
  override readonly name = 'StorageBusy'
}

/**
 * A storage's reachability as it last found it: `available` false on the first failure to reach it (or to write,
 * `readOnly`), true on the first success after (a read ends an outage, only a write ends a read-only spell).
 */
export type AvailabilityChange = {available: false; reason: string; readOnly: boolean} | {available: true; downMs: number; readOnly: boolean}

/**
 * A storage's availability as its statements find it (`Storage.onAvailability`): listeners hear once when it stops
 * answering (or taking writes) and once when it answers (takes a write) again, not once per failed request.
 */
export class Availability {
  /** Since when the database has not answered (the first failure to reach it) or taken writes (`readOnly`), while it has not since. */
  private down?: {since: number; readOnly: boolean}
  private readonly listeners: Array<(change: AvailabilityChange) => void> = []
  /** Set when the storage closes: what fails after is the closing, not an outage. */
  closed = false

  listen(listener: (change: AvailabilityChange) => void): void {
    this.listeners.push(listener)
  }

  /** A read (`wrote` false) or a unit was answered: the database is back if it was away; writable if a unit committed. */
  reached(wrote = false): void {
    const down = this.down
    if (down === undefined || (down.readOnly && !wrote)) return
    this.down = undefined
    for (const listener of this.listeners) listener({available: true, downMs: Date.now() - down.since, readOnly: down.readOnly})
  }

  /** A statement or a unit failed: told once per outage (or read-only spell) when the database could not be reached (or written). */
  failed(error: unknown): void {
    if (!(error instanceof StorageUnavailable) || this.down?.readOnly === error.readOnly || this.closed) return
    this.down = {since: this.down?.since ?? Date.now(), readOnly: error.readOnly}
    for (const listener of this.listeners) listener({available: false, reason: error.message, readOnly: error.readOnly})
  }
}

/**
 * A variant's option combination as its unique key (`insert`'s `key`): the first 24 hex digits of the
 * SHA-256 of its option value ids, sorted and joined by commas (each value belongs to one group, so the
 * values name the combination). PostgreSQL's migration computes the same in SQL (postgres.ts).
 */
export const combinationKey = (options: readonly {value: string}[]): string =>
  hash(
    'sha256',
    options
      .map((o) => o.value)
      .sort()
      .join(','),
    'hex',
  ).slice(0, 24)

/** Where a new document goes: its parent, its creation time, and its key, unique among the parent's children. */
export interface InsertOptions {
  parent?: string | null
  created: number
  /** Unique among the documents with the same parent (a variant's option combination): a second is a `UniqueViolation`. */
  key?: string
}

export interface Increment {
  field: string
  by: number
  atMost?: string
  floor?: number
  set?: Record<string, unknown>
}

export interface PageQuery {
  limit: number
  offset: number
  /** Only the children of this document (a product's prices). */
  parent?: string
  /** Cursor pagination: only documents older than this one (an id of the same scope; unknown: none). */
  starting_after?: string
  where?: readonly Condition[]
}

/** A page of stored JSON, newest first: raw so a list route can splice it into its answer unparsed. */
export interface RawPage {
  rows: string[]
  ids: string[]
  hasMore: boolean
}

export interface DocumentStore {
  insert<K extends Kind>(kind: K, scope: Scope, doc: Documents[K], opts: InsertOptions): Promise<Documents[K]>
  /** Replaces a document; the caller has read it through a scoped `get` first. */
  save<T extends {id: string}>(doc: T): Promise<T>
  /**
   * Replaces a document only while the stored one still meets `where` (compare-and-set, e.g. on its
   * `revision`): false when another write changed it first. A rule that must not lose a concurrent
   * update uses this, not read-then-`save`.
   */
  replaceIf<T extends {id: string}>(doc: T, where: readonly Condition[]): Promise<boolean>
  /**
   * Adds `by` to a numeric field in one conditional update, with `set` fields written alongside: only
   * while the result stays at most the value of the field `atMost` (stock: `reserved + qty <= stock`);
   * never below `floor` when given. The updated document, or undefined when the guard failed or no
   * such document is in the scope.
   */
  increment<K extends Kind>(kind: K, scope: Scope, id: string, change: Increment): Promise<Documents[K] | undefined>
  remove(id: string): Promise<void>
  /** One document of `kind` in the scope; undefined for a missing id and for another scope's id alike. */
  get<K extends Kind>(kind: K, scope: Scope, id: string): Promise<Documents[K] | undefined>
  /**
   * `get`, with the document's row locked until the unit ends where units run concurrently (PostgreSQL, in
   * a unit: `exclusive` is `FOR UPDATE`, which waits for every other lock of the row and holds off every
   * other; `shared` is `FOR KEY SHARE`, which waits for and holds off only an exclusive one). Units that
   * must not interleave lock one row they share (a product's: docs/architecture.md, "Invariants the storage
   * enforces"). SQLite runs units one at a time: the same statement as `get`; outside a unit, a `get`.
   */
  lock<K extends Kind>(kind: K, scope: Scope, id: string, mode: 'exclusive' | 'shared'): Promise<Documents[K] | undefined>
  /** The documents of `kind` in the scope with these ids, in no particular order (one statement, however many). */
  getMany<K extends Kind>(kind: K, scope: Scope, ids: readonly string[]): Promise<Documents[K][]>
  /** A document by id in whatever scope holds it: for the admin API and the hosted page, which carry no credential. */
  find<K extends Kind>(kind: K, id: string): Promise<{scope: Scope; doc: Documents[K]} | undefined>
  /** Every document of `kind` in the scope (under `parent` if given), oldest first. */
  all<K extends Kind>(kind: K, scope: Scope, parent?: string): Promise<Documents[K][]>
  /** Every document of `kind` in the scope that meets all conditions, oldest first (expiry sweeps read due ones). */
  where<K extends Kind>(kind: K, scope: Scope, where: readonly Condition[]): Promise<Documents[K][]>
  /** Ids of the documents of `kind` that meet all conditions, in the scope (and under `parent` if given). */
  ids(kind: Kind, scope: Scope, where: readonly Condition[], parent?: string): Promise<string[]>
  /** The id of the parent's child of `kind` in the scope inserted with this `key`, if any. */
  keyed(kind: Kind, scope: Scope, parent: string, key: string): Promise<string | undefined>
  /** The largest `sort_order` among a product's variants (a new variant's default follows it); null when it has none. */
  lastVariantSortOrder(product: string): Promise<number | null>
  /** A page of documents, newest first, plus whether more exist. */
  page<K extends Kind>(kind: K, scope: Scope, query: PageQuery): Promise<{docs: Documents[K][]; hasMore: boolean}>
  pageRaw(kind: Kind, scope: Scope, query: PageQuery): Promise<RawPage>
  /** The stored JSON of the children of `kind` of each parent, newest first. */
  childrenRaw(kind: Kind, scope: Scope, parents: readonly string[]): Promise<Map<string, string[]>>
  /** Wipes one merchant's documents in one environment (the sandbox reset); returns how many. */
  wipe(scope: Scope): Promise<number>
}

export interface CredentialRecord {
  id: string
  kind: 'installation' | 'secret_key' | 'publishable_key'
  merchant: string
  env: Env
  scopes: string[]
  /** Last characters of the token, for logs and listings. */
  hint: string
  /** Browser origins a publishable key may be used from; null for other kinds. */
  origins: string[] | null
}

export interface CredentialTable {
  insert(record: CredentialRecord & {tokenHash: string; appName: string | null; created: number}): Promise<void>
  /** False when no unrevoked credential of that kind has the id. */
  revoke(id: string, kind: CredentialRecord['kind'], at: number): Promise<boolean>
  byTokenHash(tokenHash: string): Promise<CredentialRecord | undefined>
  /** An unrevoked credential by its id (an app's webhook endpoint checks its installation's scopes). */
  byId(id: string): Promise<CredentialRecord | undefined>
  /** Every origin an unrevoked publishable key lists, each once: the origins CORS may answer (cors.ts). */
  browserOrigins(): Promise<string[]>
}

export interface IdempotencyRecord {
  fingerprint: string
  /** `advancing`: a keyed clock advance's, its plan in `body` once it has one (no answer yet); `done`: the answer to replay. */
  state: 'in_flight' | 'advancing' | 'done'
  status: number | null
  body: string | null
  created: number
}

export interface IdempotencyTable {
  read(credential: string, key: string): Promise<IdempotencyRecord | undefined>
  /**
   * Marks the key in flight for this fingerprint: a new row, or one created at or before
   * `expiredBefore` replaced. False when a live record holds the key (another request claimed it first).
   */
  claim(credential: string, key: string, fingerprint: string, now: number, expiredBefore: number, state?: 'in_flight' | 'advancing'): Promise<boolean>
  /**
   * A keyed clock advance's plan (the jump it walks, JSON): stores `plan`, dated `created`, unless the key's
   * `advancing` record has one already; answers the record's plan (undefined when it holds none: gone or done).
   * Without `created`, replaces the plan the record holds (its jump ended), keeping its date.
   */
  plan(credential: string, key: string, plan: string, created: number | undefined): Promise<string | undefined>
  finish(credential: string, key: string, status: number, body: string): Promise<void>
  /** A keyed clock advance's answer, stored unless its record holds one already (another request with the key answered first, or it is gone): false then. */
  answer(credential: string, key: string, status: number, body: string): Promise<boolean>
  /** Deletes every claim still in flight (one a crashed process of an older version committed). */
  releaseInFlight(): Promise<void>
  /** Deletes records created at or before `before`. */
  prune(before: number): Promise<void>
}

export interface WebhookEndpointRecord {
  id: string
  merchant: string
  env: Env
  url: string
  events: string[]
  secret: string
  /** An installed app's endpoint (`inst_…`): it receives only what the app's scopes may read; null for the merchant's own. */
  installation: string | null
  created: number
  /** Secrets replaced by a rotation that still sign until `expires` (gateway clock), newest first. */
  previous_secrets: Array<{secret: string; expires: number}>
}

/** What a webhook fault rule did to a delivery when it was queued (see domain/faults.ts). */
export interface DeliveryFault {
  /** The rule's id. */
  rule: string
  /** Attempts to record as failed (timeouts) without sending. */
  failAttempts: number
  /** Delivery-level effects: the copy of `duplicateOf`, held, reordered. */
  effects: Array<'duplicate' | 'delayed' | 'reordered'>
  duplicateOf?: number
  heldUntil?: number
  /** Sort key among due deliveries (default: the delivery's id); reordered ones sort newest first within their batch. */
  ord?: number
}

export interface DueDelivery {
  id: number
  endpoint: string
  event_id: string
  event_type: string
  body: string
  attempts: number
  /** The fault rule that struck it, and how many of its first attempts fail without being sent. */
  fault: string | null
  fail_attempts: number
}

export interface DeliveryAttempt {
  delivery: number
  event_id: string
  event_type: string
  attempt: number
  attempted: number
  status: number | null
  error: string | null
  next_attempt: number | null
  /** The attempt was failed by a fault rule, not sent. */
  injected: boolean
  fault: string | null
  effects: Array<'duplicate' | 'delayed' | 'reordered'>
  duplicate_of: number | null
  held_until: number | null
}

/** Webhook endpoints and an outbox of deliveries written in the transaction of the event they carry. */
export interface WebhookTable {
  insertEndpoint(endpoint: WebhookEndpointRecord): Promise<void>
  endpoint(id: string): Promise<WebhookEndpointRecord | undefined>
  /** The merchant's endpoints, newest first. */
  endpointsOf(merchant: string): Promise<WebhookEndpointRecord[]>
  endpointsIn(scope: Scope): Promise<WebhookEndpointRecord[]>
  /** Deletes the endpoint with its pending deliveries and their log. */
  removeEndpoint(id: string): Promise<boolean>
  /** Replaces an endpoint's secret, keeping earlier ones that still sign until their expiry. */
  setSecrets(id: string, secret: string, previous: WebhookEndpointRecord['previous_secrets']): Promise<void>
  /** Queues a delivery, due at `at`, as a fault rule may have changed it; answers its id. */
  enqueue(endpoint: string, event: {id: string; type: string}, body: string, at: number, fault?: DeliveryFault): Promise<number>
  /** Endpoints with pending deliveries (of one merchant, or all), with their merchant and earliest due time. */
  pendingEndpoints(merchant?: string): Promise<{endpoint: string; merchant: string; due: number}[]>
  /** An endpoint's due deliveries, in delivery order (their `ord`, else their id). */
  dueFor(endpoint: string, now: number, limit: number): Promise<DueDelivery[]>
  /** When the earliest pending attempt (of the merchant's endpoints) is due; undefined when none is. */
  nextDue(merchant: string): Promise<number | undefined>
  /** Records one attempt and what follows it (the next attempt, or delivered / given up). */
  /**
   * Records one attempt and what follows it (the next attempt, or delivered / given up), releasing the
   * claim. With `owner`, only while that process still holds the delivery: false (nothing recorded)
   * when its lease ran out and another process took the delivery over.
   */
  recordAttempt(
    delivery: number,
    attempt: number,
    at: number,
    outcome: {status: number | null; error: string | null; next: number | null; delivered: boolean; injected?: boolean},
    owner?: string,
  ): Promise<boolean>
  /**
   * Claims the endpoint's first `limit` due deliveries (clock time `now`; delivery order) for `owner`
   * until `leaseUntil` (wall-clock ms), in one statement, and answers them in delivery order; none while
   * another owner's lease on one of the endpoint's deliveries is live at `wallNow` (one process sends to
   * an endpoint at a time, so events stay in order). A lease that ran out (its process died) is taken
   * over; the owner's own claims are renewed. PostgreSQL: the first due delivery is locked `FOR UPDATE
   * SKIP LOCKED`, so a process claiming the endpoint right now makes this one claim nothing.
   */
  claim(endpoint: string, owner: string, now: number, wallNow: number, leaseUntil: number, limit: number): Promise<DueDelivery[]>
  /** Gives up every claim of `owner` (a process stopping): another process may send them at once. */
  release(owner: string): Promise<void>
  /** How many deliveries of the merchant's endpoints have an attempt due at or before `upTo` (claimed or not). */
  dueCount(merchant: string, upTo: number): Promise<number>
  attempts(endpoint: string): Promise<DeliveryAttempt[]>
  /**
   * Per event (of those given that have deliveries), over the endpoints it was queued for: how many got it
   * (some delivery succeeded), are failing (attempted, none succeeded: retrying or given up), or were not attempted yet.
   */
  deliveryCounts(eventIds: readonly string[]): Promise<Map<string, {delivered: number; failing: number; unattempted: number}>>
}

/** Due work on the clock (see scheduler.ts): one row per job, run once when the clock reaches `due`. */
export interface Job {
  id: number
  /** Clock time (Unix seconds) at which the job is due. */
  due: number
  kind: string
  merchant: string
  env: Env
  /** The object the job is about (a subscription id, a session id, an invoice id). */
  ref: string
}

export interface JobTable {
  insert(job: Omit<Job, 'id'>): Promise<void>
  /** The merchant's soonest job due at or before `now` on its clock (ties in insertion order). */
  next(merchant: string, now: number): Promise<Job | undefined>
  /** When the merchant's soonest job is due; undefined when none is pending. */
  earliest(merchant: string): Promise<number | undefined>
  /** The merchants with pending jobs. */
  merchants(): Promise<string[]>
  /** Claims a job: false when another runner removed it first (a job runs once). */
  remove(id: number): Promise<boolean>
  /** Drops the pending jobs of `ref` (of one kind, or all). */
  cancel(ref: string, kind?: string): Promise<void>
  /** The pending jobs of these refs, soonest first. */
  pending(refs: readonly string[]): Promise<Job[]>
}

/** Request counts per key in fixed windows, shared by every process on the database. */
export interface RateTable {
  /**
   * Counts one request of `key` in `window` (`by` of them: the counts a process kept in memory while it
   * ran alone, handed over) and answers the window's count so far: one UPSERT.
   */
  hit(key: string, window: number, by?: number): Promise<number>
  /** Drops the counts of windows before `window`. */
  prune(window: number): Promise<void>
}

/** A stored fault rule: the admin API's JSON (with its hits and remaining count) and its generator's state. */
export interface FaultRow {
  id: string
  rule: string
  draws: number
}

/** The fault rules (domain/faults.ts), oldest first, shared by every process on the database. */
export interface FaultTable {
  all(): Promise<FaultRow[]>
  insert(row: FaultRow): Promise<void>
  update(row: FaultRow): Promise<void>
  remove(id: string): Promise<boolean>
  clear(): Promise<number>
}

/** Named leases between processes (a merchant's clock walk): held by one owner until a wall-clock time. */
export interface LeaseTable {
  /** Takes or renews the lease until `until` (ms): true when it is free, ran out before `now`, or is already the owner's. */
  acquire(name: string, owner: string, until: number, now: number): Promise<boolean>
  release(name: string, owner: string): Promise<void>
  /** How many leases whose name starts with `prefix` run until after `now`: live then, or since (the running processes: `process:`). */
  live(prefix: string, now: number): Promise<number>
}

/** What a unit of work (and a read) reaches: the documents and every table. */
export interface Store extends DocumentStore {
  meta(key: string): Promise<string | undefined>
  setMeta(key: string, value: string): Promise<void>
  /** Every meta entry whose key starts with `prefix`. */
  metaWithPrefix(prefix: string): Promise<[key: string, value: string][]>
  /**
   * `lock`: in a unit, the merchant's row is held until the unit ends, against other units' locks of it (SQLite runs
   * units one at a time and needs none): what the unit counts under it (a plan's limits) holds across processes.
   */
  merchant(id: string, lock?: 'exclusive'): Promise<MerchantDoc | undefined>
  /** The merchant whose store has this slug (the storefront's address). */
  merchantBySlug(slug: string): Promise<MerchantDoc | undefined>
  saveMerchant(doc: MerchantDoc): Promise<void>
  /** Bytes stored with a document (an uploaded file's); they go when the document goes. */
  putBlob(id: string, bytes: Buffer): Promise<void>
  blob(id: string): Promise<Buffer | undefined>
  readonly credentials: CredentialTable
  readonly idempotency: IdempotencyTable
  readonly webhooks: WebhookTable
  readonly jobs: JobTable
  readonly rates: RateTable
  readonly faults: FaultTable
  readonly leases: LeaseTable
  /**
   * A unit's last write, settled at its COMMIT instead of now (PostgreSQL only): the COMMIT goes out without
   * waiting for the write's answer, one round trip less, and a failure of `write` (its rejection, as the
   * domain mapped it) is the unit's failure, so nothing is acknowledged that did not happen. Where it is
   * absent (SQLite, whose statements answer at once), await the write instead.
   */
  atCommit?(write: Promise<unknown>): Promise<void>
}

export interface WriteOptions {
  /**
   * false: the unit may answer once its statements ran, before its COMMIT (a rate-limit count, which a
   * crash may lose harmlessly, need not wait for the batch's). Default true: answered once committed.
   */
  durable?: boolean
}

export interface Storage {
  /** Where the data lives (a file path, `:memory:`, a PostgreSQL URL without its password), for messages. */
  readonly location: string
  readonly open: boolean
  /**
   * A unit of work: `fn`'s writes commit together when it resolves, or none when it throws. On SQLite
   * units run one at a time (BEGIN IMMEDIATE behind a queue); a unit must never start another (deadlock).
   */
  write<T>(fn: (tx: Store) => Promise<T>, opts?: WriteOptions): Promise<T>
  /** Reads of committed data; never waits for a unit. Its write methods throw. */
  readonly reads: Store
  /** Changes whenever a committed write of this process may have changed a document of one of `kinds`; see `Platform.cachedRead`. */
  generation(kinds: readonly Kind[]): string
  /** True when `generation` stays put between this process's writes, so cached reads are reused (SQLite); absent, each call is new. */
  readonly readsCached?: boolean
  /**
   * A token that changes whenever another process may have committed to the database since it was last
   * read (SQLite: the writer connection's `PRAGMA data_version`). An engine that cannot tell answers a
   * new token each time. Each request reads it once (`Platform.sync`); only when it moved does the
   * process read the shared version and drop its cached reads.
   */
  external(): Promise<string>
  /** Closes the database once units in flight are done (a server's pool ends asynchronously). */
  close(): Promise<void> | void
  /**
   * Tells `listener` when the database stops answering and when it answers again (a server's: PostgreSQL); an
   * engine in the process itself (SQLite) has no such outage and no such method.
   */
  onAvailability?(listener: (change: AvailabilityChange) => void): void
}
