/**
 * The PostgreSQL backend of the storage interface (node-postgres): one database shared by any number of
 * gateway processes, in the same table shapes as storage/sqlite.ts. Documents are `json` (the stored
 * bytes, key order included, as SQLite's TEXT keeps them: list routes splice them unparsed), with the
 * same partial indexes as expression indexes. A unit of work is a pooled connection in a READ COMMITTED
 * transaction: every invariant is a unique index or a single conditional statement (docs/architecture.md),
 * which PostgreSQL re-checks on the newest row version after a concurrent commit. Reads run on the pool,
 * outside transactions, and see committed data only.
 */
import type {Socket} from 'node:net'
import {availableParallelism} from 'node:os'

import type {Client, Pool, PoolClient, QueryResultRow} from 'pg'

import type {Documents, Kind, MerchantDoc, Scope} from './documents.js'
import {VersionWatch} from './pg-watch.js'
import {CREDENTIAL_COLUMNS, credentialRecord, type CredentialRow, credentialRow, endpointRecord, type EndpointRow, name, objectRow, refuseWrite, TABLES, WRITES} from './sql.js'
import {Availability, type AvailabilityChange, SHARED_VERSION_KEY, StorageBusy, StorageUnavailable, UniqueViolation} from './storage.js'
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

/**
 * Analyzes the objects table if it has at least doubled in size since its last analysis (`relpages`, which
 * ANALYZE and autovacuum set, by any process) and no other process is analyzing it (an advisory lock held to the
 * end of the analysis, then `relpages` tells the next one it is done; named by the table, so platforms in other
 * schemas of the database analyze theirs meanwhile): see `PostgresStorage.inserted`. On a sample of 3,000 rows
 * (statistics target 10, for this analysis only) instead of the default 30,000: its cost is the expression
 * indexes' values, each sampled document parsed, and at the default it took a core for 300–550 ms with 20,000
 * variants, which the writes under way waited out (p99 of keyed writes at 1,200/s: 167 ms, the analysis's half
 * second; 42–60 ms at target 10). What the planner needs of them, each expression's number of distinct values
 * and the kinds' frequencies, a sample of 3,000 gives as well.
 */
const ANALYZE_IF_GROWN = `DO $$ BEGIN
  IF pg_try_advisory_xact_lock(hashtext('payapp.analyze:' || 'objects'::regclass::oid))
    AND (SELECT pg_relation_size(c.oid) >= 2 * c.relpages::bigint * current_setting('block_size')::bigint FROM pg_class c WHERE c.oid = 'objects'::regclass)
  THEN
    PERFORM set_config('default_statistics_target', '10', true);
    ANALYZE objects;
  END IF;
END $$`

/** Bumped with each change below; `meta.schema_version` says which a database has. */
const SCHEMA_VERSION = '7'

// Times are double precision: clock seconds, which a test clock may carry decades ahead.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS merchants (
  id TEXT PRIMARY KEY,
  created DOUBLE PRECISION NOT NULL,
  data JSON NOT NULL
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
  created DOUBLE PRECISION NOT NULL,
  revoked DOUBLE PRECISION,
  origins TEXT
);
CREATE TABLE IF NOT EXISTS objects (
  seq BIGSERIAL PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  merchant TEXT NOT NULL,
  env TEXT NOT NULL,
  parent TEXT,
  created DOUBLE PRECISION NOT NULL,
  data JSON NOT NULL
);
CREATE INDEX IF NOT EXISTS objects_by_scope ON objects (merchant, env, kind, seq);
CREATE INDEX IF NOT EXISTS objects_by_parent_scope ON objects (parent, kind, merchant, env, seq);
-- A variant's option combination is its unique_key (storage.ts combinationKey, schema version 3): one unique
-- index refuses a second variant of a product with the combination, also between concurrent units. A database
-- from before gets its variants' keys here, the same hash in SQL (value ids sorted bytewise, as JavaScript
-- sorts ASCII), the oldest of two variants with one combination keeping it.
ALTER TABLE objects ADD COLUMN IF NOT EXISTS unique_key TEXT;
DROP INDEX IF EXISTS variants_by_combination_scoped;
UPDATE objects SET unique_key = k.key FROM (
  SELECT seq, parent, key, row_number() OVER (PARTITION BY parent, key ORDER BY seq) AS n FROM (
    SELECT v.seq, v.parent, left(encode(sha256(convert_to(COALESCE(
      (SELECT string_agg(e->>'value', ',' ORDER BY (e->>'value') COLLATE "C") FROM json_array_elements(v.data->'options') AS e), ''), 'UTF8')), 'hex'), 24) AS key
    FROM objects v WHERE v.kind = 'variant' AND v.unique_key IS NULL
  ) AS c
) AS k
WHERE objects.seq = k.seq AND k.n = 1 AND NOT EXISTS (SELECT 1 FROM objects x WHERE x.parent = k.parent AND x.unique_key = k.key);
CREATE UNIQUE INDEX IF NOT EXISTS objects_unique_key ON objects (parent, unique_key) WHERE unique_key IS NOT NULL;
-- No \`kind\` column in a partial index on one kind: PostgreSQL drops the qual the predicate implies, and a
-- column left without a condition would keep the columns after it out of the index search.
-- Catalogue uniqueness (version 3), held by unique indexes: the domain reads first to answer its 409, but two
-- units on two processes may both read "free" before either commits; the index refuses the second (mapped to
-- the same 409 in domain/*.ts). They also serve the lookups, so the plain indexes of version 2 go.
-- (One variant per option combination of a product: objects_unique_key above.)
-- One variant per SKU in a merchant's environment (a null SKU is no SKU).
DROP INDEX IF EXISTS variants_by_sku;
CREATE UNIQUE INDEX IF NOT EXISTS variants_unique_sku ON objects (merchant, env, (data->>'sku')) WHERE kind = 'variant';
-- One option group per name in a product, and one value per text in a group, ignoring ASCII case (version 7):
-- lower() under the "C" collation, as SQLite's lower(). The domain's check, under the product's lock, ignores
-- every case (JavaScript's toLowerCase); the index under the database's own collation (version 3 to 6) folded
-- by its locale's rules, which JavaScript's do not match ('İ' is 'i' to glibc, 'i̇' to JavaScript), and
-- refused as a concurrent write a value the check had let through, on every retry.
DROP INDEX IF EXISTS option_groups_unique_name;
DROP INDEX IF EXISTS option_values_unique_value;
CREATE UNIQUE INDEX IF NOT EXISTS option_groups_unique_name_ascii ON objects (parent, lower((data->>'name') COLLATE "C")) WHERE kind = 'option_group';
CREATE UNIQUE INDEX IF NOT EXISTS option_values_unique_value_ascii ON objects (parent, lower((data->>'value') COLLATE "C")) WHERE kind = 'option_value';
CREATE INDEX IF NOT EXISTS checkout_sessions_open_by_expiry ON objects (merchant, env, ((data->>'expires_at')::numeric))
  WHERE kind = 'checkout_session' AND (data->>'status') = 'open';
-- One payment per checkout session: a second attempt that is not a failure cannot be stored, whatever
-- interleaves (failed attempts stay, one row each).
CREATE UNIQUE INDEX IF NOT EXISTS payments_one_per_session ON objects ((data->>'session_id'))
  WHERE kind = 'payment' AND (data->>'session_id') IS NOT NULL AND (data->>'status') <> 'failed';
-- A product's last variant sort order, the default of a new variant's (version 5): the backward scan of this index
-- that stops at its first row, whatever the statistics say. It is the only index on COALESCE(parent, ''), which
-- the query names instead of parent: no other plan than reading the whole table can answer it, where a plain
-- parent = $1 could be answered from objects_by_parent_scope and a sort, which the planner chose for a
-- variant-heavy product filled since the last ANALYZE (estimated at one row): it read and parsed every variant,
-- milliseconds per create at a few hundred. Version 4 held the plan with a plpgsql function under enable_sort =
-- off: 57 µs of the server a create (pg_stat_statements) against 15 for the statement, its SET and SPI calls.
DROP INDEX IF EXISTS variants_by_sort_order;
DROP FUNCTION IF EXISTS payapp_last_variant_sort_order(TEXT);
CREATE INDEX IF NOT EXISTS variants_last_sort_order ON objects ((COALESCE(parent, '')), ((data->>'sort_order')::numeric)) WHERE kind = 'variant';
ALTER INDEX variants_last_sort_order ALTER COLUMN 1 SET STATISTICS 0;
CREATE INDEX IF NOT EXISTS prices_by_lookup_key ON objects (merchant, env, (data->>'lookup_key')) WHERE kind = 'price';
-- One active price per merchant, environment and lookup_key (the domain checks first to answer 409
-- lookup_key_exists; the index holds whatever path a write takes).
CREATE UNIQUE INDEX IF NOT EXISTS prices_active_lookup_key ON objects (merchant, env, (data->>'lookup_key'))
  WHERE kind = 'price' AND (data->>'active') = 'true' AND (data->>'lookup_key') IS NOT NULL;
CREATE TABLE IF NOT EXISTS webhook_endpoints (
  seq BIGSERIAL,
  id TEXT PRIMARY KEY,
  merchant TEXT NOT NULL,
  env TEXT NOT NULL,
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  secret TEXT NOT NULL,
  created DOUBLE PRECISION NOT NULL,
  installation TEXT,
  previous_secrets TEXT
);
CREATE INDEX IF NOT EXISTS webhook_endpoints_by_scope ON webhook_endpoints (merchant, env);
CREATE TABLE IF NOT EXISTS webhook_deliveries (
  id BIGSERIAL PRIMARY KEY,
  endpoint TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  body TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt DOUBLE PRECISION,
  delivered DOUBLE PRECISION,
  created DOUBLE PRECISION NOT NULL,
  fault TEXT,
  fail_attempts INTEGER NOT NULL DEFAULT 0,
  effects TEXT,
  duplicate_of BIGINT,
  held_until DOUBLE PRECISION,
  ord DOUBLE PRECISION
);
-- Version 2: a delivery's claim (the process sending it, until a wall-clock time in ms).
ALTER TABLE webhook_deliveries ADD COLUMN IF NOT EXISTS owner TEXT;
ALTER TABLE webhook_deliveries ADD COLUMN IF NOT EXISTS lease_until BIGINT;
CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (next_attempt) WHERE next_attempt IS NOT NULL;
CREATE INDEX IF NOT EXISTS webhook_deliveries_by_event ON webhook_deliveries (event_id);
CREATE INDEX IF NOT EXISTS webhook_deliveries_due_by_endpoint ON webhook_deliveries (endpoint, next_attempt) WHERE next_attempt IS NOT NULL;
-- The claimed deliveries (a few per running process): a claim's check for another owner's live lease seeks them.
CREATE INDEX IF NOT EXISTS webhook_deliveries_claimed ON webhook_deliveries (endpoint, lease_until) WHERE owner IS NOT NULL;
-- An endpoint's due deliveries in sending order (version 6): a claim's gate and batch (ORDER BY COALESCE(ord, id) LIMIT)
-- read the first ones from here instead of sorting every due delivery, which made draining a backlog of n quadratic.
CREATE INDEX IF NOT EXISTS webhook_deliveries_in_order ON webhook_deliveries (endpoint, (COALESCE(ord, id))) WHERE next_attempt IS NOT NULL;
CREATE TABLE IF NOT EXISTS webhook_attempts (
  seq BIGSERIAL,
  delivery BIGINT NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  attempt INTEGER NOT NULL,
  attempted DOUBLE PRECISION NOT NULL,
  status INTEGER,
  error TEXT,
  next_attempt DOUBLE PRECISION,
  injected BOOLEAN NOT NULL DEFAULT false,
  PRIMARY KEY (delivery, attempt)
);
CREATE TABLE IF NOT EXISTS idempotency (
  credential TEXT NOT NULL,
  key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  state TEXT NOT NULL,
  status INTEGER,
  body TEXT,
  created DOUBLE PRECISION NOT NULL,
  PRIMARY KEY (credential, key)
);
-- A claim's row (no answer yet) is rewritten with the answer at the unit's commit: room on its page keeps that a
-- heap-only update (no new index entry), version 5.
ALTER TABLE idempotency SET (fillfactor = 50);
CREATE TABLE IF NOT EXISTS file_blobs (id TEXT PRIMARY KEY REFERENCES objects(id) ON DELETE CASCADE, bytes BYTEA NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
  id BIGSERIAL PRIMARY KEY,
  due DOUBLE PRECISION NOT NULL,
  kind TEXT NOT NULL,
  merchant TEXT NOT NULL,
  env TEXT NOT NULL,
  ref TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_by_due ON jobs (due, id);
CREATE INDEX IF NOT EXISTS jobs_by_merchant_due ON jobs (merchant, due, id);
CREATE INDEX IF NOT EXISTS jobs_by_ref ON jobs (ref, kind);
-- What every gateway process on the database shares (version 2): rate-limit counts per key and window,
-- the fault rules with their generators' state, and leases (a running process, a merchant's clock walk;
-- \`until\` in wall-clock ms).
CREATE TABLE IF NOT EXISTS rate_counts (key TEXT NOT NULL, win BIGINT NOT NULL, count BIGINT NOT NULL, PRIMARY KEY (key, win));
CREATE TABLE IF NOT EXISTS fault_rules (seq BIGSERIAL PRIMARY KEY, id TEXT NOT NULL UNIQUE, rule TEXT NOT NULL, draws BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS leases (name TEXT PRIMARY KEY, owner TEXT NOT NULL, until BIGINT NOT NULL);
-- SQLite's json_set for one statement's conditional update (a stock increment): the changed keys keep
-- their place and new ones go last, so the stored bytes stay as the domain wrote them, key order included.
CREATE OR REPLACE FUNCTION payapp_json_set(doc JSON, changes JSONB) RETURNS JSON LANGUAGE sql IMMUTABLE AS $$
  SELECT concat('{', string_agg(to_json(s.k)::text || ':' || s.v, ',' ORDER BY s.o), '}')::json FROM (
    SELECT e.key AS k, COALESCE(c.value::text, e.value::text) AS v, e.ord AS o
      FROM json_each(doc) WITH ORDINALITY AS e(key, value, ord) LEFT JOIN jsonb_each(changes) AS c ON c.key = e.key
    UNION ALL
    SELECT c.key, c.value::text, 1e12 + c.ord FROM jsonb_each(changes) WITH ORDINALITY AS c(key, value, ord)
      WHERE NOT EXISTS (SELECT 1 FROM json_each(doc) AS d WHERE d.key = c.key)
  ) AS s
$$;
`

