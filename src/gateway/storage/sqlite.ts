/**
 * The SQLite backend of the storage interface (better-sqlite3, or node:sqlite where sqlite-driver.ts says): one database file (or `:memory:`),
 * documents as JSON in one table, every statement prepared once per connection. Units of work run one at
 * a time on the writer connection (BEGIN IMMEDIATE behind an async queue); reads run on a second
 * connection (WAL: a committed snapshot, never waiting for the writer), or on the one connection of an
 * in-memory database. The driver is synchronous: each call runs at once inside an async facade, so a
 * read costs no queue and no I/O wait.
 */
import {mkdirSync} from 'node:fs'
import {dirname} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'

import type Database from 'better-sqlite3'

import type {Documents, Kind, MerchantDoc, Scope} from './documents.js'
import {Checkpoints} from './checkpoints.js'
import {openDatabase} from './sqlite-driver.js'
import {CREDENTIAL_COLUMNS, credentialRecord, type CredentialRow, credentialRow, endpointRecord, type EndpointRow, name, objectRow, refuseWrite, TABLES, WRITES} from './sql.js'
import {Availability, type AvailabilityChange, combinationKey, StorageBusy, StorageUnavailable, UniqueViolation} from './storage.js'
import type {
  Condition,
  CredentialRecord,
  CredentialTable,
  DeliveryAttempt,
  DueDelivery,
  FaultRow,
  FaultTable,
  IdempotencyRecord,
  IdempotencyTable,
  Increment,
  InsertOptions,
  Job,
  JobTable,
  LeaseTable,
  PageQuery,
  RateTable,
  RawPage,
  Storage,
  Store,
  WebhookTable,
} from './storage.js'

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS merchants (
  id TEXT PRIMARY KEY,
  created INTEGER NOT NULL,
  data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS credentials (
  id TEXT PRIMARY KEY,
  token_hash TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  merchant TEXT NOT NULL REFERENCES merchants(id),
  env TEXT NOT NULL,
  scopes TEXT NOT NULL,
  hint TEXT NOT NULL,
  app_name TEXT,
  created INTEGER NOT NULL,
  revoked INTEGER,
  origins TEXT
);
CREATE TABLE IF NOT EXISTS objects (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  merchant TEXT NOT NULL,
  env TEXT NOT NULL,
  parent TEXT,
  created INTEGER NOT NULL,
  data TEXT NOT NULL,
  unique_key TEXT
);
CREATE INDEX IF NOT EXISTS objects_by_scope ON objects (merchant, env, kind, seq);
-- Children of one parent (a product's prices, a group's values): equality on all four columns lets the
-- planner prefer this index over objects_by_scope, which would scan every object of the kind.
DROP INDEX IF EXISTS objects_by_parent;
CREATE INDEX IF NOT EXISTS objects_by_parent_scope ON objects (parent, kind, merchant, env, seq);
-- Catalogue uniqueness checks (a variant's option combination, its SKU) and the default sort order
-- are index lookups, so creating the 10,000th variant costs what the first did. A variant's option
-- combination is its unique_key (a short hash, domain/variants.ts): the unique index objects_unique_key
-- (made by uniqueKeys below) refuses a second variant of a product with the combination, and holds a
-- tenth of the bytes the index on the combination's JSON did (half of a keyed variant creation's WAL).
DROP INDEX IF EXISTS variants_by_combination;
DROP INDEX IF EXISTS variants_by_combination_scoped;
-- One variant per SKU in a merchant's environment (a null SKU is no SKU), one option group per name in a
-- product and one value per text in a group, ignoring case (SQLite's lower() folds ASCII only; the domain's
-- check, which units never interleave with here, folds the rest): as on PostgreSQL, where units do interleave.
DROP INDEX IF EXISTS variants_by_sku;
CREATE UNIQUE INDEX IF NOT EXISTS variants_unique_sku ON objects (merchant, env, json_extract(data, '$.sku')) WHERE kind = 'variant';
CREATE UNIQUE INDEX IF NOT EXISTS option_groups_unique_name ON objects (parent, lower(json_extract(data, '$.name'))) WHERE kind = 'option_group';
CREATE UNIQUE INDEX IF NOT EXISTS option_values_unique_value ON objects (parent, lower(json_extract(data, '$.value'))) WHERE kind = 'option_value';
-- The expiry sweep reads only open sessions that are due, not every session.
CREATE INDEX IF NOT EXISTS checkout_sessions_open_by_expiry ON objects (merchant, env, json_extract(data, '$.expires_at'))
  WHERE kind = 'checkout_session' AND json_extract(data, '$.status') = 'open';
-- One payment per checkout session: a second attempt that is not a failure cannot be stored, whatever
-- interleaves (failed attempts stay, one row each).
CREATE UNIQUE INDEX IF NOT EXISTS payments_one_per_session ON objects (json_extract(data, '$.session_id'))
  WHERE kind = 'payment' AND json_extract(data, '$.session_id') IS NOT NULL AND json_extract(data, '$.status') <> 'failed';
CREATE INDEX IF NOT EXISTS variants_by_sort_order ON objects (parent, json_extract(data, '$.sort_order')) WHERE kind = 'variant';
-- A price's lookup_key, found by seeking (the one-active-price check before a write and its transfer).
CREATE INDEX IF NOT EXISTS prices_by_lookup_key ON objects (merchant, env, json_extract(data, '$.lookup_key')) WHERE kind = 'price';
-- Webhooks: endpoints per merchant and environment, and an outbox of deliveries written in the
-- transaction of the event they carry, so a rolled-back request delivers nothing.
CREATE TABLE IF NOT EXISTS webhook_endpoints (
  id TEXT PRIMARY KEY,
  merchant TEXT NOT NULL,
  env TEXT NOT NULL,
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  secret TEXT NOT NULL,
  created INTEGER NOT NULL,
  installation TEXT,
  previous_secrets TEXT
);
CREATE INDEX IF NOT EXISTS webhook_endpoints_by_scope ON webhook_endpoints (merchant, env);
CREATE TABLE IF NOT EXISTS webhook_deliveries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  endpoint TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  body TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt INTEGER,
  delivered INTEGER,
  created INTEGER NOT NULL,
  fault TEXT,
  fail_attempts INTEGER NOT NULL DEFAULT 0,
  effects TEXT,
  duplicate_of INTEGER,
  held_until INTEGER,
  ord REAL,
  owner TEXT,
  lease_until INTEGER
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (next_attempt) WHERE next_attempt IS NOT NULL;
CREATE INDEX IF NOT EXISTS webhook_deliveries_by_event ON webhook_deliveries (event_id);
CREATE INDEX IF NOT EXISTS webhook_deliveries_due_by_endpoint ON webhook_deliveries (endpoint, next_attempt) WHERE next_attempt IS NOT NULL;
CREATE TABLE IF NOT EXISTS webhook_attempts (
  delivery INTEGER NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  attempt INTEGER NOT NULL,
  attempted INTEGER NOT NULL,
  status INTEGER,
  error TEXT,
  next_attempt INTEGER,
  injected INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (delivery, attempt)
);
CREATE TABLE IF NOT EXISTS idempotency (
  credential TEXT NOT NULL,
  key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  state TEXT NOT NULL,
  status INTEGER,
  body TEXT,
  created INTEGER NOT NULL,
  PRIMARY KEY (credential, key)
);
-- An uploaded file's bytes belong to its document: deleting the document (a sandbox reset) deletes them.
CREATE TABLE IF NOT EXISTS file_blobs (id TEXT PRIMARY KEY REFERENCES objects(id) ON DELETE CASCADE, bytes BLOB NOT NULL);
-- Due work on the clock: renewals, dunning retries, reminders, expiries (scheduler.ts).
CREATE TABLE IF NOT EXISTS jobs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  due INTEGER NOT NULL,
  kind TEXT NOT NULL,
  merchant TEXT NOT NULL,
  env TEXT NOT NULL,
  ref TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_by_due ON jobs (due, id);
-- Each merchant's due work on its own clock (one test clock per merchant).
CREATE INDEX IF NOT EXISTS jobs_by_merchant_due ON jobs (merchant, due, id);
CREATE INDEX IF NOT EXISTS jobs_by_ref ON jobs (ref, kind);
-- What several gateway processes on one database share (docs/architecture.md, "Per-process state"):
-- rate-limit counts per key and window, the fault rules with their counts and draws, and leases (a
-- merchant's clock walk).
CREATE TABLE IF NOT EXISTS rate_counts (key TEXT NOT NULL, win INTEGER NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (key, win));
CREATE TABLE IF NOT EXISTS fault_rules (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, rule TEXT NOT NULL, draws INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS leases (name TEXT PRIMARY KEY, owner TEXT NOT NULL, until INTEGER NOT NULL);
`


/** How long a write waits for another process's write lock on a shared file. */
const BUSY_TIMEOUT_MS = 10_000
/**
 * The wait between tries for that lock (`SqliteStorage.lockFile`), ms: every millisecond. SQLite's own busy
 * handler's growing waits (1, 2, 5, … 100 ms: sqliteDefaultBusyCallback) starved a process whose tries had grown
 * long, while the others, each taking the lock again right after its commit, held it almost all the time: with
 * three processes on one file under 50 connections of keyed writes, p99 189 ms and requests waiting up to 1.7 s,
 * against p99 31 ms and at most 50 ms with a try every millisecond, at the same rate (scripts/bench/shared.js,
 * "SQLite file, 3 behind HAProxy"). A failed try is a few µs.
 */
const BUSY_RETRY_MS = 1

const busy = (error: unknown) => String((error as {code?: unknown}).code ?? '').startsWith('SQLITE_BUSY')

const field = (f: string) => `json_extract(data, '$.${name(f)}')`

/** One condition as SQL and its bound values; `is` constants are inlined so the partial indexes above apply. */
function condition(c: Condition): [string, unknown[]] {
  if ('eq' in c) return [`${field(c.field)} = ?`, [c.eq]]
  if ('is' in c) return [`${field(c.field)} = '${name(c.is)}'`, []]
  if ('in' in c) return [`${field(c.field)} IN (${c.in.map(() => '?').join(', ') || 'NULL'})`, [...c.in]]
  if ('gt' in c) return [`${field(c.field)} > ?`, [c.gt]]
  return [`${field(c.field)} <= ?`, [c.lte]]
}

/** `kind = '<kind>' AND merchant = ? AND env = ? [AND parent = ?] [AND conditions]`, with its values. */
function scoped(kind: Kind, scope: Scope, where: readonly Condition[] = [], parent?: string): [string, unknown[]] {
  const parts = [`kind = '${name(kind)}'`, 'merchant = ?', 'env = ?']
  const args: unknown[] = [scope.merchant, scope.env]
  if (parent !== undefined) {
    parts.unshift('parent = ?')
    args.unshift(parent)
  }
  for (const c of where) {
    const [sql, values] = condition(c)
    parts.push(sql)
    args.push(...values)
  }
  return [parts.join(' AND '), args]
}

/** A table's methods as the synchronous driver runs them. */
type Sync<T> = {[K in keyof T]: T[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => R : T[K]}


/**
 * The asynchronous `Store` over one synchronous connection: every call runs now and resolves (or
 * rejects) with its result. A read handle's write methods throw, so a write outside a unit fails loudly.
 */
function facade(conn: SqliteConnection, writable: boolean): Store {
  const wrap = (target: object, methods: Iterable<string>, writes: ReadonlySet<string>) => {
    const out: Record<string, unknown> = {}
    for (const name of methods) {
      const fn = (target as Record<string, (...args: unknown[]) => unknown>)[name]
      out[name] =
        !writable && writes.has(name)
          ? refuseWrite(name)
          : (...args: unknown[]) => {
            try {
              return Promise.resolve(fn.apply(target, args))
            } catch (error) {
              return Promise.reject(error)
            }
          }
    }
    return out
  }
  const methods = Object.getOwnPropertyNames(SqliteConnection.prototype).filter((n) => n !== 'constructor' && !n.startsWith('_'))
  const store = wrap(conn, methods, WRITES['']!)
  for (const table of TABLES) store[table] = wrap(conn[table], Object.keys(conn[table]), WRITES[table]!)
  return store as unknown as Store
}

export class SqliteStorage implements Storage {
  private readonly writer: SqliteConnection
  private readonly reader: SqliteConnection
  readonly reads: Store
  private readonly tx: Store
  /**
   * Settles when the last unit asked for has run its function (not when its batch commits): units run
   * one at a time, in the order asked, and the ones that waited still share one batch.
   */
  private tail: Promise<unknown> = Promise.resolve()
  private busy = false
  /** New units wait (behind `tail`) while a checkpoint that needs no writer runs. */
  private held = false
  private readonly checkpoints?: Checkpoints
  /** The open batch transaction's commit, while one is open. */
  private batch?: Promise<void>
  private settle?: {resolve: () => void; reject: (error: Error) => void}
  /**
   * Write counters per kind of document, and `*` for writes of every kind (a wipe, a rolled-back
   * unit): a cached read stays valid while the counters of the kinds it read are unchanged. A unit's
   * kinds are counted when it commits, so a read never caches a state that is not committed.
   */
  private readonly writes = new Map<string, number>([['*', 0]])
  private readonly pending = new Set<string>()
  private readonly dataVersion?: Database.Statement<[], {data_version: number}>
  /** The writer's data_version when the last batch began (`openBatch`). */
  private batchDataVersion?: number
  readonly readsCached = true
  private readonly availability = new Availability()

  constructor(readonly location: string) {
    if (location !== ':memory:') mkdirSync(dirname(location), {recursive: true, mode: 0o700})
    // Other gateway processes may share the file: a unit's BEGIN IMMEDIATE (and a schema change at start)
    // waits up to this long for their write lock instead of failing with SQLITE_BUSY.
    const db = openDatabase(location, {timeout: BUSY_TIMEOUT_MS})
    // WAL: readers never wait for the writer; NORMAL sync keeps every committed write across a
    // process crash (only an OS crash or power loss can drop the last commits).
    walMode(db)
    db.pragma('synchronous = NORMAL')
    db.pragma('foreign_keys = ON')
    // A unit's savepoint journal (the pages it changes, as they were, for its rollback) in memory: in a file, a
    // batch's journal passes SQLite's 64 KiB spill size within a few units, and the rest of the batch writes it
    // with a system call per page (27 pwrite calls a keyed variant create under the keyed-write bench, 5 in memory).
    // The objects' writes use no RETURNING, which made a unit of many writes quadratic in memory (`_touchRow`); the
    // deliveries' claim and the rate count keep theirs, one statement a unit.
    db.pragma('temp_store = MEMORY')
    // Several processes may start on one new file at once: the schema is made (and migrated) in one write
    // transaction, so the second waits for the first and finds everything there.
    db.transaction(() => {
      db.exec(SCHEMA)
      uniqueActiveLookupKeys(db)
      // Databases from before app endpoints, publishable keys, secret rotation and webhook faults gain those columns.
      addColumn(db, 'webhook_endpoints', 'installation')
      addColumn(db, 'webhook_endpoints', 'previous_secrets')
      addColumn(db, 'credentials', 'origins')
      addColumn(db, 'webhook_deliveries', 'fault')
      addColumn(db, 'webhook_deliveries', 'fail_attempts', 'INTEGER NOT NULL DEFAULT 0')
      addColumn(db, 'webhook_deliveries', 'effects')
      addColumn(db, 'webhook_deliveries', 'duplicate_of', 'INTEGER')
      addColumn(db, 'webhook_deliveries', 'held_until', 'INTEGER')
      addColumn(db, 'webhook_deliveries', 'ord', 'REAL')
      addColumn(db, 'webhook_attempts', 'injected', 'INTEGER NOT NULL DEFAULT 0')
      addColumn(db, 'webhook_deliveries', 'owner')
      addColumn(db, 'webhook_deliveries', 'lease_until', 'INTEGER')
      // The claimed deliveries (a few per running process): a claim's check for another owner's live lease seeks them.
      db.exec('CREATE INDEX IF NOT EXISTS webhook_deliveries_claimed ON webhook_deliveries (endpoint, lease_until) WHERE owner IS NOT NULL')
      // An endpoint's due deliveries in sending order (a claim's ORDER BY COALESCE(ord, id) LIMIT): a claim reads the
      // first ones from here instead of sorting every due delivery, which made draining a backlog of n quadratic.
      db.exec('CREATE INDEX IF NOT EXISTS webhook_deliveries_in_order ON webhook_deliveries (endpoint, COALESCE(ord, id)) WHERE next_attempt IS NOT NULL')
      addColumn(db, 'objects', 'unique_key')
      uniqueKeys(db)
    }).immediate()
    // From now on the writer never waits in SQLite's busy handler, which sleeps on the event loop: a unit waits for
    // the write lock on timers (`lockFile`).
    db.pragma('busy_timeout = 0')
    this.writer = new SqliteConnection(db, (kind) => this.touched(kind))
    // An in-memory database is one connection's; a file gets a reader that sees committed data only.
    this.reader = location === ':memory:' ? this.writer : new SqliteConnection(openDatabase(location, {readonly: true, timeout: BUSY_TIMEOUT_MS}), () => {})
    this.reads = facade(this.reader, false)
    this.tx = facade(this.writer, true)
    this.dataVersion = location === ':memory:' ? undefined : db.prepare<[], {data_version: number}>('PRAGMA data_version')
    if (location !== ':memory:') this.checkpoints = new Checkpoints(db, location, {holdWrites: (checkpoint) => this.holdWrites(checkpoint)})
  }

  get open(): boolean {
    return this.writer.db.open
  }

  /** Tells `listener` when the file stops taking writes (its disk full, the file gone read-only) and when it takes them again. */
  onAvailability(listener: (change: AvailabilityChange) => void): void {
    this.availability.listen(listener)
  }

  /** Whether WAL checkpoints run on the worker thread now, off the request path (checkpoints.ts). */
  get checkpointsOffThread(): boolean {
    return this.checkpoints?.active ?? false
  }

  write<T>(fn: (tx: Store) => Promise<T>, opts?: {durable?: boolean}): Promise<T> {
    // Not durable: answered as soon as the unit ran, before the batch's COMMIT.
    let ran: ((value: T) => void) | undefined
    const early = opts?.durable === false ? new Promise<T>((resolve) => (ran = resolve)) : undefined
    // An idle writer starts the unit at once: no queue hop on the common path. The queue moves on once a
    // unit's function ran (not once its batch committed), so units that waited still share its batch.
    let turn!: () => void
    const next = new Promise<void>((resolve) => (turn = resolve))
    const run = this.busy || this.held ? this.tail.then(() => this.unit(fn, turn, ran)) : this.unit(fn, turn, ran)
    this.tail = next
    return early ? Promise.race([early, run]) : run
  }

  /**
   * One unit in the open batch transaction, as a savepoint: a throw rolls back this unit alone. The
   * unit resolves once the batch commits (group commit): units that arrive in the same turn of the
   * event loop share one COMMIT, whose WAL pages (the objects table and its indexes) are written once
   * for all of them instead of once each. Nothing is acknowledged before it is committed.
   */
  private async unit<T>(fn: (tx: Store) => Promise<T>, turn: () => void, ran?: (value: T) => void): Promise<T> {
    this.busy = true
    const {db} = this.writer
    let result: T
    try {
      let batch = this.batch
      if (!batch) {
        const waiting = this.lockFile()
        if (waiting) await waiting
        batch = this.openBatch()
      }
      db.exec('SAVEPOINT unit')
      try {
        result = await fn(this.tx)
        db.exec('RELEASE unit')
      } catch (error) {
        if (db.inTransaction) {
          db.exec('ROLLBACK TO unit')
          db.exec('RELEASE unit')
        } else {
          // SQLite rolled the whole batch transaction back (SQLITE_FULL, an I/O error): the units that ran in it
          // before this one are gone too, so none of them may answer as written.
          this.abandonBatch(storageError(error))
        }
        // A read of the one in-memory connection may have cached what the rolled-back unit wrote.
        this.bump('*')
        throw error
      }
      this.busy = false
      turn()
      ran?.(result)
      await batch
      return result
    } catch (error) {
      const mapped = storageError(error)
      this.availability.failed(mapped)
      throw mapped
    } finally {
      this.busy = false
      turn()
    }
  }

  /**
   * BEGIN IMMEDIATE: the file's write lock. Another process holding it (a second gateway on the file, a `sqlite3`
   * shell in a transaction) is waited for on timers, `BUSY_TIMEOUT_MS` at most, tried again every `BUSY_RETRY_MS`:
   * the event loop serves reads meanwhile, where SQLite's own busy handler would sleep on it. Undefined when the
   * lock was taken at once (the common case: no promise, no turn lost).
   */
  private lockFile(): Promise<void> | undefined {
    const {db} = this.writer
    try {
      db.exec('BEGIN IMMEDIATE')
      return undefined
    } catch (error) {
      if (!busy(error)) throw error
    }
    return (async () => {
      const deadline = Date.now() + BUSY_TIMEOUT_MS
      for (;;) {
        await sleep(BUSY_RETRY_MS)
        try {
          db.exec('BEGIN IMMEDIATE')
          return
        } catch (error) {
          if (!busy(error) || Date.now() >= deadline) throw error
        }
      }
    })()
  }

  /** Opens the batch transaction, the write lock taken (`lockFile`); it commits once this turn of the event loop is done. */
  private openBatch(): Promise<void> {
    // Another process may have committed between a request's `sync` and this write lock: what this process
    // cached (a unit reads the product's options from the cache) may then be stale, so a unit must not use it.
    // Under the lock nothing else commits, so the version read here holds until the batch's COMMIT.
    const version = this.dataVersion?.get()!.data_version
    if (version !== this.batchDataVersion) {
      this.batchDataVersion = version
      this.bump('*')
    }
    const batch = new Promise<void>((resolve, reject) => {
      this.settle = {resolve, reject}
    })
    // Every unit of the batch awaits it; none may leave a rejection unobserved.
    batch.catch(() => {})
    this.batch = batch
    setImmediate(() => this.commitBatch())
    return batch
  }

  /** Commits the open batch and lets its units answer; a unit still running (awaiting I/O) is waited for. */
  private commitBatch(): void {
    if (!this.batch || !this.settle) return
    if (this.busy) {
      setImmediate(() => this.commitBatch())
      return
    }
    const {db} = this.writer
    const settle = this.settle
    this.batch = this.settle = undefined
    try {
      db.exec('COMMIT')
      for (const kind of this.pending) this.bump(kind)
      settle.resolve()
      this.availability.reached(true)
      this.checkpoints?.committed()
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK')
      this.bump('*')
      settle.reject(storageError(error) as Error)
    } finally {
      this.pending.clear()
    }
  }

  /** Fails the open batch, which SQLite already rolled back: its units answer `error`; the next unit opens a new one. */
  private abandonBatch(error: unknown): void {
    const settle = this.settle
    this.batch = this.settle = undefined
    this.pending.clear()
    settle?.reject(error as Error)
  }

  private touched(kind: string): void {
    if (this.writer.db.inTransaction) this.pending.add(kind)
    else this.bump(kind)
  }

  private bump(kind: string): void {
    this.writes.set(kind, (this.writes.get(kind) ?? 0) + 1)
  }

  generation(kinds: readonly Kind[]): string {
    let key = String(this.writes.get('*'))
    for (const kind of kinds) key += `:${this.writes.get(kind) ?? 0}`
    return key
  }

  /**
   * The writer connection's data_version: another connection's commit to the file changes it, this
   * process's own commits do not (they are the writer's, and the reader never writes).
   */
  async external(): Promise<string> {
    return this.dataVersion ? String(this.dataVersion.get()!.data_version) : '0'
  }

  /** Runs `checkpoint` once the units asked for so far have committed; units asked for meanwhile wait for it. */
  private holdWrites(checkpoint: () => Promise<void>): void {
    this.held = true
    const gate = this.tail
      .then(() => this.batch?.catch(() => {}))
      .then(checkpoint)
      .catch(() => {})
      .finally(() => {
        this.held = false
      })
    this.tail = gate
  }

  close(): void {
    this.availability.closed = true
    // A batch still open (closing in the turn of its last unit) commits first: its units are whole.
    if (this.writer.db.open) this.commitBatch()
    this.checkpoints?.close()
    if (this.reader !== this.writer && this.reader.db.open) this.reader.db.close()
    if (this.writer.db.open) this.writer.db.close()
  }
}

/**
 * `journal_mode = WAL`, waiting for other processes' locks up to `BUSY_TIMEOUT_MS` as every other statement does.
 * Switching a file that is not yet in WAL mode (a new one) reads its header under a read lock and then takes
 * the write lock to change it: SQLite never calls the busy handler for such a read-to-write step (two could
 * wait on each other forever), so when another process starting on the same new file holds the write lock
 * (making its schema, switching it first), the pragma fails at once with SQLITE_BUSY, whatever the busy
 * timeout. Here it tries again after the other's short write; once the file is in WAL mode the pragma
 * takes no lock and succeeds at once.
 */
function walMode(db: Database.Database): void {
  const deadline = Date.now() + BUSY_TIMEOUT_MS
  for (;;) {
    try {
      db.pragma('journal_mode = WAL')
      return
    } catch (error) {
      if (!busy(error) || Date.now() >= deadline) throw error
      // The constructor is synchronous, as opening the file is: a 5 ms sleep that blocks, as the busy handler's does.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5)
    }
  }
}

/** Adds a column to a table of a database created before the column existed. */
function addColumn(db: Database.Database, table: 'webhook_endpoints' | 'credentials' | 'webhook_deliveries' | 'webhook_attempts' | 'objects', column: string, type = 'TEXT'): void {
  const columns = db.prepare<[], {name: string}>(`PRAGMA table_info(${table})`).all()
  if (columns.some((c) => c.name === column)) return
  try {
    db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`)
  } catch (error) {
    // Another process starting on the same file added it first.
    if (!/duplicate column/.test((error as Error).message)) throw error
  }
}

