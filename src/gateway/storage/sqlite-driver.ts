/**
 * Which SQLite driver opens the gateway's database: better-sqlite3 12 on Node 20 and 22 (and 24 before 24.19),
 * Node's own `node:sqlite` from Node 24.19 on. Node 24.19 added environment cleanup hooks to `node::ObjectWrap`,
 * a header compiled into every addon built against it, whose destructor aborts the process when V8 collects a
 * wrapped object outside a context ("Assertion failed: (env) != nullptr"): better-sqlite3 12's Statement and Database
 * are such objects, so a gateway built from source there dies at some garbage collection (nodejs/node#65446; 13.x,
 * on Node-API, fixes it but needs Node 22). `node:sqlite` is a release candidate there, with no native build.
 * `PAYAPP_SQLITE_DRIVER=better-sqlite3|node:sqlite` overrides the choice. Both present better-sqlite3's API, the
 * one sqlite.ts is written against: the node:sqlite side is the adapter below, for the calls the gateway makes
 * (error codes, BLOBs as Buffers, pragma, transaction).
 */
import BetterSqlite3 from 'better-sqlite3'

/** The part of node:sqlite this adapter uses (Node 20's @types/node has no node:sqlite). */
interface StatementSync {
  run(...params: unknown[]): {changes: number | bigint; lastInsertRowid: number | bigint}
  get(...params: unknown[]): unknown
  all(...params: unknown[]): unknown[]
  iterate(...params: unknown[]): IterableIterator<unknown>
}
interface DatabaseSync {
  readonly isOpen: boolean
  readonly isTransaction: boolean
  prepare(sql: string): StatementSync
  exec(sql: string): void
  close(): void
}
interface NodeSqlite {
  DatabaseSync: new (location: string, options: {readOnly: boolean; timeout: number; enableForeignKeyConstraints: boolean}) => DatabaseSync
}

export type Driver = 'better-sqlite3' | 'node:sqlite'

/** The driver for this runtime (see the module's comment). */
export function sqliteDriver(version = process.versions.node, env = process.env.PAYAPP_SQLITE_DRIVER): Driver {
  if (env === 'better-sqlite3' || env === 'node:sqlite') return env
  const [major, minor] = version.split('.').map(Number)
  return major > 24 || (major === 24 && minor >= 19) ? 'node:sqlite' : 'better-sqlite3'
}

/** Opens a database with the runtime's driver, as better-sqlite3's `new Database(location, options)` does. */
export function openDatabase(location: string, options: {readonly?: boolean; timeout?: number} = {}): BetterSqlite3.Database {
  if (sqliteDriver() === 'better-sqlite3') return new BetterSqlite3(location, options)
  // process.getBuiltinModule: node:sqlite is looked up only where chosen (Node 20 has none), and bundles keep it as is.
  const {DatabaseSync} = process.getBuiltinModule('node:sqlite') as NodeSqlite
  // better-sqlite3's defaults: a 5 s busy timeout; foreign keys as the connection sets them (PRAGMA).
  const db = new DatabaseSync(location, {readOnly: options.readonly ?? false, timeout: options.timeout ?? 5000, enableForeignKeyConstraints: false})
  return new NodeSqliteDatabase(db) as unknown as BetterSqlite3.Database
}

/** SQLite's extended result codes by number, for better-sqlite3's `error.code` names (the gateway reads them). */
const CODES: Record<number, string> = {
  1: 'SQLITE_ERROR',
  5: 'SQLITE_BUSY',
  6: 'SQLITE_LOCKED',
  7: 'SQLITE_NOMEM',
  8: 'SQLITE_READONLY',
  10: 'SQLITE_IOERR',
  11: 'SQLITE_CORRUPT',
  13: 'SQLITE_FULL',
  14: 'SQLITE_CANTOPEN',
  19: 'SQLITE_CONSTRAINT',
  26: 'SQLITE_NOTADB',
  275: 'SQLITE_CONSTRAINT_CHECK',
  517: 'SQLITE_BUSY_SNAPSHOT',
  773: 'SQLITE_BUSY_TIMEOUT',
  787: 'SQLITE_CONSTRAINT_FOREIGNKEY',
  1299: 'SQLITE_CONSTRAINT_NOTNULL',
  1555: 'SQLITE_CONSTRAINT_PRIMARYKEY',
  1811: 'SQLITE_CONSTRAINT_TRIGGER',
  2067: 'SQLITE_CONSTRAINT_UNIQUE',
}