/** A field of a document as text (`data->>'f'`, `data#>>'{a,b}'` for a dotted path), as the indexes above write it. */
const field = (f: string) => (f.includes('.') ? `(data#>>'{${name(f).split('.').join(',')}}')` : `(data->>'${name(f)}')`)
const numeric = (f: string) => `${field(f)}::numeric`

/** A product's last variant sort order: COALESCE(parent, '') names the index variants_last_sort_order, and no other (see the schema). */
export const LAST_VARIANT_SORT_ORDER = `SELECT (data->>'sort_order')::numeric AS max FROM objects WHERE COALESCE(parent, '') = $1 AND kind = 'variant'
  AND (data->>'sort_order')::numeric IS NOT NULL ORDER BY (data->>'sort_order')::numeric DESC LIMIT 1`

/** A unit's lock of a document (`lock`), one text per mode. */
const LOCK_EXCLUSIVE = 'SELECT data FROM objects WHERE id = $1 AND kind = $2 AND merchant = $3 AND env = $4 FOR UPDATE'
const LOCK_SHARED = 'SELECT data FROM objects WHERE id = $1 AND kind = $2 AND merchant = $3 AND env = $4 FOR KEY SHARE'
/** `find`'s read of a document a unit's earlier run lost (`PgConnection.hot`): locked. */
const FIND_LOCKED = 'SELECT merchant, env, data FROM objects WHERE id = $1 AND kind = $2 FOR UPDATE'
/** The rows of documents a unit's earlier run lost, read by a list (`PgConnection._docs`): locked, read again. */
const RELOCK = 'SELECT data FROM objects WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE'

/** `getMany`'s statements by kind and number of places (0: a list bound as one array): built once each. */
const getManyTexts = new Map<string, string>()
function getManyText(kind: Kind, places: number): string {
  const key = `${kind}/${places}`
  let text = getManyTexts.get(key)
  if (text === undefined) {
    const list = places ? `id IN (${Array.from({length: places}, (_, i) => `$${i + 3}`).join(', ')})` : 'id = ANY($3::text[])'
    getManyTexts.set(key, (text = `SELECT data FROM objects WHERE ${list} AND kind = '${name(kind)}' AND merchant = $1 AND env = $2`))
  }
  return text
}

/** Bound values of one statement: `p(value)` adds one and answers its placeholder. */
class Params {
  readonly values: unknown[] = []
  p(value: unknown): string {
    this.values.push(value)
    return `$${this.values.length}`
  }
}

/** One condition as SQL; `is` constants are inlined so the partial indexes above apply. Values compare as the stored text. */
function condition(c: Condition, params: Params): string {
  if ('eq' in c) return `${field(c.field)} = ${params.p(String(c.eq))}`
  if ('is' in c) return `${field(c.field)} = '${name(c.is)}'`
  if ('in' in c) return `${field(c.field)} = ANY(${params.p(c.in.map(String))}::text[])`
  if ('gt' in c) return `${numeric(c.field)} > ${params.p(c.gt)}`
  return `${numeric(c.field)} <= ${params.p(c.lte)}`
}

/** `kind = '<kind>' AND merchant = $ AND env = $ [AND parent = $] [AND conditions]`. */
function scoped(kind: Kind, scope: Scope, params: Params, where: readonly Condition[] = [], parent?: string): string {
  const parts = [`kind = '${name(kind)}'`, `merchant = ${params.p(scope.merchant)}`, `env = ${params.p(scope.env)}`]
  if (parent !== undefined) parts.unshift(`parent = ${params.p(parent)}`)
  for (const c of where) parts.push(condition(c, params))
  return parts.join(' AND ')
}

/** Runs one statement, prepared once per connection (named after its text). */
type Run = <R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]) => Promise<R[]>

const statementNames = new Map<string, string>()
/** The prepared statement's name for a text: the same on every connection and pool of the process. */
function statementName(text: string): string {
  let stmt = statementNames.get(text)
  if (!stmt) statementNames.set(text, (stmt = `payapp_${statementNames.size}`))
  return stmt
}

/** A PostgreSQL error's SQLSTATE: 23505 unique_violation, 40P01 deadlock, 28P01 bad password, … */
const sqlState = (error: unknown) => (error as {code?: unknown}).code

function mapError(error: unknown): unknown {
  if (error instanceof StorageUnavailable) return error
  if (sqlState(error) === '23505') return new UniqueViolation((error as Error).message)
  // lock_not_available: another unit held a row this one needed past lock_timeout (`PostgresStorage.open`).
  if (sqlState(error) === '55P03') return new StorageBusy((error as Error).message)
  if (unreachable(error)) return new StorageUnavailable((error as Error).message || String(sqlState(error)), {cause: error})
  // read_only_sql_transaction (the URL leads to a standby, or to a primary fenced read-only for a switchover) and
  // disk_full: the server takes no writes, and still answers reads.
  if (sqlState(error) === '25006' || sqlState(error) === '53100') return new StorageUnavailable((error as Error).message, {cause: error, readOnly: true})
  return error
}

/** The socket's failures: no server there (its Unix socket gone too: ENOENT), the network, the connection cut. */
const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ENOENT', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH'])
/** node-postgres' own words for a connection that ended or never came, which carry no code. */
const CONNECTION_LOST = /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Connection ended)/

/**
 * Whether `error` says the server could not be reached or went away, not that a statement failed: the socket's
 * codes, node-postgres' messages, and the server's SQLSTATEs for a connection it lost or will not take for now
 * (08 connection_exception, 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now) or for
 * resources it lacks for now (53 insufficient_resources: 53300 too_many_connections, 53200 out_of_memory, …;
 * 53100 disk_full is a server that takes no writes, `mapError`): a restart or a failover, over when the server is back.
 */
function unreachable(error: unknown): boolean {
  const code = String(sqlState(error) ?? '')
  if (NETWORK.has(code) || code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || (code.startsWith('53') && code !== '53100')) return true
  return error instanceof Error && code === '' && CONNECTION_LOST.test(error.message)
}

/**
 * What each connection asks of the server, for a process that waits `answerMs` for it. A statement waits for a row
 * lock (another unit's, another process's) for 0.9 of that at most, then fails 55P03, answered 429 lock_timeout
 * (`mapError`): before this process would cut the silent connection, which says the server is unreachable. And
 * over TCP the server gives up on a connection whose process a partition cut off mid-unit, which leaves it waiting
 * for the rest of the unit, holding its rows, until its connection ends: when the connection was silent, its
 * keepalive probes it after that long (every fifth of it, 3 times), two hours by the kernel's default; when an
 * answer was on its way (sent, not acknowledged: keepalive does not probe then), `tcp_user_timeout` ends it after
 * that long unacknowledged, a quarter of an hour of retransmissions by default (test/gateway/pg-partition.test.ts).
 */
function serverSettings(answerMs: number): string {
  const idle = Math.ceil(answerMs / 1000)
  return `-c lock_timeout=${Math.floor(answerMs * 0.9)} -c tcp_keepalives_idle=${idle} -c tcp_keepalives_interval=${Math.ceil(idle / 5)} -c tcp_keepalives_count=3 -c tcp_user_timeout=${answerMs}`
}

/**
 * node-postgres' settings for `url` with server `settings` (`-c name=value …`) at connection start. A URL's own
 * `options` parameter (a `-c search_path=…`, say) would replace a separate `options` setting, so there `settings`
 * go in front of its value, where a setting the URL names again still wins.
 */