/**
 * One active price per merchant, environment and lookup_key, kept by a unique partial index (the domain
 * checks first to answer 409 lookup_key_exists; the index holds whatever path a write takes). A database
 * from before the rule keeps the key on the newest of two active prices, as a transfer would have.
 */
function uniqueActiveLookupKeys(db: Database.Database): void {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'prices_active_lookup_key'").get()
  if (exists) return
  const active = (t: string) => `${t}.kind = 'price' AND json_extract(${t}.data, '$.active') = 1 AND json_extract(${t}.data, '$.lookup_key') IS NOT NULL`
  db.transaction(() => {
    db.exec(`UPDATE objects SET data = json_set(data, '$.lookup_key', json('null')) WHERE ${active('objects')} AND EXISTS (
      SELECT 1 FROM objects o WHERE ${active('o')} AND o.merchant = objects.merchant AND o.env = objects.env
        AND json_extract(o.data, '$.lookup_key') = json_extract(objects.data, '$.lookup_key') AND o.seq > objects.seq)`)
    db.exec(`CREATE UNIQUE INDEX prices_active_lookup_key ON objects (merchant, env, json_extract(data, '$.lookup_key')) WHERE ${active('objects')}`)
  })()
}

/**
 * SQLite's failures to write as the storage interface's: a full disk (SQLITE_FULL) or a file that became read-only
 * is a database that takes no writes for now (503, reads go on); an I/O error one that cannot be used for now; the
 * write lock that another process held past the busy timeout (SQLITE_BUSY) a busy database (429 lock_timeout).
 * Each is retried with the same Idempotency-Key once it passed. Other errors as they are.
 */