/** node:sqlite's error with better-sqlite3's `code` (`SQLITE_CONSTRAINT_UNIQUE`, …) in place of `ERR_SQLITE_ERROR`. */
function sqliteError(error: unknown): unknown {
  const errcode = (error as {errcode?: number}).errcode
  if (typeof errcode === 'number') (error as {code: string}).code = CODES[errcode] ?? CODES[errcode & 0xff] ?? `SQLITE_${errcode}`
  return error
}

function call<T>(fn: () => T): T {
  try {
    return fn()
  } catch (error) {
    throw sqliteError(error)
  }
}

type Params = unknown[]

/** A row as better-sqlite3 gives it: BLOBs as Buffers (node:sqlite's are Uint8Arrays; the storage's contract says Buffer). */
function row(value: unknown): unknown {
  if (!value || typeof value !== 'object') return value
  const out = value as Record<string, unknown>
  for (const [key, column] of Object.entries(out)) if (column instanceof Uint8Array && !Buffer.isBuffer(column)) out[key] = Buffer.from(column.buffer, column.byteOffset, column.byteLength)
  return out
}

class NodeSqliteStatement {
  constructor(private readonly stmt: StatementSync) {}

  run(...params: Params) {
    return call(() => this.stmt.run(...params))
  }

  get(...params: Params) {
    return row(call(() => this.stmt.get(...params)))
  }

  all(...params: Params) {
    return call(() => this.stmt.all(...params)).map(row)
  }

  *iterate(...params: Params) {
    for (const value of call(() => this.stmt.iterate(...params))) yield row(value)
  }
}

type Transaction<F extends (...args: never[]) => unknown> = F & {deferred: F; immediate: F; exclusive: F}

class NodeSqliteDatabase {
  constructor(private readonly db: DatabaseSync) {}

  get open(): boolean {
    return this.db.isOpen
  }

  get inTransaction(): boolean {
    return this.db.isTransaction
  }

  prepare(sql: string): NodeSqliteStatement {
    return new NodeSqliteStatement(call(() => this.db.prepare(sql)))
  }

  exec(sql: string): this {
    call(() => this.db.exec(sql))
    return this
  }

  /** `db.pragma('journal_mode = WAL')`: the rows, or with `{simple: true}` the first column of the first row. */
  pragma(source: string, options: {simple?: boolean} = {}): unknown {
    const rows = this.prepare(`PRAGMA ${source}`).all() as Record<string, unknown>[]
    return options.simple ? (rows[0] ? Object.values(rows[0])[0] : undefined) : rows
  }

  /** better-sqlite3's `db.transaction(fn)`: BEGIN … COMMIT (ROLLBACK on a throw), a savepoint when one is open. */
  transaction<F extends (...args: never[]) => unknown>(fn: F): Transaction<F> {
    const wrap = (begin: string) =>
      ((...args: Parameters<F>) => {
        const nested = this.db.isTransaction
        this.exec(nested ? 'SAVEPOINT payapp_tx' : begin)
        try {
          const result = fn(...args)
          this.exec(nested ? 'RELEASE payapp_tx' : 'COMMIT')
          return result
        } catch (error) {
          if (nested) this.exec('ROLLBACK TO payapp_tx').exec('RELEASE payapp_tx')
          else if (this.db.isTransaction) this.exec('ROLLBACK')
          throw error
        }
      }) as F
    return Object.assign(wrap('BEGIN'), {deferred: wrap('BEGIN DEFERRED'), immediate: wrap('BEGIN IMMEDIATE'), exclusive: wrap('BEGIN EXCLUSIVE')})
  }

  close(): this {
    this.db.close()
    return this
  }
}