export function withServerOptions(url: string, settings: string): {connectionString: string; options?: string} {
  const own = /([?&]options=)([^&#]*)/.exec(url)
  if (!own) return {connectionString: url, options: settings}
  const at = own.index + own[1]!.length
  return {connectionString: url.slice(0, at) + encodeURIComponent(`${settings} `) + url.slice(at)}
}

/** How long the gateway waits for PostgreSQL to answer (a connection, a statement) by default: `PAYAPP_GATEWAY_PG_TIMEOUT` seconds sets it. */
const ANSWER_MS = 10_000

/** `PAYAPP_GATEWAY_PG_TIMEOUT` (seconds, fractions too) in ms: `ANSWER_MS` unless a positive number, at most a timer's longest (24.8 days). */
export function answerDeadlineMs(seconds: string | undefined): number {
  const s = Number(seconds)
  return seconds?.trim() && s > 0 ? Math.min(s * 1000, 2 ** 31 - 1) : ANSWER_MS
}

/** The error a connection that stopped answering is cut with: ETIMEDOUT, a network failure (`unreachable`). */
const silent = (ms: number) => Object.assign(new Error(`PostgreSQL did not answer for ${ms / 1000} s`), {code: 'ETIMEDOUT'})

/** A node-postgres client's socket (plain or TLS, once connected). */
const socketOf = (client: Client | PoolClient) => (client as unknown as {connection: {stream: Socket}}).connection.stream

/** Cuts `client`'s connection (ETIMEDOUT) when its socket's timeout, `ms` while set, finds it silent; answers the socket. */
function cutWhenSilent(client: Client | PoolClient, ms: number): Socket {
  const socket = socketOf(client)
  socket.on('timeout', () => socket.destroy(silent(ms)))
  return socket
}

/**
 * A network partition that drops packets (no reset, no FIN) leaves a connection waiting for an answer for as
 * long as TCP retransmits, a quarter of an hour on Linux. So while a client is checked out of its pool (a
 * unit, a read) its socket may not be silent for `ms`: then it is cut, and what waited on it fails as
 * unavailable (503 database_unavailable), as when the server closes it. An idle pooled connection has no
 * deadline; the next unit that takes it does.
 */
function answerDeadline(pool: Pool, ms: number): void {
  pool.on('connect', (client) => cutWhenSilent(client, ms))
  pool.on('acquire', (client) => socketOf(client).setTimeout(ms))
  pool.on('release', (_error, client) => socketOf(client).setTimeout(0))
}

/**
 * PostgreSQL's text cannot hold NUL, which a stored id or field never has: a value with one (a path like
 * `/products/%00`) gets U+FFFD instead, so it matches nothing, as on SQLite, instead of failing the statement.
 */
const bindable = (value: unknown): unknown =>
  typeof value === 'string' ? (value.includes('\0') ? value.replaceAll('\0', '\uFFFD') : value) : Array.isArray(value) ? value.map(bindable) : value

/** What a read or a unit tells about the server's reachability (`PostgresStorage.reached`, `PostgresStorage.failed`). */
interface Reachability {
  reached(): void
  failed(error: unknown): void
}

function runner(on: Pool | PoolClient, seen?: Reachability): Run {
  return async (text, values = []) => {
    let rows
    try {
      rows = (await on.query({name: statementName(text), text, values: values.map(bindable)})).rows
    } catch (error) {
      const mapped = mapError(error)
      seen?.failed(mapped)
      throw mapped
    }
    seen?.reached()
    return rows
  }
}

/** A text column's parser by type oid: stored JSON as its bytes (list routes splice it), counts and ids as numbers. */
type Parsers = (oid: number) => (value: string) => unknown

/** How a unit's statements read and bind values: the parsers above, and node-postgres' own text form of a bound value (a list as an array literal). */
interface Codec {
  parse: Parsers
  prepare: (value: unknown) => unknown
}

/** The parts of pg's Connection a unit writes to (pg-protocol messages, sent on its socket). */
interface Wire {
  stream: {cork?: () => void; uncork?: () => void}
  parsedStatements: Record<string, string>
  submittedNamedStatements: Record<string, string>
  parse(query: {name: string; text: string}): void
  bind(config: {statement: string; values: unknown[]}): void
  describe(msg: {type: 'P'; name: string}): void
  execute(config: {portal: string}): void
  flush(): void
  sync(): void
  on(event: 'parseComplete' | 'end', listener: () => void): void
  on(event: 'readyForQuery', listener: (msg: {status: string}) => void): void
  off(event: 'parseComplete' | 'readyForQuery' | 'end', listener: (msg: {status: string}) => void): void
}

/** A statement of a unit, sent and not answered yet. */
interface Sent {
  name: string
  text: string
  /** Its Parse went out with it, and the server has not confirmed it (ParseComplete) yet. */
  parsing: boolean
  /** Its Describe went out with it: the columns it answers are learnt from it. */
  describing: boolean
  fields?: Columns
  rows: QueryResultRow[]
  /** A merged read (`Unit.merge`): its statements, each answered with the rows tagged with its index. */
  parts?: Part[]
  resolve(result: {rows: QueryResultRow[]; command: string}): void
  reject(error: unknown): void
}

/** One statement of a merged read: its columns (learnt when it last ran alone) and its answer. */
interface Part {
  columns: Columns
  rows: QueryResultRow[]
  resolve: Sent['resolve']
  reject: Sent['reject']
}

/** A statement's result columns, each with its type and parser. */
type Columns = {name: string; oid: number; parse: (value: string) => unknown}[]

/**
 * Types whose `::text` is the text PostgreSQL sends for them (what a column's parser reads): text, varchar,
 * json, jsonb, smallint, integer, bigint, numeric, double precision (not boolean: `true`, sent as `t`).
 */
const TEXT_AS_SENT = new Set([25, 1043, 114, 3802, 21, 23, 20, 1700, 701])

/** A write statement, and the table it changes. */
const WRITE = /^(?:INSERT INTO|UPDATE|DELETE FROM) (\w+) /

/** Merged reads' texts by their reads' statement names (`Unit.merge`, `Unit.pair`): built once per combination. */
const mergedTexts = new Map<string, string>()
/** Whether a write and a read may be paired, by their statement names (`Unit.pair`): decided once per pair. */
const pairable = new Map<string, boolean>()

/** A statement's text with its placeholders numbered `by` further: one statement's values behind another's. */
const shifted = (text: string, by: number) => (by === 0 ? text : text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + by}`))

/** `source`'s rows (a subquery or a CTE) tagged `q`, its columns as text, padded with NULLs to `width`. */
function tagged(q: number, columns: Columns, width: number, source: string): string {
  const cells = Array.from({length: width}, (_, i) => (i < columns.length ? `t.c${i}::text` : 'NULL::text'))
  return `SELECT ${q}, ${cells.join(', ')} FROM ${source} AS t(${columns.map((_, i) => `c${i}`).join(', ')})`
}

/** Statements sent as one (`Unit.merge`, `Unit.pair`): each part answered with its tagged rows, all failed by its failure. */
const combined = (text: string, values: unknown[], parts: Part[]) => ({
  text,
  values,
  resolve: () => {},
  reject: (error: unknown) => {
    for (const part of parts) part.reject(error)
  },
  parts,
})

/** `mergeable`'s verdicts by statement text: a unit asks for each of its statements. */
const mergeables = new Map<string, boolean>()
/** A read that may share a statement with the reads issued beside it: a plain SELECT, no row locks, no side effects. */
function mergeable(text: string): boolean {
  let may = mergeables.get(text)
  if (may === undefined) mergeables.set(text, (may = text.startsWith('SELECT ') && !/\bFOR (?:UPDATE|NO KEY UPDATE|SHARE|KEY SHARE)\b|\bpg_\w+\(|\bnextval\(/.test(text)))
  return may
}
/** A write joined to a statement (`Unit.join`) by the statement's text, then the write's: the joined text, or false when it may not be. */
const joinedTexts = new Map<string, Map<string, {text: string | false; by: number}>>()
/**
 * The columns of each statement prepared on a connection, learnt from its first Describe: a prepared
 * statement's result columns never change (PostgreSQL refuses to run it if they would), so its later runs
 * skip the Describe, and the server's RowDescription and the client's parsing of it.
 */
const columnsOf = new WeakMap<object, Map<string, Columns>>()

/**
 * `statement` (with `bound` values) with `write` joined to it as a data-modifying CTE (`Unit.join`), or false: only
 * a write of a table the statement does not name (one statement must not change a row twice), into a SELECT or a write.
 */
function joinedText(statement: string, bound: number, write: string): string | false {
  const table = WRITE.exec(write)?.[1]
  if (!table || !/^(?:SELECT|INSERT|UPDATE|DELETE|WITH) /.test(statement) || new RegExp(`\\b${table}\\b`).test(statement)) return false
  const cte = `deferred_${bound} AS (${shifted(write, bound)})`
  return statement.startsWith('WITH ') ? `WITH ${cte}, ${statement.slice(5)}` : `WITH ${cte} ${statement}`
}

/** PostgreSQL's answer to the statements behind a failed one in a transaction (SQLSTATE 25P02). */
const aborted = () => Object.assign(new Error('current transaction is aborted, commands ignored until end of transaction block'), {code: '25P02'})

/**
 * A unit of work on its pooled connection, as one query of node-postgres (a custom Submittable, the
 * extension pg-cursor uses), which writes the extended protocol itself: each statement is Parse (the first
 * time on the connection; named after its text) Bind Describe Execute, sent when the domain issues it, and
 * the server answers in order. node-postgres' own queries end each statement with a Sync, on which the
 * server answers ReadyForQuery and flushes its socket: a flush, a loopback wake-up and a read per statement.
 * Here the statements a turn of the event loop issued leave in one socket write (corked) ending with one
 * Flush, and the unit ends with one Sync: one answer per round trip. The statements between two Syncs are one
 * transaction (PostgreSQL's implicit one; READ COMMITTED, each statement on a new snapshot, locks held to the
 * end), committed at the Sync: no BEGIN, no COMMIT. So the unit's first statements go out at once, statements
 * issued together (`Promise.all`) share a round trip, and writes whose answer nothing reads (`defer`) go out
 * with the Sync. A unit that throws sends BEGIN (which makes the implicit transaction, with what it did, an
 * explicit one) and ROLLBACK before its Sync. A failed statement aborts the transaction and the server skips
 * everything up to the Sync: the statements behind it fail here (25P02, as PostgreSQL answers them in an
 * aborted transaction), nothing more is sent, and the Sync goes out at once. Nothing is acknowledged that did
 * not commit: `commit` resolves only on the Sync's ReadyForQuery with no statement failed.
 */
class Unit {
  private wire?: Wire
  /** The statements issued before node-postgres handed the connection over (submit). */
  private readonly queued: Array<{write: () => void; reject: (error: unknown) => void}> = []
  private readonly inFlight: Sent[] = []
  private readonly pending: Promise<unknown>[] = []
  /** The unit's first failure: nothing is sent after it but the Sync. */
  private failure?: unknown
  /**
   * What a unit that threw `error` failed of: the connection lost (whatever the domain made of its statements'
   * failures, the unit is gone with it), or the statement that aborted the transaction rather than one of those
   * behind it (25P02); otherwise `error` itself (the domain's answer, e.g. its 409 for a unique index's refusal).
   */
  cause(error: unknown): unknown {
    if (this.failure instanceof StorageUnavailable || (sqlState(error) === '25P02' && this.failure !== undefined)) return this.failure
    return error
  }
  /** The transaction status of the Sync's ReadyForQuery: `I` idle (committed, or rolled back), `T`/`E` in a transaction block. */
  private status?: string
  /** A Sync went out: the server ends the unit's series of messages there (no Flush after it). */
  private synced = false
  private corked = false
  private ended = false
  private endedNow!: () => void
  /** Settles when node-postgres let go of the connection (its ReadyForQuery, or an error). */
  private readonly end = new Promise<void>((resolve) => (this.endedNow = resolve))
  readonly run: Run

  constructor(
    private readonly client: PoolClient,
    private readonly codec: Codec,
  ) {
    this.run = async <R extends QueryResultRow>(text: string, values: unknown[] = []) => (await this.statement(text, values)).rows as R[]
    void client.query(this as unknown as Parameters<PoolClient['query']>[0])
  }

  // ------------------------------------------------------------ node-postgres' Submittable

  submit(connection: Wire): null {
    this.wire = connection
    connection.on('parseComplete', this.parsed)
    // After a failed statement node-postgres has let go of this query, and handles the Sync's ReadyForQuery alone.
    connection.on('readyForQuery', this.ready)
    // The socket closed: after a failed statement node-postgres has let go of this query and tells it nothing.
    connection.on('end', this.lost)
    for (const {write} of this.queued.splice(0)) write()
    return null
  }

  /**
   * The connection closed before the Sync's ReadyForQuery: what is in flight fails, and the unit ends now. A
   * server shutting down (a restart, `pg_ctl stop -m fast`) answers its sessions' statements 57P01 and then
   * closes them; the Sync that failure sent is never answered, and without this the unit, its request and its
   * pooled connection would wait for it forever.
   */
  private readonly lost = () => {
    if (!this.ended) this.handleError(new Error('Connection terminated unexpectedly'))
  }

  /** A statement's Parse succeeded: the connection has it prepared from now on. */
  private readonly parsed = () => {
    const sent = this.inFlight.find((s) => s.parsing)
    if (!sent || !this.wire) return
    sent.parsing = false
    this.wire.parsedStatements[sent.name] = sent.text
    delete this.wire.submittedNamedStatements[sent.name]
  }

  handleRowDescription(msg: {fields: {name: string; dataTypeID: number}[]}) {
    const sent = this.inFlight[0]!
    sent.fields = msg.fields.map((f) => ({name: f.name, oid: f.dataTypeID, parse: this.codec.parse(f.dataTypeID)}))
  }

  handleDataRow(msg: {fields: (string | null)[]}) {
    const sent = this.inFlight[0]!
    // A merged read's row: its statement's index, then that statement's columns.
    const part = sent.parts?.[Number(msg.fields[0])]
    const fields = part ? part.columns : sent.fields!
    const offset = part ? 1 : 0
    const row: QueryResultRow = {}
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i]!
      const value = msg.fields[i + offset]
      row[f.name] = value === null || value === undefined ? null : f.parse(value)
    }
    ;(part ?? sent).rows.push(row)
  }

  handleCommandComplete(msg: {text: string}) {
    const sent = this.inFlight.shift()!
    // Described and answered: its columns (none when the Describe answered NoData, which node-postgres does not pass on).
    if (sent.describing && this.wire) this.columns(this.wire).set(sent.name, (sent.fields ??= []))
    if (sent.parts) for (const part of sent.parts) part.resolve({rows: part.rows, command: `SELECT ${part.rows.length}`})
    else sent.resolve({rows: sent.rows, command: msg.text})
  }

  handleEmptyQuery() {
    this.handleCommandComplete({text: ''})
  }

  /**
   * A statement failed (the server skips to the next Sync; node-postgres has let go of this query), or the
   * connection did: the first statement in flight gets the error, the ones behind it 25P02.
   */
  handleError(error: unknown) {
    const mapped = mapError(error)
    this.failure ??= mapped
    const [first, ...rest] = this.inFlight.splice(0)
    first?.reject(mapped)
    for (const sent of rest) sent.reject(aborted())
    for (const {reject} of this.queued.splice(0)) reject(mapped)
    this.held?.reject(aborted())
    this.held = undefined
    for (const read of this.reads.splice(0)) read.reject(aborted())
    // Parses the server skipped: the statements are not prepared on the connection.
    for (const sent of [first, ...rest]) if (sent?.parsing && this.wire) delete this.wire.submittedNamedStatements[sent.name]
    // A server's ErrorResponse: the unit ends at the Sync's ReadyForQuery; a dead socket's error, now.
    if (this.wire && (error as {severity?: unknown}).severity !== undefined) this.sync()
    else this.finish()
  }

  private readonly ready = (msg: {status: string}) => {
    this.status = msg.status
    this.finish()
  }

  handleReadyForQuery() {}

  handlePortalSuspended() {}
  handleCopyInResponse() {}
  handleCopyData() {}

  private finish() {
    if (this.ended) return
    this.ended = true
    this.wire?.off('parseComplete', this.parsed)
    this.wire?.off('readyForQuery', this.ready)
    this.wire?.off('end', this.lost)
    this.endedNow()
  }

  // ------------------------------------------------------------ the unit's statements

  /**
   * The turn's last statement, not written yet: a deferred write issued after it in the same turn joins it as
   * a data-modifying CTE (`commit`), one statement instead of two.
   */
  private held?: {text: string; values: unknown[]; resolve: Sent['resolve']; reject: Sent['reject']; parts?: Part[]}

  /** Sends one statement in this turn's batch; answers its rows and command tag. */
  private statement(text: string, values: unknown[]): Promise<{rows: QueryResultRow[]; command: string}> {
    if (this.failure !== undefined || this.synced) return Promise.reject(this.failure === undefined ? new Error('storage: a statement after the unit ended') : aborted())
    return new Promise((resolve, reject) => {
      const statement = {text, values, resolve, reject}
      if (!this.wire) {
        this.queued.push({write: () => this.write(statement), reject})
        return
      }
      this.cork(this.wire)
      if (mergeable(text)) {
        // Behind the held statement, which goes first (a read issued after a lock sees what the lock waited for).
        this.writeHeld()
        this.reads.push(statement)
        return
      }
      if (this.held && this.pair(this.held, statement)) return
      this.release()
      this.held = statement
    })
  }

  /**
   * A write and the read issued right behind it in the same turn (an idempotency claim and the product's lock),
   * as one statement: the write as a data-modifying CTE, its RETURNING rows and the read's rows tagged as a
   * merged read's are (`merge`). Only a read of another table than the write's (the read would not see the
   * write: one snapshot), and only statements whose columns this connection has seen. A read with row locks
   * keeps them in the subquery, and waits as it would alone; a later statement still starts after both.
   */
  private pair(held: NonNullable<Unit['held']>, next: NonNullable<Unit['held']>): boolean {
    if (held.parts || !next.text.startsWith('SELECT ')) return false
    const known = this.columns(this.wire!)
    const [first, second] = [statementName(held.text), statementName(next.text)]
    const key = `${first} ${second}`
    const written = known.get(first)
    const read = known.get(second)
    // Decided once both statements' columns are known: the same two texts pair or not on every connection.
    if (!written || !read) return false
    let may = pairable.get(key)
    if (may === undefined) {
      const table = WRITE.exec(held.text)?.[1]
      may = !!table && !new RegExp(`\\b${table}\\b`).test(next.text) && read.length > 0 && [...written, ...read].every((c) => TEXT_AS_SENT.has(c.oid))
      pairable.set(key, may)
    }
    if (!may) return false
    let text = mergedTexts.get(key)
    if (text === undefined) {
      const width = Math.max(written.length, read.length)
      const after = tagged(1, read, width, `(${shifted(next.text, held.values.length)})`)
      text = `WITH paired AS (${held.text}) ${written.length === 0 ? after : `${tagged(0, written, width, 'paired')} UNION ALL ${after}`}`
      mergedTexts.set(key, text)
    }
    this.held = combined(text, [...held.values, ...next.values], [
      {columns: written, rows: [], resolve: held.resolve, reject: held.reject},
      {columns: read, rows: [], resolve: next.resolve, reject: next.reject},
    ])
    return true
  }

  /**
   * Reads issued one after the other in this turn, not written yet: they go out as one statement (`merge`),
   * before the next statement that is not such a read, at the end of the turn, or before the Sync.
   */
  private readonly reads: Array<NonNullable<Unit['held']>> = []

  /** Writes what the turn holds back: the held statement, or the reads behind it (never both). */
  private release() {
    this.writeHeld()
    if (this.reads.length > 0) this.merge(this.reads.splice(0))
  }

  private writeHeld() {
    const held = this.held
    this.held = undefined
    if (held) this.write(held)
  }

  /**
   * Reads issued together, as one statement where they can be: a UNION ALL of each read as a subquery, its rows
   * tagged with the read's index and its columns as text (each parsed as its own column would be). PostgreSQL
   * answers one Bind and Execute instead of one per read (the planning, portal and executor start, and the
   * messages, each a few µs: reads are most of a unit's statements). Each read keeps its rows' order (a
   * subquery's ORDER BY holds in its branch); they see one snapshot instead of one each, which nothing issuing
   * them together can tell apart. A read whose columns this connection has not seen yet (it learns them when the
   * read runs alone once), or with a column whose text differs from what the server sends (boolean), goes alone.
   */
  private merge(reads: Array<NonNullable<Unit['held']>>) {
    const wire = this.wire!
    const known = this.columns(wire)
    const parts: Array<{read: NonNullable<Unit['held']>; columns: Columns}> = []
    // A statement takes at most 65,535 bound values (the protocol's count is 16 bits): reads beyond half of that go alone.
    let bound = 0
    for (const read of reads) {
      const columns = known.get(statementName(read.text))
      if (reads.length > 1 && columns && columns.length > 0 && columns.every((c) => TEXT_AS_SENT.has(c.oid)) && (bound += read.values.length) <= 32_767) parts.push({read, columns})
      else this.write(read)
    }
    if (parts.length === 0) return
    if (parts.length === 1) return this.write(parts[0]!.read)
    const key = parts.map((p) => statementName(p.read.text)).join(' ')
    let text = mergedTexts.get(key)
    if (text === undefined) {
      const width = Math.max(...parts.map((p) => p.columns.length))
      let offset = 0
      text = parts
        .map(({read, columns}, q) => {
          const branch = tagged(q, columns, width, `(${shifted(read.text, offset)})`)
          offset += read.values.length
          return branch
        })
        .join(' UNION ALL ')
      mergedTexts.set(key, text)
    }
    this.write(
      combined(
        text,
        parts.flatMap((p) => p.read.values),
        parts.map(({read, columns}) => ({columns, rows: [], resolve: read.resolve, reject: read.reject})),
      ),
    )
  }

  private write({text, values, resolve, reject, parts}: NonNullable<Unit['held']> & {parts?: Part[]}) {
    if (this.failure !== undefined) return reject(aborted())
    const wire = this.wire!
    const name = statementName(text)
    const columns = this.columns(wire).get(name)
    // A merged read is never described: its rows are its parts' (tag, then text columns).
    const sent: Sent = {name, text, parsing: false, describing: !columns && !parts, fields: columns, rows: [], parts, resolve, reject}
    this.cork(wire)
    if (wire.parsedStatements[name] === undefined && wire.submittedNamedStatements[name] === undefined) {
      wire.parse({name, text})
      wire.submittedNamedStatements[name] = text
      sent.parsing = true
    }
    wire.bind({statement: name, values: values.map((v) => this.codec.prepare(bindable(v)))})
    if (sent.describing) wire.describe({type: 'P', name: ''})
    wire.execute({portal: ''})
    this.inFlight.push(sent)
  }

  /**
   * The held statement with a deferred write joined to it as a data-modifying CTE, its placeholders numbered
   * after the statement's: PostgreSQL runs it to completion whatever the statement does, with the statement's
   * snapshot, and a failure of either fails the one statement (and so the unit). Only a write of a table the
   * statement does not name (one statement must not change a row twice), into a statement of the same turn.
   * Decided and built once per pair of texts (`joinedTexts`).
   */
  private join(text: string, values: unknown[]): boolean {
    const held = this.held
    if (!held) return false
    let byWrite = joinedTexts.get(held.text)
    if (!byWrite) joinedTexts.set(held.text, (byWrite = new Map()))
    let joined = byWrite.get(text)
    if (joined?.by !== held.values.length) byWrite.set(text, (joined = {text: joinedText(held.text, held.values.length, text), by: held.values.length}))
    if (joined.text === false) return false
    held.text = joined.text
    held.values = [...held.values, ...values]
    return true
  }

  /**
   * The turn's statements leave in one socket write, with a Flush (the server answers them without waiting
   * for a Sync): uncorked once the microtasks of the turn ran (a microtask's `nextTick` runs when the queue
   * is empty), so a write issued a few `await`s after the statements before it (a create's INSERT and the
   * unit's Sync) goes with them, not in a write and a round trip of its own.
   */
  private cork(wire: Wire) {
    if (this.corked) return
    this.corked = true
    wire.stream.cork?.()
    queueMicrotask(() =>
      process.nextTick(() => {
        this.corked = false
        this.release()
        if (!this.synced) wire.flush()
        wire.stream.uncork?.()
      }),
    )
  }

  private columns(wire: Wire): Map<string, Columns> {
    let columns = columnsOf.get(wire)
    if (!columns) columnsOf.set(wire, (columns = new Map()))
    return columns
  }

  /** Sends a statement whose answer nothing waits for; its failure fails the commit. */
  private send(text: string, values: unknown[]) {
    const sent = this.statement(text, values)
    sent.catch(() => {})
    this.pending.push(sent)
  }

  /**
   * Deferred writes, sent with the Sync (one socket write), each joined to the turn's last statement when it can
   * be (`join`): so a deferred write must not depend on what the statements of its turn do to other tables.
   */
  private readonly deferred: Array<[text: string, values: unknown[]]> = []
  readonly defer = (text: string, values: unknown[]) => {
    this.deferred.push([text, values])
  }

  /** Writes the domain settles at the COMMIT (`Store.atCommit`), their failures as the domain mapped them. */
  private readonly settling: Promise<unknown>[] = []
  readonly atCommit = async (write: Promise<unknown>) => {
    write.catch(() => {})
    this.settling.push(write)
  }

  /** Ends the unit's series of messages: the server commits its transaction, or has rolled it back. */
  private sync() {
    if (this.synced || !this.wire) return
    this.release()
    this.synced = true
    this.wire.sync()
  }

  /**
   * The deferred writes and the Sync; resolves once the transaction committed, or throws the first failure:
   * a settled write's first (the domain's answer to it), else the first statement's (the statements after a
   * failed one fail 25P02).
   */
  async commit(): Promise<void> {
    for (const [text, values] of this.deferred.splice(0)) if (!this.join(text, values)) this.send(text, values)
    this.sync()
    const failed = (await Promise.allSettled([...this.settling, ...this.pending])).find((r) => r.status === 'rejected')
    if (failed) throw failed.reason
    await this.end
    if (this.failure !== undefined) throw this.failure
    if (this.status !== 'I') throw new Error(`PostgreSQL did not commit the unit (transaction status ${this.status ?? 'unknown'})`)
  }

  /**
   * Ends a unit that failed: BEGIN and ROLLBACK before the Sync if its series is still open; a transaction
   * block still open after it (a failed statement skipped the ROLLBACK) gets a ROLLBACK of node-postgres' own.
   */
  async rollback(): Promise<void> {
    if (this.failure === undefined && !this.synced) {
      for (const text of ['BEGIN', 'ROLLBACK']) this.statement(text, []).catch(() => {})
      this.sync()
    }
    await this.end
    if (this.status !== 'I') await this.client.query('ROLLBACK')
  }
}

/**
 * Connections per gateway process: `PAYAPP_GATEWAY_PG_POOL`, else two per core, at least 4 (units waiting on a row
 * lock hold theirs) and at most 10 (12 a process with the watch's two, so Debian's `max_connections` of 100 still
 * covers eight processes). Each connection is a server process running a unit's statements; beyond about two per
 * core they only take turns on the cores, which costs the server CPU: on the 2-core machine, with the server there
 * too, a pool of 4 made 1.15 times the keyed writes of a pool of 10 with 0.78 of the server's CPU per write
 * (docs/shared-gateway.md).
 */
export function poolSize(setting: string | undefined, cores = availableParallelism()): number {
  const set = Number(setting)
  // A setting that is not a count of connections (empty, 0, negative, fractional, not a number) leaves the default.
  return Number.isInteger(set) && set > 0 ? set : Math.min(10, Math.max(4, 2 * cores))
}

/**
 * The URL as messages and `gateway start --json` may show it: the password (in the user part or a
 * `password` parameter) replaced by `***`.
 */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    if (u.searchParams.has('password')) u.searchParams.set('password', '***')
    return u.toString()
  } catch {
    return url.replace(/(:\/\/[^:/@]*:)[^@]*@/, '$1***@')
  }
}

/** A database the gateway cannot open: no server there, or it refused us. `code` tells `gateway start` which. */
export class StorageOpenError extends Error {
  override readonly name = 'StorageOpenError'
  constructor(
    message: string,
    readonly code: 'db_unreachable' | 'db_refused',
  ) {
    super(message)
  }
}

/** Connection-level failures (`unreachable`: the host, the network, the server starting or shutting down) against refusals (auth, no such database). */
function openError(location: string, error: unknown): StorageOpenError {
  const code = String(sqlState(error) ?? '')
  const reason = (error as Error).message || code
  const timeout = /timeout/i.test(reason)
  return unreachable(error) || timeout
    ? new StorageOpenError(`Cannot reach PostgreSQL at ${location}: ${reason}${code && !reason.includes(code) ? ` (${code})` : ''}`, 'db_unreachable')
    : new StorageOpenError(`PostgreSQL at ${location} refused the gateway: ${reason}${code ? ` (${code})` : ''}`, 'db_refused')
}

/** The `Store` methods of a connection: PgConnection's own, not its `_` helpers. */
const storeMethods = () => Object.getOwnPropertyNames(PgConnection.prototype).filter((n) => n !== 'constructor' && !n.startsWith('_') && !(TABLES as readonly string[]).includes(n))

/** The read handle over the pool: its write methods throw. */
function readFacade(conn: PgConnection): Store {
  const wrap = (target: object, methods: Iterable<string>, writes: ReadonlySet<string>) => {
    const out: Record<string, unknown> = {}
    for (const method of methods) {
      const fn = (target as Record<string, (...args: unknown[]) => unknown>)[method]
      out[method] = writes.has(method) ? refuseWrite(method) : fn.bind(target)
    }
    return out
  }
  const store = wrap(conn, storeMethods(), WRITES['']!)
  for (const table of TABLES) store[table] = wrap(conn[table], Object.keys(conn[table]), WRITES[table]!)
  return store as unknown as Store
}

const CONNECTION = Symbol('connection')
/** A unit's handle's methods, made once: each calls its unit's connection's. */
let unitMethods: object | undefined

/**
 * A unit's handle (one per unit): the methods and the tables through a prototype made once (`unitPrototype`), the
 * tables as the connection makes them (their functions are its own). Binding each method of each table per unit, as
 * the read handle is made once, cost 15 µs of the gateway's time a keyed create (2.9% of its CPU profile).
 */
function unitFacade(conn: PgConnection): Store {
  unitMethods ??= unitPrototype()
  const store = Object.create(unitMethods) as Record<string | symbol, unknown>
  store[CONNECTION] = conn
  return store as unknown as Store
}

/** A unit's store's prototype: each method calls the unit's connection's; each table is a getter, reading it is what makes it (PgConnection). */
function unitPrototype(): Record<string, unknown> {
  const proto: Record<string, unknown> = Object.fromEntries(
    storeMethods().map((method) => [
      method,
      function (this: {[CONNECTION]: Record<string, (...args: unknown[]) => unknown>}, ...args: unknown[]) {
        return this[CONNECTION][method]!(...args)
      },
    ]),
  )
  for (const table of TABLES) {
    Object.defineProperty(proto, table, {
      get(this: {[CONNECTION]: PgConnection}) {
        return this[CONNECTION][table]
      },
    })
  }
  return proto
}

export class PostgresStorage implements Storage {
  readonly reads: Store
  /** Where the data lives, its password redacted: for messages. */
  readonly location: string
  private ended = false
  /** Per call: see `generation`. */
  private calls = 0
  /** The shared version read that the requests of this turn of the event loop wait for (see `external`). */
  private versionRead?: Promise<string>
  /** Documents this process inserted, and the count at which it next refreshes the planner's statistics. */
  private inserts = 0
  private nextAnalyze = 200

  /** The shared version's reads (`external`), on a connection of their own. */
  private readonly versionReads: PgConnection

  private constructor(
    private readonly pool: Pool,
    /**
     * One connection for the shared version that every request reads first: on the pool it queued behind the
     * units that hold all its connections under load (13 ms at the median, 55 ms at p99, with 50 requests in
     * flight), and each request then queued again for its own unit.
     */
    private readonly side: Pool,
    url: string,
    private readonly codec: Codec,
    /** Another process's change of the shared version, told to this one (see `external`). */
    private readonly watch: VersionWatch,
  ) {
    this.location = redactUrl(url)
    this.reads = readFacade(new PgConnection(runner(pool, this)))
    this.versionReads = new PgConnection(runner(side, this))
  }

  private readonly availability = new Availability()

  onAvailability(listener: (change: AvailabilityChange) => void): void {
    this.availability.listen(listener)
  }

  /** A read (`wrote` false) or a unit was answered: the server is back if it was away; writable if a unit committed. */
  reached(wrote = false): void {
    this.availability.reached(wrote)
  }

  /** A statement or a unit failed: told once per outage (or read-only spell) when the server could not be reached (or written). */
  failed(error: unknown): void {
    this.availability.failed(error)
  }

  /**
   * Connects, then creates or migrates the schema under an advisory lock, so several processes starting
   * at once on one database do it one after another. A database it cannot reach or that refuses it is a
   * `StorageOpenError` whose message names the URL without its password.
   */
  static async open(url: string, opts: {max?: number; timeoutMs?: number} = {}): Promise<PostgresStorage> {
    const {default: pg} = await import('pg')
    const answerMs = opts.timeoutMs ?? answerDeadlineMs(process.env.PAYAPP_GATEWAY_PG_TIMEOUT)
    const options = {
      ...withServerOptions(url, serverSettings(answerMs)),
      // The server's plan_cache_mode (PostgreSQL's default, auto: a prepared statement's first five executions
      // planned with their values, then its generic plan where that costs no more; replanned after an ANALYZE).
      // Forcing custom plans made planning half of the server's time per keyed write (docs/architecture.md).
      connectionTimeoutMillis: answerMs,
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') => (format === 'binary' ? pg.types.getTypeParser(oid, format) : parsers(oid))) as typeof pg.types.getTypeParser,
      },
    }
    // Stored JSON as its bytes (list routes splice it), counts and ids as numbers.
    const parsers: Parsers = (oid) => (oid === 114 || oid === 3802 ? (value) => value : oid === 20 || oid === 1700 ? Number : pg.types.getTypeParser(oid, 'text'))
    // Connections per gateway process (PAYAPP_GATEWAY_PG_POOL), besides the version's: units beyond it wait for one in the pool's queue.
    // A unit writes its statements itself (Unit); node-postgres' pipeline, which refuses such a query, is for the version's reads.
    // A connection once opened stays open however long it idles (min = max, a fixed-size pool): closed after 30 s
    // idle, they were opened again all at once by the next burst, each a new server process with cold caches that
    // parses and plans the statements again (docs/shared-gateway.md says what that cost).
    const max = opts.max ?? poolSize(process.env.PAYAPP_GATEWAY_PG_POOL)
    const pool = new pg.Pool({...options, max, min: max})
    const side = new pg.Pool({...options, max: 1, min: 1, pipeline: true})
    for (const p of [pool, side]) {
      // A connection the server dropped (a restart, a failover) must not crash the process: an idle one's error
      // goes to the pool's listener, a checked-out one's (a unit's) to its own, and its statements fail instead.
      p.on('error', () => {})
      p.on('connect', (client) => client.on('error', () => {}))
      answerDeadline(p, answerMs)
    }

    const watch = new VersionWatch(
      () => {
        // It pings every half second: silent longer than the storage's deadline (2 s at least), it is cut and connects again.
        const client = new pg.Client(options)
        const ms = Math.max(answerMs, 2000)
        client.once('connect', () => cutWhenSilent(client, ms).setTimeout(ms))
        return client
      },
      async (text, values) => (await pool.query(text, values)).rows,
    )
    const {prepareValue} = (pg as unknown as {utils: {prepareValue: (value: unknown) => unknown}}).utils
    const storage = new PostgresStorage(pool, side, url, {parse: parsers, prepare: prepareValue}, watch)
    let client: PoolClient
    try {
      client = await pool.connect()
    } catch (error) {
      await Promise.all([pool.end(), side.end()]).catch(() => {})
      throw openError(storage.location, error)
    }
    // A migration may build indexes for minutes, or wait that long for another process's under the lock: no deadline,
    // and no lock timeout in its transaction.
    socketOf(client).setTimeout(0)
    const begin = 'BEGIN; SET LOCAL lock_timeout = 0'
    try {
      await client.query(begin)
      await client.query(`SELECT pg_advisory_xact_lock(hashtext('payapp.schema'))`)
      const current = await client.query<{value: string}>(`SELECT value FROM meta WHERE key = 'schema_version'`).catch(() => undefined)
      const found = current?.rows[0]?.value
      // A newer gateway's schema (a rolling upgrade's later process): migrating it "back" would undo its changes.
      if (Number(found) > Number(SCHEMA_VERSION)) {
        throw new StorageOpenError(
          `PostgreSQL at ${storage.location} holds payapp's schema version ${found}, newer than this gateway's ${SCHEMA_VERSION}: run the payapp that created it (or a newer one)`,
          'db_refused',
        )
      }
      if (found !== SCHEMA_VERSION) {
        // A failed probe (no meta table yet) aborted the transaction: start it again under the lock.
        if (!current) {
          await client.query('ROLLBACK')
          await client.query(begin)
          await client.query(`SELECT pg_advisory_xact_lock(hashtext('payapp.schema'))`)
        }
        await client.query(SCHEMA)
        await client.query(`INSERT INTO meta (key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, [SCHEMA_VERSION])
      }
      await client.query('COMMIT')
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      client.release()
      await Promise.all([pool.end(), side.end()]).catch(() => {})
      throw error instanceof StorageOpenError ? error : openError(storage.location, error)
    }
    client.release()
    await watch.start()
    return storage
  }

  get open(): boolean {
    return !this.ended
  }

  /**
   * A new database fills up faster than autovacuum (a one-minute nap) analyzes it, and until then the
   * planner, which knows nothing of the expression indexes' values, scans the objects table for lookups
   * such as a variant's option combination. So at 200, 1,000, 5,000, … of its inserts this process asks the
   * server to analyze it (`ANALYZE_IF_GROWN`, outside any unit, non-blocking, once the unit that made the
   * count has committed: asked mid-unit, the analysis could count none of that unit's rows), which the server does once for
   * all the processes: when the table has doubled since its last analysis, whoever made it, and no other
   * process is analyzing it. Each process analyzing on its own count analyzed the table as many times as
   * there were processes, each reading and parsing a sample of up to 30,000 documents: in a 6 s run of keyed
   * writes through three processes (pg_stat_statements), 84 µs of the server's time per write against 21 µs.
   */
  private readonly inserted = () => {
    if (++this.inserts < this.nextAnalyze) return
    this.nextAnalyze *= 5
    this.analyzeDue = true
  }
  /** A count was reached: the next unit to commit asks for the analysis (`inserted`). */
  private analyzeDue = false
  private analyze(): void {
    if (!this.analyzeDue || this.ended) return
    this.analyzeDue = false
    this.analyzing = this.pool.query(ANALYZE_IF_GROWN).then(() => {}, () => {})
  }
  /** The last `ANALYZE_IF_GROWN` this process sent, answered or not (tests wait for it). */
  private analyzing?: Promise<void>

  /**
   * A unit on its own pooled connection, BEGIN … COMMIT, or ROLLBACK when `fn` throws. Units run
   * concurrently (with other processes' too); a deadlock between two is retried, as SQLite, which runs
   * units one at a time, never has one.
   */
  async write<T>(fn: (tx: Store) => Promise<T>): Promise<T> {
    // The documents an earlier run of this unit read, and could not write back because another unit changed them
    // in between: the next run locks them as it reads them (`PgConnection.hot`), so it writes them, not runs again.
    const hot = new Set<string>()
    for (let attempt = 1; ; attempt++) {
      let client: PoolClient
      try {
        client = await this.pool.connect()
      } catch (error) {
        const mapped = mapError(error)
        this.failed(mapped)
        throw mapped
      }
      let broken: Error | undefined
      let released = false
      // Back to the pool as soon as the unit ends: waiting for the other processes' acknowledgements needs none of it.
      const release = () => {
        if (!released) client.release(broken)
        released = true
      }
      const unit = new Unit(client, this.codec)
      // A change of the shared version is announced to the other processes (pg-watch.ts), before the unit's answer.
      let announced: ReturnType<VersionWatch['inUnit']> | undefined
      try {
        const store = unitFacade(new PgConnection(unit.run, this.inserted, unit.defer, true, unit.atCommit, hot))
        announced = this.watch.inUnit(store, unit.run)
        const result = await fn(store)
        await unit.commit()
        // Asked while the unit's connection is still out: the analysis goes on another of the pool's, as before the
        // release moved here (on the same one, it reached the server ahead of other processes' commits under way).
        this.analyze()
        release()
        await announced.committed()
        this.reached(true)
        return result
      } catch (error) {
        announced?.failed()
        // What failed the unit as it threw: a connection lost during the rollback below does not change the answer.
        const cause = unit.cause(error)
        try {
          await unit.rollback()
        } catch (rollback) {
          broken = rollback as Error
        }
        const contended = sqlState(cause) === '40P01' || sqlState(cause) === '40001'
        const lost = (cause as {document?: unknown}).document
        if (typeof lost === 'string') hot.add(lost)
        if (contended && attempt < 5) continue
        // Still contended after five runs: busy, sent again in a moment (429), not a server error.
        const mapped = contended ? new StorageBusy((cause as Error).message) : mapError(cause)
        // A connection refused a write is dropped: the next one may reach the writable server the URL leads to by then.
        if (mapped instanceof StorageUnavailable && mapped.readOnly) broken ??= mapped
        this.failed(mapped)
        throw mapped
      } finally {
        release()
      }
    }
  }

  /**
   * Another process may commit at any time, and nothing tells this one before its next read begins, so
   * no computed read is reused: each call is a new generation (the read cache is off on PostgreSQL).
   */
  generation(_kinds: readonly Kind[]): string {
    return `pg:${++this.calls}`
  }

  /**
   * The token moves when another process changed the shared version (`SHARED_VERSION_KEY`, which a
   * revocation, a fault rule or a clock move changes in its unit). While the watch (pg-watch.ts) vouches for
   * every change committed before now, it is the watch's count of them, and costs no query. Otherwise (its
   * connection down, or stalled) it is the shared version itself, read from the database: one query serves
   * every request that arrived before it was sent (it goes out on the next turn of the event loop, after
   * them); a request that arrives while it is out waits for the next one, so each sees every change
   * committed before it began.
   */
  async external(): Promise<string> {
    const token = this.watch.token()
    if (token !== undefined) return token
    this.versionRead ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.versionRead = undefined
      return this.versionReads.meta(SHARED_VERSION_KEY).then((version) => `v:${version ?? ''}`)
    })
    return this.versionRead
  }

  async close(): Promise<void> {
    if (this.ended) return
    this.ended = this.availability.closed = true
    await Promise.all([this.watch.close(), this.pool.end(), this.side.end()])
  }
}

