/**
 * The gateway's storage: one SQLite database (a file by default, `:memory:` on request).
 * Platform objects are JSON documents in one table, scoped by merchant and environment, so that
 * "another merchant's or environment's id is a 404" holds for every kind by construction, and a
 * sandbox reset is one DELETE. better-sqlite3 is synchronous: a route's writes run in one
 * transaction with nothing interleaved, which is what makes stock and idempotency race-free.
 */
import {mkdirSync} from 'node:fs'
import {dirname} from 'node:path'

import Database from 'better-sqlite3'

import type {Environment} from '../sdk/schemas/common.js'

export type Env = Environment

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
  revoked INTEGER
);
CREATE TABLE IF NOT EXISTS objects (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  merchant TEXT NOT NULL,
  env TEXT NOT NULL,
  parent TEXT,
  created INTEGER NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS objects_by_scope ON objects (merchant, env, kind, seq);
-- Children of one parent (a product's prices, a group's values): equality on all four columns lets the
-- planner prefer this index over objects_by_scope, which would scan every object of the kind.
DROP INDEX IF EXISTS objects_by_parent;
CREATE INDEX IF NOT EXISTS objects_by_parent_scope ON objects (parent, kind, merchant, env, seq);
-- Catalogue uniqueness checks (a variant's option combination, its SKU) and the default sort order
-- are index lookups, so creating the 10,000th variant costs what the first did.
CREATE INDEX IF NOT EXISTS variants_by_combination ON objects (parent, json_extract(data, '$.options')) WHERE kind = 'variant';
CREATE INDEX IF NOT EXISTS variants_by_sku ON objects (merchant, env, json_extract(data, '$.sku')) WHERE kind = 'variant';
-- The expiry sweep reads only open sessions that are due, not every session.
CREATE INDEX IF NOT EXISTS checkout_sessions_open_by_expiry ON objects (merchant, env, json_extract(data, '$.expires_at'))
  WHERE kind = 'checkout_session' AND json_extract(data, '$.status') = 'open';
CREATE INDEX IF NOT EXISTS variants_by_sort_order ON objects (parent, json_extract(data, '$.sort_order')) WHERE kind = 'variant';
-- Webhooks: endpoints per merchant and environment, and an outbox of deliveries written in the
-- transaction of the event they carry, so a rolled-back request delivers nothing.
CREATE TABLE IF NOT EXISTS webhook_endpoints (
  id TEXT PRIMARY KEY,
  merchant TEXT NOT NULL,
  env TEXT NOT NULL,
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  secret TEXT NOT NULL,
  created INTEGER NOT NULL
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
  created INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (next_attempt) WHERE next_attempt IS NOT NULL;
CREATE TABLE IF NOT EXISTS webhook_attempts (
  delivery INTEGER NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  attempt INTEGER NOT NULL,
  attempted INTEGER NOT NULL,
  status INTEGER,
  error TEXT,
  next_attempt INTEGER,
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
`

export interface ObjectRow {
  seq: number
  id: string
  kind: string
  merchant: string
  env: Env
  parent: string | null
  created: number
  data: string
}

/** Whose data a query may see: the credential's merchant and environment. */
export interface Scope {
  merchant: string
  env: Env
}

export class Storage {
  readonly db: Database.Database
  private readonly stmts
  /**
   * Write counters per kind of document, and `*` for writes of every kind (a wipe, a rolled-back
   * transaction): a cached read stays valid while the counters of the kinds it read are unchanged.
   */
  private readonly writes = new Map<string, number>([['*', 0]])

  constructor(readonly file: string) {
    if (file !== ':memory:') mkdirSync(dirname(file), {recursive: true, mode: 0o700})
    this.db = new Database(file)
    // WAL: readers never wait for the writer; NORMAL sync keeps every committed write across a
    // process crash (only an OS crash or power loss can drop the last commits).
    this.db.pragma('journal_mode = WAL')
    this.db.pragma('synchronous = NORMAL')
    this.db.pragma('foreign_keys = ON')
    this.db.exec(SCHEMA)
    const db = this.db
    this.stmts = {
      getMeta: db.prepare<[string], {value: string}>('SELECT value FROM meta WHERE key = ?'),
      setMeta: db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value'),
      insert: db.prepare(
        'INSERT INTO objects (id, kind, merchant, env, parent, created, data) VALUES (@id, @kind, @merchant, @env, @parent, @created, @data)',
      ),
      update: db.prepare<[string, string], {kind: string}>('UPDATE objects SET data = ? WHERE id = ? RETURNING kind'),
      remove: db.prepare<[string], {kind: string}>('DELETE FROM objects WHERE id = ? RETURNING kind'),
      get: db.prepare<[string, string, string, string], ObjectRow>(
        'SELECT * FROM objects WHERE id = ? AND kind = ? AND merchant = ? AND env = ?',
      ),
      getAnyKind: db.prepare<[string, string, string], ObjectRow>('SELECT * FROM objects WHERE id = ? AND merchant = ? AND env = ?'),
      page: db.prepare<[string, string, string, number, number], {data: string}>(
        'SELECT data FROM objects WHERE merchant = ? AND env = ? AND kind = ? ORDER BY seq DESC LIMIT ? OFFSET ?',
      ),
      pageByParent: db.prepare<[string, string, string, string, number, number], {data: string}>(
        'SELECT data FROM objects INDEXED BY objects_by_parent_scope WHERE parent = ? AND kind = ? AND merchant = ? AND env = ? ORDER BY seq DESC LIMIT ? OFFSET ?',
      ),
      allByParent: db.prepare<[string, string, string, string], ObjectRow>(
        'SELECT * FROM objects INDEXED BY objects_by_parent_scope WHERE parent = ? AND kind = ? AND merchant = ? AND env = ? ORDER BY seq ASC',
      ),
      all: db.prepare<[string, string, string], ObjectRow>('SELECT * FROM objects WHERE merchant = ? AND env = ? AND kind = ? ORDER BY seq ASC'),
      wipe: db.prepare('DELETE FROM objects WHERE merchant = ? AND env = ?'),
    }
  }

  meta(key: string): string | undefined {
    return this.stmts.getMeta.get(key)?.value
  }

  setMeta(key: string, value: string): void {
    this.stmts.setMeta.run(key, value)
  }

  /** Runs `fn` in one transaction: all of its writes land, or none. */
  transaction<T>(fn: () => T): T {
    try {
      return this.db.transaction(fn)()
    } catch (error) {
      // A read cached inside the rolled-back transaction saw writes that never landed.
      this.touch('*')
      throw error
    }
  }

  private touch(kind: string): void {
    this.writes.set(kind, (this.writes.get(kind) ?? 0) + 1)
  }

  /** Changes whenever a document of one of `kinds` may have been written; see `Platform.cachedRead`. */
  generation(kinds: readonly string[]): string {
    let key = String(this.writes.get('*'))
    for (const kind of kinds) key += `:${this.writes.get(kind) ?? 0}`
    return key
  }

  insert<T extends {id: string}>(kind: string, scope: Scope, doc: T, opts: {parent?: string | null; created: number}): T {
    this.touch(kind)
    this.stmts.insert.run({
      id: doc.id,
      kind,
      merchant: scope.merchant,
      env: scope.env,
      parent: opts.parent ?? null,
      created: opts.created,
      data: JSON.stringify(doc),
    })
    return doc
  }

  /** Replaces a document; the caller has read it through a scoped `get` first. */
  save<T extends {id: string}>(doc: T): T {
    const row = this.stmts.update.get(JSON.stringify(doc), doc.id)
    if (row) this.touch(row.kind)
    return doc
  }

  remove(id: string): void {
    const row = this.stmts.remove.get(id)
    if (row) this.touch(row.kind)
  }

  /** One document of `kind` in the scope; undefined for a missing id and for another scope's id alike. */
  get<T>(kind: string, scope: Scope, id: string): T | undefined {
    const row = this.stmts.get.get(id, kind, scope.merchant, scope.env)
    return row ? (JSON.parse(row.data) as T) : undefined
  }

  getRow(scope: Scope, id: string): ObjectRow | undefined {
    return this.stmts.getAnyKind.get(id, scope.merchant, scope.env)
  }

  /**
   * A page of raw JSON documents, newest first, plus whether more exist; raw so a list route can
   * splice them into its response without parsing and re-serialising.
   */
  pageRaw(kind: string, scope: Scope, limit: number, offset: number, parent?: string): {rows: string[]; hasMore: boolean} {
    const rows = (
      parent === undefined
        ? this.stmts.page.all(scope.merchant, scope.env, kind, limit + 1, offset)
        : this.stmts.pageByParent.all(parent, kind, scope.merchant, scope.env, limit + 1, offset)
    ).map((r) => r.data)
    const hasMore = rows.length > limit
    if (hasMore) rows.pop()
    return {rows, hasMore}
  }

  /** Every document of `kind` in the scope (under `parent` if given), oldest first. */
  all<T>(kind: string, scope: Scope, parent?: string): T[] {
    const rows = parent === undefined ? this.stmts.all.all(scope.merchant, scope.env, kind) : this.stmts.allByParent.all(parent, kind, scope.merchant, scope.env)
    return rows.map((r) => JSON.parse(r.data) as T)
  }

  /** Wipes one merchant's data in one environment (the sandbox reset). */
  wipe(scope: Scope): number {
    this.touch('*')
    return this.stmts.wipe.run(scope.merchant, scope.env).changes
  }

  close(): void {
    if (this.db.open) this.db.close()
  }
}
