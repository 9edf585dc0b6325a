/**
 * Which storage engine the tests' gateways run on: `PAYAPP_TEST_DB` unset → SQLite (`:memory:`, temp
 * files), as users get by default; `PAYAPP_TEST_DB=postgres` → one private PostgreSQL server for the run
 * (scripts/postgres-server.js, started when the root hook loads this module, stopped by its afterAll);
 * `PAYAPP_TEST_DB=postgres://…` → that server.
 * On PostgreSQL every gateway a test starts gets a fresh schema of its own (a `search_path` in its URL):
 * isolated like a new SQLite database, and much cheaper than CREATE DATABASE.
 */
import pg from 'pg'

import {postgresBin, startPostgres} from '../../scripts/postgres-server.js'

const setting = process.env.PAYAPP_TEST_DB?.trim() || undefined
if (setting && setting !== 'postgres' && !/^postgres(ql)?:\/\//.test(setting)) {
  throw new Error(`PAYAPP_TEST_DB must be unset, "postgres" or a postgres:// URL, not ${setting}`)
}

/** Whether this run's gateways use PostgreSQL. */
export const onPostgres = setting !== undefined

let server: {url: string; stop: () => void} | undefined
let admin: pg.Pool | undefined
const created = new Set<string>()
let counter = 0

/** Starts the run's server (`PAYAPP_TEST_DB=postgres`) or checks the given one; nothing on SQLite. */
async function startTestDatabase(): Promise<void> {
  if (!onPostgres || admin) return
  if (setting === 'postgres') {
    server = await startPostgres()
    // A run that ends without the root hook's afterAll (a crash, Ctrl-C) still stops its server.
    process.once('exit', () => server?.stop())
  }
  admin = new pg.Pool({connectionString: server?.url ?? setting, max: 2})
  await admin.query('SELECT 1')
}

// When the root hook loads this module, before any test file: suites name their databases while mocha
// collects them (TestGateway.tempDbFile() in a describe body), so the server's URL must be known by then.
await startTestDatabase()

/** Drops the schemas this run made on a server it was given; stops the one it started. */
export async function stopTestDatabase(): Promise<void> {
  if (!admin) return
  if (!server) for (const schema of created) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  await admin.end()
  admin = undefined
  server?.stop()
  server = undefined
}

/** A URL on the run's server whose tables live in a new, empty schema (created by `prepareDatabase`). */
export function freshPostgresUrl(): string {
  const base = server?.url ?? setting
  if (!base || base === 'postgres') throw new Error('no PostgreSQL server for this run: is the root hook loaded (.mocharc.json)?')
  const schema = `gw_${process.pid}_${++counter}`
  const url = new URL(base)
  url.searchParams.set('options', `-c search_path=${schema}`)
  return url.toString()
}

const schemaOf = (url: string) => /search_path=(\w+)/.exec(new URL(url).searchParams.get('options') ?? '')?.[1]

/** Creates the schema a `freshPostgresUrl()` names (once); other databases need nothing. */
export async function prepareDatabase(db: string): Promise<void> {
  const schema = /^postgres(ql)?:\/\//.test(db) ? schemaOf(db) : undefined
  if (!schema || created.has(schema) || !admin) return
  await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
  created.add(schema)
}

/** The `db` of a gateway a test starts itself (payapp/testing): undefined (its default, in memory), or a fresh schema on PostgreSQL. */
export async function testDb(): Promise<string | undefined> {
  if (!onPostgres) return undefined
  const db = freshPostgresUrl()
  await prepareDatabase(db)
  return db
}

/**
 * A PostgreSQL database for a suite that opens storages itself: a fresh schema on the run's server when the
 * run is on PostgreSQL, else a private server of its own (`stop` ends it); undefined when none is installed.
 */
export async function postgresForSuite(): Promise<{url: string; stop: () => void} | undefined> {
  if (onPostgres) {
    const url = freshPostgresUrl()
    await prepareDatabase(url)
    return {url, stop() {}}
  }
  return postgresBin() ? startPostgres() : undefined
}