/** `PgConnection._insertRow`'s last statement per table (and RETURNING clause), with the columns it names. */
const insertTexts = new Map<string, {keys: string[]; text: string}>()

/** One connection's (or the pool's) statements; `PostgresStorage` serves them through the `Store` facade. */
class PgConnection {
  constructor(
    readonly _run: Run,
    /** Called after each document insert (PostgresStorage keeps the planner's statistics fresh). */
    readonly _inserted: () => void = () => {},
    /** Sends a write whose answer nothing reads without waiting for it (a unit: its failure fails the COMMIT). */
    readonly _defer: (text: string, values: unknown[]) => Promise<void> | void = async (text, values) => {
      await this._run(text, values)
    },
    /** In a unit of work (a transaction), where reads that decide a write lock their rows. */
    readonly _unit = false,
    /** Settles a write at the unit's COMMIT (outside a unit: now). */
    readonly _atCommit: (write: Promise<unknown>) => Promise<void> = async (write) => {
      await write
    },
    /**
     * The ids of the documents an earlier run of this unit could not write back (`save`: another unit changed the
     * row after the run read it). This run reads them with a row lock (`FOR UPDATE`), which holds other writers off
     * until it commits: concurrent changes of one document then take turns, where without it each conflict ran
     * the losers again, and of 24 concurrent changes of one order about 12 were still refused (429) after five runs.
     * The other documents are read as before, unlocked, so units of different documents never wait for each other.
     */
    readonly hot: ReadonlySet<string> = new Set(),
  ) {}