function storageError(error: unknown): unknown {
  if (error instanceof StorageUnavailable || error instanceof StorageBusy) return error
  const code = String((error as {code?: unknown}).code ?? '')
  const message = (error as Error).message
  if (code === 'SQLITE_FULL' || code.startsWith('SQLITE_READONLY')) return new StorageUnavailable(message, {cause: error, readOnly: true})
  if (code.startsWith('SQLITE_IOERR') || code === 'SQLITE_NOMEM') return new StorageUnavailable(message, {cause: error})
  if (code.startsWith('SQLITE_BUSY')) return new StorageBusy(message, {cause: error})
  return error
}

/** A unique index's refusal as the storage interface's `UniqueViolation` (SQLite's message names the index); other errors as they are. */
function uniqueViolation(error: unknown, what: string): unknown {
  return (error as {code?: string}).code === 'SQLITE_CONSTRAINT_UNIQUE' ? new UniqueViolation(`${what}: ${(error as Error).message}`) : error
}

/**
 * Documents unique by key among a parent's children (a variant's option combination): the unique index
 * objects_unique_key. A database from before it gets its variants' keys first, the oldest of two variants
 * with one combination keeping it (the domain checked each before writing, so there are none on SQLite).
 */
function uniqueKeys(db: Database.Database): void {
  if (db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'objects_unique_key'").get()) return
  const rows = db.prepare<[], {seq: number; parent: string; data: string}>("SELECT seq, parent, data FROM objects WHERE kind = 'variant' AND unique_key IS NULL ORDER BY seq").all()
  const set = db.prepare('UPDATE objects SET unique_key = ? WHERE seq = ?')
  const taken = new Set<string>()
  for (const row of rows) {
    const key = combinationKey((JSON.parse(row.data) as {options: {value: string}[]}).options)
    if (taken.has(`${row.parent}\0${key}`)) continue
    taken.add(`${row.parent}\0${key}`)
    set.run(key, row.seq)
  }
  db.exec('CREATE UNIQUE INDEX objects_unique_key ON objects (parent, unique_key) WHERE unique_key IS NOT NULL')
}

/** One connection's synchronous statements; `SqliteStorage` serves them through the async `Store`. */
class SqliteConnection {
  /** The one prepared-statement cache: every query text is prepared once per connection. */
  private readonly statements = new Map<string, Database.Statement>()

  constructor(
    readonly db: Database.Database,
    private readonly touch: (kind: string) => void,
  ) {}

  /**
   * Counts a write of the row's kind. The statements that write a row say nothing back (no RETURNING): with the
   * savepoint journal in memory (temp_store), a RETURNING statement in a unit costs time in proportion to what the
   * unit wrote before it (5,000 updates in one unit 0.2 s, 10,000 1.0 s), so a unit of many such writes (an
   * expiry of 40,000 sessions) was quadratic; a write and then a lookup by id is not.
   */
  _touchRow(id: string): void {
    const kind = this._kindOf(id)
    if (kind) this.touch(kind)
  }

  /** The kind of the stored row with this id, if there is one. */
  _kindOf(id: string): string | undefined {
    return this._sql<{kind: string}>('SELECT kind FROM objects WHERE id = ?').get(id)?.kind
  }

  /** A cached prepared statement. */
  _sql<R = unknown>(text: string): Database.Statement<unknown[], R> {
    let stmt = this.statements.get(text)
    if (!stmt) this.statements.set(text, (stmt = this.db.prepare(text)))
    return stmt as Database.Statement<unknown[], R>
  }

  /** `INSERT INTO <table> (<keys>) VALUES (?, …)` for one row object, through the statement cache. */
  _insertRow(table: string, row: Record<string, unknown>): void {
    const keys = Object.keys(row)
    this._sql(`INSERT INTO ${table} (${keys.join(', ')}) VALUES (${keys.map(() => '?').join(', ')})`).run(...Object.values(row))
  }

  get open(): boolean {
    return this.db.open
  }

  meta(key: string): string | undefined {
    return this._sql<{value: string}>('SELECT value FROM meta WHERE key = ?').get(key)?.value
  }

  metaWithPrefix(prefix: string): [string, string][] {
    return this._sql<{key: string; value: string}>('SELECT key, value FROM meta WHERE substr(key, 1, length(?)) = ?')
      .all(prefix, prefix)
      .map((row) => [row.key, row.value])
  }

  setMeta(key: string, value: string): void {
    this._sql('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value').run(key, value)
  }


  insert<K extends Kind>(kind: K, scope: Scope, doc: Documents[K], opts: InsertOptions): Documents[K] {
    this.touch(kind)
    try {
      this._insertRow('objects', objectRow(kind, scope, doc, opts))
    } catch (error) {
      throw uniqueViolation(error, `${kind} ${doc.id}`)
    }
    return doc
  }

  save<T extends {id: string}>(doc: T): T {
    let changes: number
    try {
      changes = this._sql('UPDATE objects SET data = ? WHERE id = ?').run(JSON.stringify(doc), doc.id).changes
    } catch (error) {
      throw uniqueViolation(error, doc.id)
    }
    if (changes) this._touchRow(doc.id)
    return doc
  }

  replaceIf<T extends {id: string}>(doc: T, where: readonly Condition[]): boolean {
    const parts = ['id = ?']
    const args: unknown[] = [JSON.stringify(doc), doc.id]
    for (const c of where) {
      const [sql, values] = condition(c)
      parts.push(sql)
      args.push(...values)
    }
    let changes: number
    try {
      changes = this._sql(`UPDATE objects SET data = ? WHERE ${parts.join(' AND ')}`).run(...args).changes
    } catch (error) {
      throw uniqueViolation(error, doc.id)
    }
    if (changes) this._touchRow(doc.id)
    return changes > 0
  }

  increment<K extends Kind>(kind: K, scope: Scope, id: string, change: Increment): Documents[K] | undefined {
    const target = field(change.field)
    let data = change.floor === undefined ? `json_set(data, '$.${name(change.field)}', ${target} + ?)` : `json_set(data, '$.${name(change.field)}', MAX(?, ${target} + ?))`
    const args: unknown[] = change.floor === undefined ? [change.by] : [change.floor, change.by]
    for (const [key, value] of Object.entries(change.set ?? {})) {
      data = `json_set(${data}, '$.${name(key)}', json(?))`
      args.push(JSON.stringify(value))
    }
    const guard = change.atMost === undefined ? '' : ` AND ${target} + ? <= ${field(change.atMost)}`
    const guardArgs = change.atMost === undefined ? [] : [change.by]
    const {changes} = this._sql(`UPDATE objects SET data = ${data} WHERE id = ? AND kind = '${name(kind)}' AND merchant = ? AND env = ?${guard}`).run(
      ...args,
      id,
      scope.merchant,
      scope.env,
      ...guardArgs,
    )
    if (!changes) return undefined
    this.touch(kind)
    // The row as this unit just wrote it (units run one at a time: nothing came in between).
    return JSON.parse(this._sql<{data: string}>('SELECT data FROM objects WHERE id = ?').get(id)!.data) as Documents[K]
  }

  remove(id: string): void {
    const kind = this._kindOf(id)
    if (!kind) return
    this._sql('DELETE FROM objects WHERE id = ?').run(id)
    this.touch(kind)
  }

  get<K extends Kind>(kind: K, scope: Scope, id: string): Documents[K] | undefined {
    const row = this._sql<{data: string}>('SELECT data FROM objects WHERE id = ? AND kind = ? AND merchant = ? AND env = ?').get(id, kind, scope.merchant, scope.env)
    return row ? (JSON.parse(row.data) as Documents[K]) : undefined
  }

  /** Units run one at a time (BEGIN IMMEDIATE): nothing to lock, the same statement as `get`. */
  lock<K extends Kind>(kind: K, scope: Scope, id: string, _mode: 'exclusive' | 'shared'): Documents[K] | undefined {
    return this.get(kind, scope, id)
  }

  getMany<K extends Kind>(kind: K, scope: Scope, ids: readonly string[]): Documents[K][] {
    // The kind is written into the SQL: bound, SQLite would re-prepare the statement on every run (partial
    // indexes on kind). The unary + keeps the planner on the id index: without it, it scans every document of
    // the kind in the scope through objects_by_scope (a variant create's values cost what the catalogue's size did).
    return this._sql<{data: string}>(`SELECT data FROM objects WHERE id IN (SELECT value FROM json_each(?)) AND +kind = '${name(kind)}' AND +merchant = ? AND +env = ?`)
      .all(JSON.stringify(ids), scope.merchant, scope.env)
      .map((row) => JSON.parse(row.data) as Documents[K])
  }

  find<K extends Kind>(kind: K, id: string): {scope: Scope; doc: Documents[K]} | undefined {
    const row = this._sql<{merchant: string; env: Scope['env']; data: string}>('SELECT merchant, env, data FROM objects WHERE id = ? AND kind = ?').get(id, kind)
    return row ? {scope: {merchant: row.merchant, env: row.env}, doc: JSON.parse(row.data) as Documents[K]} : undefined
  }

  all<K extends Kind>(kind: K, scope: Scope, parent?: string): Documents[K][] {
    const rows =
      parent === undefined
        ? this._sql<{data: string}>('SELECT data FROM objects WHERE merchant = ? AND env = ? AND kind = ? ORDER BY seq ASC').all(scope.merchant, scope.env, kind)
        : this._sql<{data: string}>(
            'SELECT data FROM objects INDEXED BY objects_by_parent_scope WHERE parent = ? AND kind = ? AND merchant = ? AND env = ? ORDER BY seq ASC',
          ).all(parent, kind, scope.merchant, scope.env)
    return rows.map((r) => JSON.parse(r.data) as Documents[K])
  }

  where<K extends Kind>(kind: K, scope: Scope, where: readonly Condition[]): Documents[K][] {
    const [sql, args] = scoped(kind, scope, where)
    return this._sql<{data: string}>(`SELECT data FROM objects WHERE ${sql} ORDER BY seq ASC`)
      .all(...args)
      .map((r) => JSON.parse(r.data) as Documents[K])
  }

  ids(kind: Kind, scope: Scope, where: readonly Condition[], parent?: string): string[] {
    const [sql, args] = scoped(kind, scope, where, parent)
    return this._sql<{id: string}>(`SELECT id FROM objects WHERE ${sql}`)
      .all(...args)
      .map((r) => r.id)
  }

  keyed(kind: Kind, scope: Scope, parent: string, key: string): string | undefined {
    // The kind inlined: bound, it made SQLite re-prepare the statement on every run (the partial indexes on a kind
    // depend on its value), 14 µs a lookup against 6 µs.
    return this._sql<{id: string}>(`SELECT id FROM objects WHERE parent = ? AND unique_key = ? AND kind = '${name(kind)}' AND merchant = ? AND env = ?`).get(
      parent,
      key,
      scope.merchant,
      scope.env,
    )?.id
  }

  lastVariantSortOrder(product: string): number | null {
    return this._sql<{max: number | null}>(`SELECT MAX(${field('sort_order')}) AS max FROM objects WHERE parent = ? AND kind = 'variant'`).get(product)!.max
  }

  pageRaw(kind: Kind, scope: Scope, query: PageQuery): RawPage {
    let rows: {id: string; data: string}[]
    if (query.where?.length || query.starting_after !== undefined) {
      const [sql, args] = scoped(kind, scope, query.where, query.parent)
      // An unknown cursor compares with NULL: an empty page, never another scope's rows.
      const cursor = query.starting_after === undefined ? '' : ' AND seq < (SELECT seq FROM objects WHERE id = ? AND merchant = ? AND env = ?)'
      const cursorArgs = query.starting_after === undefined ? [] : [query.starting_after, scope.merchant, scope.env]
      rows = this._sql<{id: string; data: string}>(`SELECT id, data FROM objects WHERE ${sql}${cursor} ORDER BY seq DESC LIMIT ? OFFSET ?`).all(
        ...args,
        ...cursorArgs,
        query.limit + 1,
        query.offset,
      )
    } else if (query.parent === undefined) {
      rows = this._sql<{id: string; data: string}>('SELECT id, data FROM objects WHERE merchant = ? AND env = ? AND kind = ? ORDER BY seq DESC LIMIT ? OFFSET ?').all(
        scope.merchant,
        scope.env,
        kind,
        query.limit + 1,
        query.offset,
      )
    } else {
      rows = this._sql<{id: string; data: string}>(
        'SELECT id, data FROM objects INDEXED BY objects_by_parent_scope WHERE parent = ? AND kind = ? AND merchant = ? AND env = ? ORDER BY seq DESC LIMIT ? OFFSET ?',
      ).all(query.parent, kind, scope.merchant, scope.env, query.limit + 1, query.offset)
    }
    const hasMore = rows.length > query.limit
    if (hasMore) rows.pop()
    return {rows: rows.map((r) => r.data), ids: rows.map((r) => r.id), hasMore}
  }

  page<K extends Kind>(kind: K, scope: Scope, query: PageQuery): {docs: Documents[K][]; hasMore: boolean} {
    const {rows, hasMore} = this.pageRaw(kind, scope, query)
    return {docs: rows.map((r) => JSON.parse(r) as Documents[K]), hasMore}
  }

  childrenRaw(kind: Kind, scope: Scope, parents: readonly string[]): Map<string, string[]> {
    const out = new Map<string, string[]>(parents.map((p) => [p, []]))
    const rows = this._sql<{parent: string; data: string}>(
      `SELECT parent, data FROM objects WHERE merchant = ? AND env = ? AND kind = '${name(kind)}'
         AND parent IN (SELECT value FROM json_each(?)) ORDER BY seq DESC`,
    ).all(scope.merchant, scope.env, JSON.stringify(parents))
    for (const row of rows) out.get(row.parent)?.push(row.data)
    return out
  }

  wipe(scope: Scope): number {
    this.touch('*')
    return this._sql('DELETE FROM objects WHERE merchant = ? AND env = ?').run(scope.merchant, scope.env).changes
  }

  // ---------------------------------------------------------------- merchants and blobs

  merchant(id: string, _lock?: 'exclusive'): MerchantDoc | undefined {
    const row = this._sql<{data: string}>('SELECT data FROM merchants WHERE id = ?').get(id)
    return row ? (JSON.parse(row.data) as MerchantDoc) : undefined
  }

  merchantBySlug(slug: string): MerchantDoc | undefined {
    const row = this._sql<{data: string}>(`SELECT data FROM merchants WHERE json_extract(data, '$.store.slug') = ?`).get(slug)
    return row ? (JSON.parse(row.data) as MerchantDoc) : undefined
  }

  saveMerchant(doc: MerchantDoc): void {
    this._sql('INSERT INTO merchants (id, created, data) VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET data = excluded.data').run(doc.id, doc.created, JSON.stringify(doc))
  }

  putBlob(id: string, bytes: Buffer): void {
    this._sql('INSERT INTO file_blobs (id, bytes) VALUES (?, ?)').run(id, bytes)
  }

  blob(id: string): Buffer | undefined {
    return this._sql<{bytes: Buffer}>('SELECT bytes FROM file_blobs WHERE id = ?').get(id)?.bytes
  }

  // ---------------------------------------------------------------- credentials, idempotency, webhooks

  readonly credentials: Sync<CredentialTable> = {
    insert: (r) => this._insertRow('credentials', credentialRow(r)),
    revoke: (id, kind, at) => this._sql('UPDATE credentials SET revoked = ? WHERE id = ? AND kind = ? AND revoked IS NULL').run(at, id, kind).changes > 0,
    byTokenHash: (tokenHash) => this._credential('token_hash', tokenHash),
    byId: (id) => this._credential('id', id),
    browserOrigins: () =>
      this._sql<{value: string}>(
        "SELECT DISTINCT o.value FROM credentials c, json_each(c.origins) o WHERE c.kind = 'publishable_key' AND c.revoked IS NULL AND c.origins IS NOT NULL",
      )
        .all()
        .map((r) => r.value),
  }

  /** An unrevoked credential by its token hash or id, its JSON columns parsed. */
  _credential(by: 'token_hash' | 'id', value: string): CredentialRecord | undefined {
    return credentialRecord(this._sql<CredentialRow>(`SELECT ${CREDENTIAL_COLUMNS} FROM credentials WHERE ${by} = ? AND revoked IS NULL`).get(value))
  }

  readonly idempotency: Sync<IdempotencyTable> = {
    read: (credential, key) =>
      this._sql<IdempotencyRecord>('SELECT fingerprint, state, status, body, created FROM idempotency WHERE credential = ? AND key = ?').get(credential, key),
    // The primary key (credential, key) decides a race: an insert, or the replacement of an expired row only.
    claim: (credential, key, fingerprint, now, expiredBefore, state = 'in_flight') =>
      this._sql(
        `INSERT INTO idempotency (credential, key, fingerprint, state, created) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT(credential, key) DO UPDATE SET fingerprint = excluded.fingerprint, state = excluded.state, status = NULL, body = NULL, created = excluded.created
         WHERE idempotency.created <= ?`,
      ).run(credential, key, fingerprint, state, now, expiredBefore).changes > 0,
    plan: (credential, key, plan, created) => {
      if (created === undefined) {
        this._sql(`UPDATE idempotency SET body = ? WHERE credential = ? AND key = ? AND state = 'advancing'`).run(plan, credential, key)
        return plan
      }
      this._sql(`UPDATE idempotency SET body = ?, created = ? WHERE credential = ? AND key = ? AND state = 'advancing' AND body IS NULL`).run(plan, created, credential, key)
      return this._sql<{body: string | null}>(`SELECT body FROM idempotency WHERE credential = ? AND key = ? AND state = 'advancing'`).get(credential, key)?.body ?? undefined
    },
    finish: (credential, key, status, body) => {
      this._sql(`UPDATE idempotency SET state = 'done', status = ?, body = ? WHERE credential = ? AND key = ?`).run(status, body, credential, key)
    },
    answer: (credential, key, status, body) =>
      this._sql(`UPDATE idempotency SET state = 'done', status = ?, body = ? WHERE credential = ? AND key = ? AND state = 'advancing'`).run(status, body, credential, key).changes > 0,
    releaseInFlight: () => {
      this._sql("DELETE FROM idempotency WHERE state = 'in_flight'").run()
    },
    prune: (before) => {
      this._sql('DELETE FROM idempotency WHERE created <= ?').run(before)
    },
  }

  readonly webhooks: Sync<WebhookTable> = {
    insertEndpoint: (e) =>
      this._insertRow('webhook_endpoints', {...e, events: JSON.stringify(e.events), previous_secrets: JSON.stringify(e.previous_secrets)}),
    endpoint: (id) => endpointRecord(this._sql<EndpointRow>('SELECT * FROM webhook_endpoints WHERE id = ?').get(id)),
    endpointsOf: (merchant) =>
      this._sql<EndpointRow>('SELECT * FROM webhook_endpoints WHERE merchant = ? ORDER BY created DESC, rowid DESC')
        .all(merchant)
        .map((row) => endpointRecord(row)!),
    endpointsIn: (scope) =>
      this._sql<EndpointRow>('SELECT * FROM webhook_endpoints WHERE merchant = ? AND env = ?')
        .all(scope.merchant, scope.env)
        .map((row) => endpointRecord(row)!),
    removeEndpoint: (id) => this._sql('DELETE FROM webhook_endpoints WHERE id = ?').run(id).changes > 0,
    setSecrets: (id, secret, previous) => {
      this._sql('UPDATE webhook_endpoints SET secret = ?, previous_secrets = ? WHERE id = ?').run(secret, JSON.stringify(previous), id)
    },
    enqueue: (endpoint, event, body, at, fault) =>
      Number(
        this._sql(
          `INSERT INTO webhook_deliveries (endpoint, event_id, event_type, body, next_attempt, created, fault, fail_attempts, effects, duplicate_of, held_until, ord)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(
          endpoint,
          event.id,
          event.type,
          body,
          at,
          at,
          fault?.rule ?? null,
          fault?.failAttempts ?? 0,
          fault && fault.effects.length > 0 ? JSON.stringify(fault.effects) : null,
          fault?.duplicateOf ?? null,
          fault?.heldUntil ?? null,
          fault?.ord ?? null,
        ).lastInsertRowid,
      ),
    nextDue: (merchant) =>
      this._sql<{due: number | null}>(
        `SELECT MIN(d.next_attempt) AS due FROM webhook_endpoints e JOIN webhook_deliveries d ON d.endpoint = e.id AND d.next_attempt IS NOT NULL WHERE e.merchant = ?`,
      ).get(merchant)?.due ?? undefined,
    pendingEndpoints: (merchant) =>
      this._sql<{endpoint: string; merchant: string; due: number}>(
        `SELECT d.endpoint, e.merchant, MIN(d.next_attempt) AS due FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint
         WHERE d.next_attempt IS NOT NULL AND (? IS NULL OR e.merchant = ?) GROUP BY d.endpoint`,
      ).all(merchant ?? null, merchant ?? null),
    dueFor: (endpoint, now, limit) =>
      this._sql<DueDelivery>(
        `SELECT id, endpoint, event_id, event_type, body, attempts, fault, fail_attempts FROM webhook_deliveries
         WHERE endpoint = ? AND next_attempt IS NOT NULL AND next_attempt <= ? ORDER BY COALESCE(ord, id) LIMIT ?`,
      ).all(endpoint, now, limit),
    claim: (endpoint, owner, now, wallNow, leaseUntil, limit) =>
      this._sql<DueDelivery & {rank: number}>(
        `UPDATE webhook_deliveries SET owner = ?, lease_until = ?
         WHERE id IN (SELECT id FROM webhook_deliveries WHERE endpoint = ? AND next_attempt IS NOT NULL AND next_attempt <= ? ORDER BY COALESCE(ord, id) LIMIT ?)
           AND NOT EXISTS (SELECT 1 FROM webhook_deliveries WHERE endpoint = ? AND owner IS NOT NULL AND owner <> ? AND lease_until > ?)
         RETURNING id, endpoint, event_id, event_type, body, attempts, fault, fail_attempts, COALESCE(ord, id) AS rank`,
      )
        .all(owner, leaseUntil, endpoint, now, limit, endpoint, owner, wallNow)
        .sort((x, y) => x.rank - y.rank)
        .map(({rank: _, ...row}) => row),
    release: (owner) => {
      this._sql('UPDATE webhook_deliveries SET owner = NULL, lease_until = NULL WHERE owner = ?').run(owner)
    },
    dueCount: (merchant, upTo) =>
      this._sql<{n: number}>(
        `SELECT COUNT(*) AS n FROM webhook_endpoints e JOIN webhook_deliveries d ON d.endpoint = e.id
         WHERE e.merchant = ? AND d.next_attempt IS NOT NULL AND d.next_attempt <= ?`,
      ).get(merchant, upTo)!.n,
    recordAttempt: (delivery, attempt, at, outcome, owner) => {
      const held = this._sql('UPDATE webhook_deliveries SET attempts = ?, next_attempt = ?, delivered = ?, owner = NULL, lease_until = NULL WHERE id = ? AND (? IS NULL OR owner = ?)').run(
        attempt,
        outcome.next,
        outcome.delivered ? at : null,
        delivery,
        owner ?? null,
        owner ?? null,
      )
      // The lease ran out and another process took the delivery over: its attempt is the one logged.
      if (held.changes === 0) return false
      this._insertRow('webhook_attempts', {
        delivery,
        attempt,
        attempted: at,
        status: outcome.status,
        error: outcome.error,
        next_attempt: outcome.next,
        injected: outcome.injected ? 1 : 0,
      })
      return true
    },
    attempts: (endpoint) =>
      this._sql<Omit<DeliveryAttempt, 'injected' | 'effects'> & {injected: number; effects: string | null}>(
        `SELECT a.delivery, d.event_id, d.event_type, a.attempt, a.attempted, a.status, a.error, a.next_attempt, a.injected,
                d.fault, d.effects, d.duplicate_of, d.held_until
         FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery WHERE d.endpoint = ? ORDER BY a.rowid`,
      )
        .all(endpoint)
        .map((row) => ({...row, injected: row.injected === 1, effects: row.effects ? (JSON.parse(row.effects) as DeliveryAttempt['effects']) : []})),
    deliveryCounts: (eventIds) => {
      const counts = new Map<string, {delivered: number; failing: number; unattempted: number}>()
      const rows = this._sql<{event_id: string; delivered: number; failing: number; unattempted: number}>(
        `SELECT event_id, SUM(ok) AS delivered, SUM(NOT ok AND tried) AS failing, SUM(NOT ok AND NOT tried) AS unattempted
         FROM (SELECT event_id, MAX(delivered IS NOT NULL) AS ok, MAX(attempts > 0) AS tried FROM webhook_deliveries
               WHERE event_id IN (SELECT value FROM json_each(?)) GROUP BY event_id, endpoint)
         GROUP BY event_id`,
      ).all(JSON.stringify(eventIds))
      for (const {event_id, ...c} of rows) counts.set(event_id, c)
      return counts
    },
  }

  readonly jobs: Sync<JobTable> = {
    insert: (job) => this._insertRow('jobs', {...job}),
    next: (merchant, now) => this._sql<Job>('SELECT * FROM jobs WHERE merchant = ? AND due <= ? ORDER BY due, id LIMIT 1').get(merchant, now),
    earliest: (merchant) => this._sql<{due: number | null}>('SELECT MIN(due) AS due FROM jobs WHERE merchant = ?').get(merchant)?.due ?? undefined,
    merchants: () => this._sql<{merchant: string}>('SELECT DISTINCT merchant FROM jobs').all().map((row) => row.merchant),
    remove: (id) => this._sql('DELETE FROM jobs WHERE id = ?').run(id).changes > 0,
    cancel: (ref, kind) => {
      this._sql('DELETE FROM jobs WHERE ref = ? AND (? IS NULL OR kind = ?)').run(ref, kind ?? null, kind ?? null)
    },
    pending: (refs) =>
      refs.length === 0 ? [] : this._sql<Job>(`SELECT * FROM jobs WHERE ref IN (${refs.map(() => '?').join(', ')}) ORDER BY due, id`).all(...refs),
  }

  readonly rates: Sync<RateTable> = {
    hit: (key, window, by = 1) =>
      this._sql<{count: number}>(
        'INSERT INTO rate_counts (key, win, count) VALUES (?, ?, ?) ON CONFLICT (key, win) DO UPDATE SET count = rate_counts.count + excluded.count RETURNING count',
      ).get(key, window, by)!.count,
    prune: (before) => {
      this._sql('DELETE FROM rate_counts WHERE win < ?').run(before)
    },
  }

  readonly faults: Sync<FaultTable> = {
    all: () => this._sql<FaultRow>('SELECT id, rule, draws FROM fault_rules ORDER BY seq').all(),
    insert: (row) => this._insertRow('fault_rules', {...row}),
    update: (row) => {
      this._sql('UPDATE fault_rules SET rule = ?, draws = ? WHERE id = ?').run(row.rule, row.draws, row.id)
    },
    remove: (id) => this._sql('DELETE FROM fault_rules WHERE id = ?').run(id).changes > 0,
    clear: () => this._sql('DELETE FROM fault_rules').run().changes,
  }

  readonly leases: Sync<LeaseTable> = {
    acquire: (name, owner, until, now) =>
      this._sql(
        `INSERT INTO leases (name, owner, until) VALUES (?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, until = excluded.until WHERE leases.owner = excluded.owner OR leases.until < ?`,
      ).run(name, owner, until, now).changes > 0,
    release: (name, owner) => {
      this._sql('DELETE FROM leases WHERE name = ? AND owner = ?').run(name, owner)
    },
    live: (prefix, now) => this._sql<{n: number}>('SELECT COUNT(*) AS n FROM leases WHERE substr(name, 1, length(?)) = ? AND until > ?').get(prefix, prefix, now)!.n,
  }

}