  atCommit(write: Promise<unknown>): Promise<void> {
    return this._atCommit(write)
  }

  /**
   * In a unit, the text of each document as the unit first read it, or as it last wrote it, by id: `save` writes
   * a document only if its row still holds that text, so a change another unit committed since (a concurrent
   * request's, or a stock reservation's conditional update) is never overwritten by a copy read before it (a
   * lost update), whichever of the unit's reads the copy came from.
   */
  private readonly seen = new Map<string, string>()

  /** A document row's JSON, parsed; in a unit, remembered (`seen`): as read, unless read before; as written (`own`). */
  _doc<T>(text: string, own = false): T {
    const doc = JSON.parse(text) as T
    const id = (doc as {id: string}).id
    if (this._unit && (own || !this.seen.has(id))) this.seen.set(id, text)
    return doc
  }

  /**
   * Documents a list read returned, parsed (`_doc`). Those an earlier run of the unit lost (`hot`) and this run
   * has not locked yet are read again with their row lock, and returned (and remembered) as the lock found them.
   */
  async _docs<T>(texts: string[]): Promise<T[]> {
    if (!this._unit || this.hot.size === 0) return texts.map((text) => this._doc<T>(text))
    const parsed = texts.map((text) => ({text, doc: JSON.parse(text) as T & {id: string}}))
    const relock = parsed.filter(({doc}) => this.hot.has(doc.id) && !this.locked.has(doc.id)).map(({doc}) => doc.id)
    const fresh = new Map<string, string>()
    if (relock.length > 0) {
      for (const row of await this._run<{data: string}>(RELOCK, [relock])) fresh.set((JSON.parse(row.data) as {id: string}).id, row.data)
      for (const id of relock) this.locked.add(id)
    }
    // Remembered as first read in this run (`seen`): the locked text, unless the run read the row before.
    return parsed.map(({text, doc}) => this._doc<T>(fresh.get(doc.id) ?? text))
  }
  /** The `hot` documents this run read with their row lock. */
  private readonly locked = new Set<string>()
  /** `text`, or the statement that reads the same row with its lock when the document is `hot` (and remembers it locked). */
  private _locking(id: string, text: string, locked: string): string {
    if (!this._unit || !this.hot.has(id)) return text
    this.locked.add(id)
    return locked
  }

  /** `INSERT INTO <table> (<keys>) VALUES ($1, …)` for one row object: the text built again only for other columns than the last row's. */
  async _insertRow(table: string, row: Record<string, unknown>, returning = ''): Promise<QueryResultRow[]> {
    const keys = Object.keys(row)
    const at = returning ? `${table}${returning}` : table
    let known = insertTexts.get(at)
    if (!known || known.keys.length !== keys.length || known.keys.some((k, i) => k !== keys[i])) {
      insertTexts.set(at, (known = {keys, text: `INSERT INTO ${table} (${keys.join(', ')}) VALUES (${keys.map((_, i) => `$${i + 1}`).join(', ')})${returning}`}))
    }
    return this._run(known.text, Object.values(row))
  }

  async _one<R extends QueryResultRow>(text: string, values: unknown[]): Promise<R | undefined> {
    return (await this._run<R>(text, values))[0]
  }

  async meta(key: string): Promise<string | undefined> {
    return (await this._one<{value: string}>('SELECT value FROM meta WHERE key = $1', [key]))?.value
  }

  async metaWithPrefix(prefix: string): Promise<[string, string][]> {
    const rows = await this._run<{key: string; value: string}>('SELECT key, value FROM meta WHERE starts_with(key, $1)', [prefix])
    return rows.map((row) => [row.key, row.value])
  }

  async setMeta(key: string, value: string): Promise<void> {
    await this._run('INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [key, value])
  }

  async insert<K extends Kind>(kind: K, scope: Scope, doc: Documents[K], opts: InsertOptions): Promise<Documents[K]> {
    try {
      await this._insertRow('objects', objectRow(kind, scope, doc, opts))
      this._inserted()
    } catch (error) {
      if (error instanceof UniqueViolation) throw new UniqueViolation(`${kind} ${doc.id}: ${error.message}`)
      throw error
    }
    return doc
  }

  async save<T extends {id: string}>(doc: T): Promise<T> {
    const text = JSON.stringify(doc)
    const before = this.seen.get(doc.id)
    if (before === undefined) {
      await this._run('UPDATE objects SET data = $1 WHERE id = $2', [text, doc.id])
      return doc
    }
    // Read in this unit: written only over what it read. Another unit's commit in between fails the unit as a
    // serialization failure, which `PostgresStorage.write` runs again from the start (it reads the new row then).
    const rows = await this._run('UPDATE objects SET data = $1 WHERE id = $2 AND data::text = $3 RETURNING kind', [text, doc.id, before])
    if (rows.length === 0) throw Object.assign(new Error(`${doc.id} was changed by another request since this one read it`), {code: '40001', document: doc.id})
    this.seen.set(doc.id, text)
    return doc
  }

  async replaceIf<T extends {id: string}>(doc: T, where: readonly Condition[]): Promise<boolean> {
    const params = new Params()
    const parts = [`data = ${params.p(JSON.stringify(doc))}`, `id = ${params.p(doc.id)}`]
    const guards = where.map((c) => condition(c, params))
    const rows = await this._run(`UPDATE objects SET ${parts[0]} WHERE ${[parts[1], ...guards].join(' AND ')} RETURNING kind`, params.values)
    if (rows.length > 0 && this._unit) this.seen.set(doc.id, params.values[0] as string)
    return rows.length > 0
  }

  /**
   * One conditional UPDATE: PostgreSQL re-evaluates its WHERE on the newest committed row after waiting
   * for a concurrent writer's lock, so `reserved + qty <= stock` holds across connections and processes.
   */
  async increment<K extends Kind>(kind: K, scope: Scope, id: string, change: Increment): Promise<Documents[K] | undefined> {
    const params = new Params()
    const by = params.p(change.by)
    const value = change.floor === undefined ? `${numeric(change.field)} + ${by}::numeric` : `GREATEST(${params.p(change.floor)}::numeric, ${numeric(change.field)} + ${by}::numeric)`
    const changes = `(${params.p(JSON.stringify(change.set ?? {}))}::jsonb || jsonb_build_object('${name(change.field)}', ${value}))`
    const guard = change.atMost === undefined ? '' : ` AND ${numeric(change.field)} + ${by}::numeric <= ${numeric(change.atMost)}`
    for (const key of Object.keys(change.set ?? {})) name(key)
    const row = await this._one<{data: string}>(
      `UPDATE objects SET data = payapp_json_set(data, ${changes})
       WHERE id = ${params.p(id)} AND kind = '${name(kind)}' AND merchant = ${params.p(scope.merchant)} AND env = ${params.p(scope.env)}${guard} RETURNING data`,
      params.values,
    )
    return row ? this._doc<Documents[K]>(row.data, true) : undefined
  }

  async remove(id: string): Promise<void> {
    await this._run('DELETE FROM objects WHERE id = $1', [id])
  }

  async get<K extends Kind>(kind: K, scope: Scope, id: string): Promise<Documents[K] | undefined> {
    const text = this._locking(id, 'SELECT data FROM objects WHERE id = $1 AND kind = $2 AND merchant = $3 AND env = $4', LOCK_EXCLUSIVE)
    const row = await this._one<{data: string}>(text, [id, kind, scope.merchant, scope.env])
    return row ? this._doc<Documents[K]>(row.data) : undefined
  }

  async lock<K extends Kind>(kind: K, scope: Scope, id: string, mode: 'exclusive' | 'shared'): Promise<Documents[K] | undefined> {
    if (!this._unit) return this.get(kind, scope, id)
    // READ COMMITTED: the statements a unit issues after this one read what the unit it waited for committed.
    // A document an earlier run lost is locked exclusively whatever the mode (`hot`): the run is to write it back.
    const row = await this._one<{data: string}>(this._locking(id, mode === 'exclusive' ? LOCK_EXCLUSIVE : LOCK_SHARED, LOCK_EXCLUSIVE), [id, kind, scope.merchant, scope.env])
    return row ? this._doc<Documents[K]>(row.data) : undefined
  }

  /**
   * A few ids go in a list of 1, 2, 4, … 32 placeholders (the rest NULL, which equals nothing): its generic
   * plan expects as many rows as it has places, no more than the planned ones, so the prepared statement
   * settles on it. With `id = ANY($1)` the generic plan expects ten, costs more than a custom plan of a
   * variant's three, and PostgreSQL planned every call anew (130 µs a keyed variant create, its costliest statement).
   */
  async getMany<K extends Kind>(kind: K, scope: Scope, ids: readonly string[]): Promise<Documents[K][]> {
    if (ids.length === 0) return []
    const places = ids.length > 32 ? 0 : 2 ** Math.ceil(Math.log2(ids.length))
    const rows = places
      ? await this._run<{data: string}>(getManyText(kind, places), [scope.merchant, scope.env, ...ids, ...Array.from({length: places - ids.length}, () => null)])
      : await this._run<{data: string}>(getManyText(kind, 0), [scope.merchant, scope.env, ids])
    return this._docs<Documents[K]>(rows.map((r) => r.data))
  }

  async find<K extends Kind>(kind: K, id: string): Promise<{scope: Scope; doc: Documents[K]} | undefined> {
    const text = this._locking(id, 'SELECT merchant, env, data FROM objects WHERE id = $1 AND kind = $2', FIND_LOCKED)
    const row = await this._one<{merchant: string; env: Scope['env']; data: string}>(text, [id, kind])
    return row ? {scope: {merchant: row.merchant, env: row.env}, doc: this._doc<Documents[K]>(row.data)} : undefined
  }

  /**
   * The kind inlined (a statement per kind): a generic plan that knows the kind expects a product's few option
   * groups, not the average child of a parent, which a product of thousands of variants raises until the custom
   * plans look cheaper and the statement was planned on most calls.
   */
  async all<K extends Kind>(kind: K, scope: Scope, parent?: string): Promise<Documents[K][]> {
    const rows =
      parent === undefined
        ? await this._run<{data: string}>(`SELECT data FROM objects WHERE merchant = $1 AND env = $2 AND kind = '${name(kind)}' ORDER BY seq ASC`, [scope.merchant, scope.env])
        : await this._run<{data: string}>(`SELECT data FROM objects WHERE parent = $1 AND kind = '${name(kind)}' AND merchant = $2 AND env = $3 ORDER BY seq ASC`, [
            parent,
            scope.merchant,
            scope.env,
          ])
    return this._docs<Documents[K]>(rows.map((r) => r.data))
  }

  async where<K extends Kind>(kind: K, scope: Scope, where: readonly Condition[]): Promise<Documents[K][]> {
    const params = new Params()
    const rows = await this._run<{data: string}>(`SELECT data FROM objects WHERE ${scoped(kind, scope, params, where)} ORDER BY seq ASC`, params.values)
    return this._docs<Documents[K]>(rows.map((r) => r.data))
  }

  async ids(kind: Kind, scope: Scope, where: readonly Condition[], parent?: string): Promise<string[]> {
    const params = new Params()
    const rows = await this._run<{id: string}>(`SELECT id FROM objects WHERE ${scoped(kind, scope, params, where, parent)}`, params.values)
    return rows.map((r) => r.id)
  }

  async keyed(kind: Kind, scope: Scope, parent: string, key: string): Promise<string | undefined> {
    const row = await this._one<{id: string}>('SELECT id FROM objects WHERE parent = $1 AND unique_key = $2 AND kind = $3 AND merchant = $4 AND env = $5', [
      parent,
      key,
      kind,
      scope.merchant,
      scope.env,
    ])
    return row?.id
  }

  async lastVariantSortOrder(product: string): Promise<number | null> {
    return (await this._one<{max: number}>(LAST_VARIANT_SORT_ORDER, [product]))?.max ?? null
  }

  async pageRaw(kind: Kind, scope: Scope, query: PageQuery): Promise<RawPage> {
    const params = new Params()
    let sql = scoped(kind, scope, params, query.where, query.parent)
    // An unknown cursor compares with NULL: an empty page, never another scope's rows.
    if (query.starting_after !== undefined) {
      sql += ` AND seq < (SELECT seq FROM objects WHERE id = ${params.p(query.starting_after)} AND merchant = ${params.p(scope.merchant)} AND env = ${params.p(scope.env)})`
    }
    const rows = await this._run<{id: string; data: string}>(
      `SELECT id, data FROM objects WHERE ${sql} ORDER BY seq DESC LIMIT ${params.p(query.limit + 1)} OFFSET ${params.p(query.offset)}`,
      params.values,
    )
    const hasMore = rows.length > query.limit
    if (hasMore) rows.pop()
    return {rows: rows.map((r) => r.data), ids: rows.map((r) => r.id), hasMore}
  }

  async page<K extends Kind>(kind: K, scope: Scope, query: PageQuery): Promise<{docs: Documents[K][]; hasMore: boolean}> {
    const {rows, hasMore} = await this.pageRaw(kind, scope, query)
    return {docs: await this._docs<Documents[K]>(rows), hasMore}
  }

  async childrenRaw(kind: Kind, scope: Scope, parents: readonly string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>(parents.map((p) => [p, []]))
    const rows = await this._run<{parent: string; data: string}>(
      `SELECT parent, data FROM objects WHERE merchant = $1 AND env = $2 AND kind = '${name(kind)}' AND parent = ANY($3::text[]) ORDER BY seq DESC`,
      [scope.merchant, scope.env, parents],
    )
    for (const row of rows) out.get(row.parent)?.push(row.data)
    return out
  }

  async wipe(scope: Scope): Promise<number> {
    return (await this._run('DELETE FROM objects WHERE merchant = $1 AND env = $2 RETURNING seq', [scope.merchant, scope.env])).length
  }

  // ---------------------------------------------------------------- merchants and blobs

  async merchant(id: string, lock?: 'exclusive'): Promise<MerchantDoc | undefined> {
    // NO KEY UPDATE: held against another unit's lock of the merchant, not against the key-share locks of the rows
    // that reference it (a credential's insert).
    const text = lock && this._unit ? 'SELECT data FROM merchants WHERE id = $1 FOR NO KEY UPDATE' : 'SELECT data FROM merchants WHERE id = $1'
    const row = await this._one<{data: string}>(text, [id])
    return row ? (JSON.parse(row.data) as MerchantDoc) : undefined
  }

  async merchantBySlug(slug: string): Promise<MerchantDoc | undefined> {
    const row = await this._one<{data: string}>(`SELECT data FROM merchants WHERE (data#>>'{store,slug}') = $1`, [slug])
    return row ? (JSON.parse(row.data) as MerchantDoc) : undefined
  }

  async saveMerchant(doc: MerchantDoc): Promise<void> {
    await this._run('INSERT INTO merchants (id, created, data) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET data = excluded.data', [doc.id, doc.created, JSON.stringify(doc)])
  }

  async putBlob(id: string, bytes: Buffer): Promise<void> {
    await this._run('INSERT INTO file_blobs (id, bytes) VALUES ($1, $2)', [id, bytes])
  }

  async blob(id: string): Promise<Buffer | undefined> {
    return (await this._one<{bytes: Buffer}>('SELECT bytes FROM file_blobs WHERE id = $1', [id]))?.bytes
  }

  // ---------------------------------------------------------------- credentials, idempotency, webhooks

  // Each table's methods are made on first use: a unit uses one or two tables, and made with the connection they were
  // about 30 closures and 3 KB on every unit.
  private _credentials?: CredentialTable
  get credentials(): CredentialTable {
    return (this._credentials ??= {
      insert: async (r) => {
        await this._insertRow('credentials', credentialRow(r))
      },
      revoke: async (id, kind, at) => (await this._run('UPDATE credentials SET revoked = $1 WHERE id = $2 AND kind = $3 AND revoked IS NULL RETURNING id', [at, id, kind])).length > 0,
      byTokenHash: (tokenHash) => this._credential('token_hash', tokenHash),
      byId: (id) => this._credential('id', id),
      browserOrigins: async () =>
        (
          await this._run<{value: string}>(
            "SELECT DISTINCT o.value FROM credentials c, json_array_elements_text(c.origins::json) AS o(value) WHERE c.kind = 'publishable_key' AND c.revoked IS NULL AND c.origins IS NOT NULL",
          )
        ).map((r) => r.value),
    })
  }

  /** An unrevoked credential by its token hash or id, its JSON columns parsed. */
  async _credential(by: 'token_hash' | 'id', value: string): Promise<CredentialRecord | undefined> {
    return credentialRecord(await this._one<CredentialRow>(`SELECT ${CREDENTIAL_COLUMNS} FROM credentials WHERE ${by} = $1 AND revoked IS NULL`, [value]))
  }

  private _idempotency?: IdempotencyTable
  get idempotency(): IdempotencyTable {
    return (this._idempotency ??= {
      read: (credential, key) => this._one<IdempotencyRecord>('SELECT fingerprint, state, status, body, created FROM idempotency WHERE credential = $1 AND key = $2', [credential, key]),
      // The primary key (credential, key) decides a race: an insert, or the replacement of an expired row only.
      // A concurrent unit's uncommitted claim makes this wait for it, then see its row.
      claim: async (credential, key, fingerprint, now, expiredBefore, state = 'in_flight') =>
        (
          await this._run(
            `INSERT INTO idempotency (credential, key, fingerprint, state, created) VALUES ($1, $2, $3, $6, $4)
             ON CONFLICT (credential, key) DO UPDATE SET fingerprint = excluded.fingerprint, state = excluded.state, status = NULL, body = NULL, created = excluded.created
             WHERE idempotency.created <= $5 RETURNING key`,
            [credential, key, fingerprint, now, expiredBefore, state],
          )
        ).length > 0,
      // A concurrent unit's plan makes the update wait for it, then find the row planned (read committed): its plan is read.
      plan: async (credential, key, plan, created) => {
        if (created === undefined) {
          await this._run(`UPDATE idempotency SET body = $1 WHERE credential = $2 AND key = $3 AND state = 'advancing'`, [plan, credential, key])
          return plan
        }
        await this._run(`UPDATE idempotency SET body = $1, created = $2 WHERE credential = $3 AND key = $4 AND state = 'advancing' AND body IS NULL`, [plan, created, credential, key])
        return (await this._one<{body: string | null}>(`SELECT body FROM idempotency WHERE credential = $1 AND key = $2 AND state = 'advancing'`, [credential, key]))?.body ?? undefined
      },
      // Sent with the unit's COMMIT: the answer to store is the unit's last write.
      finish: async (credential, key, status, body) => {
        await this._defer(`UPDATE idempotency SET state = 'done', status = $1, body = $2 WHERE credential = $3 AND key = $4`, [status, body, credential, key])
      },
      // A concurrent unit's answer makes the update wait for it, then find the row done (read committed): nothing is stored.
      answer: async (credential, key, status, body) =>
        (await this._run(`UPDATE idempotency SET state = 'done', status = $1, body = $2 WHERE credential = $3 AND key = $4 AND state = 'advancing' RETURNING key`, [status, body, credential, key])).length > 0,
      releaseInFlight: async () => {
        await this._run("DELETE FROM idempotency WHERE state = 'in_flight'")
      },
      prune: async (before) => {
        await this._run('DELETE FROM idempotency WHERE created <= $1', [before])
      },
    })
  }

  private _webhooks?: WebhookTable
  get webhooks(): WebhookTable {
    return (this._webhooks ??= {
      insertEndpoint: async (e) => {
        await this._insertRow('webhook_endpoints', {...e, events: JSON.stringify(e.events), previous_secrets: JSON.stringify(e.previous_secrets)})
      },
      endpoint: async (id) => endpointRecord(await this._one<EndpointRow>(`SELECT ${ENDPOINT} FROM webhook_endpoints WHERE id = $1`, [id])),
      endpointsOf: async (merchant) =>
        (await this._run<EndpointRow>(`SELECT ${ENDPOINT} FROM webhook_endpoints WHERE merchant = $1 ORDER BY created DESC, seq DESC`, [merchant])).map((row) => endpointRecord(row)!),
      endpointsIn: async (scope) =>
        (await this._run<EndpointRow>(`SELECT ${ENDPOINT} FROM webhook_endpoints WHERE merchant = $1 AND env = $2 ORDER BY seq`, [scope.merchant, scope.env])).map(
          (row) => endpointRecord(row)!,
        ),
      removeEndpoint: async (id) => (await this._run('DELETE FROM webhook_endpoints WHERE id = $1 RETURNING id', [id])).length > 0,
      setSecrets: async (id, secret, previous) => {
        await this._run('UPDATE webhook_endpoints SET secret = $1, previous_secrets = $2 WHERE id = $3', [secret, JSON.stringify(previous), id])
      },
      enqueue: async (endpoint, event, body, at, fault) => {
        const [row] = await this._insertRow(
          'webhook_deliveries',
          {
            endpoint,
            event_id: event.id,
            event_type: event.type,
            body,
            next_attempt: at,
            created: at,
            fault: fault?.rule ?? null,
            fail_attempts: fault?.failAttempts ?? 0,
            effects: fault && fault.effects.length > 0 ? JSON.stringify(fault.effects) : null,
            duplicate_of: fault?.duplicateOf ?? null,
            held_until: fault?.heldUntil ?? null,
            ord: fault?.ord ?? null,
          },
          ' RETURNING id',
        )
        return (row as {id: number}).id
      },
      nextDue: async (merchant) =>
        (
          await this._one<{due: number | null}>(
            `SELECT MIN(d.next_attempt) AS due FROM webhook_endpoints e JOIN webhook_deliveries d ON d.endpoint = e.id AND d.next_attempt IS NOT NULL WHERE e.merchant = $1`,
            [merchant],
          )
        )?.due ?? undefined,
      pendingEndpoints: (merchant) =>
        this._run<{endpoint: string; merchant: string; due: number}>(
          `SELECT d.endpoint, e.merchant, MIN(d.next_attempt) AS due FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint
           WHERE d.next_attempt IS NOT NULL AND ($1::text IS NULL OR e.merchant = $1) GROUP BY d.endpoint, e.merchant`,
          [merchant ?? null],
        ),
      dueFor: (endpoint, now, limit) =>
        this._run<DueDelivery>(
          `SELECT id, endpoint, event_id, event_type, body, attempts, fault, fail_attempts FROM webhook_deliveries
           WHERE endpoint = $1 AND next_attempt IS NOT NULL AND next_attempt <= $2 ORDER BY COALESCE(ord, id) LIMIT $3`,
          [endpoint, now, limit],
        ),
      /**
       * The endpoint's first due delivery is the gate: locked or skipped, never passed over for a later one
       * (`SKIP LOCKED` on that row alone: a process claiming the endpoint right now makes this one claim
       * nothing, so one process sends to an endpoint at a time, in order), and claimable on its newest
       * version (READ COMMITTED re-checks a locking SELECT's WHERE on a row changed since this statement's
       * snapshot: another process may have claimed or sent it since). Then the batch, each row checked again
       * on its newest version (the UPDATE); the other rows' leases as of the snapshot.
       */
      claim: async (endpoint, owner, now, wallNow, leaseUntil, limit) =>
        (
          await this._run<DueDelivery & {rank: number}>(
            `WITH gate AS (
               SELECT id FROM webhook_deliveries WHERE id = (
                 SELECT id FROM webhook_deliveries WHERE endpoint = $3 AND next_attempt IS NOT NULL AND next_attempt <= $4 ORDER BY COALESCE(ord, id) LIMIT 1)
               AND next_attempt IS NOT NULL AND next_attempt <= $4 AND (owner IS NULL OR owner = $1 OR lease_until <= $5)
               FOR UPDATE SKIP LOCKED),
             batch AS (
               SELECT id FROM webhook_deliveries WHERE endpoint = $3 AND next_attempt IS NOT NULL AND next_attempt <= $4 AND EXISTS (SELECT 1 FROM gate)
               ORDER BY COALESCE(ord, id) LIMIT $6)
             UPDATE webhook_deliveries SET owner = $1, lease_until = $2
             WHERE id IN (SELECT id FROM batch)
               AND next_attempt IS NOT NULL AND next_attempt <= $4 AND (owner IS NULL OR owner = $1 OR lease_until <= $5)
               AND NOT EXISTS (SELECT 1 FROM webhook_deliveries WHERE endpoint = $3 AND owner IS NOT NULL AND owner <> $1 AND lease_until > $5)
             RETURNING id, endpoint, event_id, event_type, body, attempts, fault, fail_attempts, COALESCE(ord, id) AS rank`,
            [owner, leaseUntil, endpoint, now, wallNow, limit],
          )
        )
          .sort((x, y) => x.rank - y.rank)
          .map(({rank: _, ...row}) => row),
      release: async (owner) => {
        await this._run('UPDATE webhook_deliveries SET owner = NULL, lease_until = NULL WHERE owner = $1', [owner])
      },
      dueCount: async (merchant, upTo) =>
        (
          await this._one<{n: number}>(
            `SELECT COUNT(*) AS n FROM webhook_endpoints e JOIN webhook_deliveries d ON d.endpoint = e.id
             WHERE e.merchant = $1 AND d.next_attempt IS NOT NULL AND d.next_attempt <= $2`,
            [merchant, upTo],
          )
        )?.n ?? 0,
      recordAttempt: async (delivery, attempt, at, outcome, owner) => {
        const held = await this._run(
          'UPDATE webhook_deliveries SET attempts = $1, next_attempt = $2, delivered = $3, owner = NULL, lease_until = NULL WHERE id = $4 AND ($5::text IS NULL OR owner = $5) RETURNING id',
          [attempt, outcome.next, outcome.delivered ? at : null, delivery, owner ?? null],
        )
        // The lease ran out and another process took the delivery over: its attempt is the one logged.
        if (held.length === 0) return false
        await this._insertRow('webhook_attempts', {
          delivery,
          attempt,
          attempted: at,
          status: outcome.status,
          error: outcome.error,
          next_attempt: outcome.next,
          injected: outcome.injected ?? false,
        })
        return true
      },
      attempts: async (endpoint) =>
        (
          await this._run<Omit<DeliveryAttempt, 'effects'> & {effects: string | null}>(
            `SELECT a.delivery, d.event_id, d.event_type, a.attempt, a.attempted, a.status, a.error, a.next_attempt, a.injected,
                  d.fault, d.effects, d.duplicate_of, d.held_until
             FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery WHERE d.endpoint = $1 ORDER BY a.seq`,
            [endpoint],
          )
        ).map((row) => ({...row, effects: row.effects ? (JSON.parse(row.effects) as DeliveryAttempt['effects']) : []})),
      deliveryCounts: async (eventIds) => {
        const counts = new Map<string, {delivered: number; failing: number; unattempted: number}>()
        const rows = await this._run<{event_id: string; delivered: number; failing: number; unattempted: number}>(
          `SELECT event_id, COUNT(*) FILTER (WHERE ok) AS delivered, COUNT(*) FILTER (WHERE NOT ok AND tried) AS failing,
                  COUNT(*) FILTER (WHERE NOT ok AND NOT tried) AS unattempted
           FROM (SELECT event_id, bool_or(delivered IS NOT NULL) AS ok, bool_or(attempts > 0) AS tried FROM webhook_deliveries
                 WHERE event_id = ANY($1::text[]) GROUP BY event_id, endpoint) AS per_endpoint
           GROUP BY event_id`,
          [eventIds],
        )
        for (const {event_id, ...c} of rows) counts.set(event_id, c)
        return counts
      },
    })
  }

  private _jobs?: JobTable
  get jobs(): JobTable {
    return (this._jobs ??= {
      insert: async (job) => {
        await this._insertRow('jobs', {...job})
      },
      next: (merchant, now) => this._one<Job>(`SELECT ${JOB} FROM jobs WHERE merchant = $1 AND due <= $2 ORDER BY due, id LIMIT 1`, [merchant, now]),
      earliest: async (merchant) => (await this._one<{due: number | null}>('SELECT MIN(due) AS due FROM jobs WHERE merchant = $1', [merchant]))?.due ?? undefined,
      merchants: async () => (await this._run<{merchant: string}>('SELECT DISTINCT merchant FROM jobs')).map((row) => row.merchant),
      // A DELETE that another unit's DELETE of the same row committed first finds nothing: a job runs once.
      remove: async (id) => (await this._run('DELETE FROM jobs WHERE id = $1 RETURNING id', [id])).length > 0,
      cancel: async (ref, kind) => {
        await this._run('DELETE FROM jobs WHERE ref = $1 AND ($2::text IS NULL OR kind = $2)', [ref, kind ?? null])
      },
      pending: async (refs) => (refs.length === 0 ? [] : this._run<Job>(`SELECT ${JOB} FROM jobs WHERE ref = ANY($1::text[]) ORDER BY due, id`, [refs])),
    })
  }
  private _rates?: RateTable
  get rates(): RateTable {
    return (this._rates ??= {
      hit: async (key, window, by = 1) =>
        (
          await this._one<{count: number}>(
            'INSERT INTO rate_counts (key, win, count) VALUES ($1, $2, $3) ON CONFLICT (key, win) DO UPDATE SET count = rate_counts.count + excluded.count RETURNING count',
            [key, window, by],
          )
        )!.count,
      prune: async (before) => {
        await this._run('DELETE FROM rate_counts WHERE win < $1', [before])
      },
    })
  }

  private _faults?: FaultTable
  get faults(): FaultTable {
    return (this._faults ??= {
      // In a unit (a strike, a delivery being queued) the rows are locked until it commits: two processes'
      // strikes take turns, each drawing from the generators' state the other stored.
      all: () => this._run<FaultRow>(`SELECT id, rule, draws FROM fault_rules ORDER BY seq${this._unit ? ' FOR UPDATE' : ''}`),
      insert: async (row) => {
        await this._insertRow('fault_rules', {...row})
      },
      update: async (row) => {
        await this._run('UPDATE fault_rules SET rule = $1, draws = $2 WHERE id = $3', [row.rule, row.draws, row.id])
      },
      remove: async (id) => (await this._run('DELETE FROM fault_rules WHERE id = $1 RETURNING id', [id])).length > 0,
      clear: async () => (await this._run('DELETE FROM fault_rules RETURNING id')).length,
    })
  }

  private _leases?: LeaseTable
  get leases(): LeaseTable {
    return (this._leases ??= {
      acquire: async (name, owner, until, now) =>
        (
          await this._run(
            `INSERT INTO leases (name, owner, until) VALUES ($1, $2, $3)
             ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, until = excluded.until WHERE leases.owner = excluded.owner OR leases.until < $4 RETURNING name`,
            [name, owner, until, now],
          )
        ).length > 0,
      release: async (name, owner) => {
        await this._run('DELETE FROM leases WHERE name = $1 AND owner = $2', [name, owner])
      },
      /**
       * In a unit, counting takes a transaction-level advisory lock on the prefix first (a statement of its
       * own, so the count's snapshot is taken after it): units that count, then acquire a lease of that
       * prefix (processes starting at once: "am I alone?") run one after another, as on SQLite.
       */
      live: async (prefix, now) => {
        if (this._unit) await this._run('SELECT pg_advisory_xact_lock(hashtext($1))', [`payapp.leases:${prefix}`])
        return (await this._one<{n: number}>('SELECT COUNT(*) AS n FROM leases WHERE starts_with(name, $1) AND until > $2', [prefix, now]))!.n
      },
    })
  }
}

const ENDPOINT = 'id, merchant, env, url, events, secret, created, installation, previous_secrets'
const JOB = 'id, due, kind, merchant, env, ref'


