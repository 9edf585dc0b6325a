/**
 * Several `payapp gateway start` processes on one database (a SQLite file; a PostgreSQL schema when
 * PAYAPP_TEST_DB is set), each a real process (the built CLI,
 * `bin/run.js`) on its own port: what a team runs behind a load balancer, for tests that a change
 * through one process is what every other one sees. Each process is a `TestGateway` over its URL, so
 * the usual helpers (accounts, admin calls) drive it; `kill()` is a `kill -9`.
 */
import {spawn, type ChildProcess} from 'node:child_process'
import {createInterface} from 'node:readline'

import {BIN, cliEnv, ROOT, tempHome} from './cli.js'
import {TestGateway, type Account} from './gateway.js'
import {prepareDatabase} from './test-db.js'

export interface GatewayProc {
  child: ChildProcess
  url: string
  /** The process's gateway as a test client (requests go to this process only). */
  gw: TestGateway
  /** `kill -9`: no shutdown, claims and leases left as they were. */
  kill(): Promise<void>
}

export interface ClusterOptions {
  /** Extra `gateway start` flags, e.g. `['--rate-limit', 'reads=10']`. */
  args?: string[]
  /** Extra environment, e.g. `{PAYAPP_GATEWAY_LEASE_MS: '1000'}`. */
  env?: Record<string, string>
  /** An existing database file (another cluster's, stopped): a fresh one by default. */
  db?: string
}

export interface Cluster {
  db: string
  adminKey: string
  procs: GatewayProc[]
  /** Starts one more process on the same database. */
  add(): Promise<GatewayProc>
  /** `kill -9` of process `i`, then a new process on the same database in its place (`procs[i]`). */
  restart(i: number): Promise<GatewayProc>
  close(): Promise<void>
}

/** One `gateway start --json` process; resolves once its first line (url, admin key) is printed. */
function startProc(db: string, adminKey: string, opts: ClusterOptions, home: string): Promise<GatewayProc> {
  const args = [BIN, 'gateway', 'start', '--port', '0', '--db', db, '--admin-key', adminKey, '--json', '--no-save-profile', ...(opts.args ?? [])]
  const child = spawn(process.execPath, args, {cwd: ROOT, env: cliEnv(home, opts.env), stdio: ['ignore', 'pipe', 'pipe']})
  let stderr = ''
  child.stderr!.on('data', (d) => (stderr += d))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  return new Promise((resolve, reject) => {
    createInterface({input: child.stdout!}).once('line', (line) => {
      const info = JSON.parse(line) as {url: string}
      resolve({
        child,
        url: info.url,
        gw: TestGateway.attach(info.url, adminKey),
        kill: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
          await exited
        },
      })
    })
    child.once('exit', (code) => reject(new Error(`gateway start exited ${code} before its first line: ${stderr}`)))
  })
}

/** `n` gateway processes on one fresh database (see `TestGateway.tempDbFile`), sharing one admin key. */
export async function startCluster(n: number, opts: ClusterOptions = {}): Promise<Cluster> {
  const home = tempHome()
  // A fresh SQLite file, or a fresh schema on the run's PostgreSQL server (PAYAPP_TEST_DB).
  const db = opts.db ?? TestGateway.tempDbFile()
  await prepareDatabase(db)
  const adminKey = 'adm_multiprocess_test_key_0123456789'
  const procs: GatewayProc[] = []
  // The first creates the schema; the others start together.
  procs.push(await startProc(db, adminKey, opts, home))
  procs.push(...(await Promise.all(Array.from({length: n - 1}, () => startProc(db, adminKey, opts, home)))))
  return {
    db,
    adminKey,
    procs,
    async add() {
      const proc = await startProc(db, adminKey, opts, home)
      procs.push(proc)
      return proc
    },
    async restart(i) {
      await procs[i]!.kill()
      procs[i] = await startProc(db, adminKey, opts, home)
      return procs[i]!
    },
    async close() {
      await Promise.all(
        procs.map(async (p) => {
          if (p.child.exitCode !== null || p.child.signalCode !== null) return
          const exited = new Promise((resolve) => p.child.once('exit', resolve))
          p.child.kill('SIGTERM')
          await exited
        }),
      )
    },
  }
}

/** The same account (merchant, tokens) with its requests sent to another process. */
export function via(gw: TestGateway, acct: Account): Account {
  const {installation, secretKey} = acct
  return {
    ...acct,
    app: (method, path, opts = {}) => gw.request(method, `/v1/app${path}`, {token: installation.token, ...opts}),
    store: (method, path, opts = {}) => gw.request(method, `/v1/store${path}`, {token: secretKey, ...opts}),
    api: (method, path, opts = {}) => gw.request(method, path, {token: secretKey, ...opts}),
    v1: (method, path, opts = {}) => gw.request(method, `/v1${path}`, {token: secretKey, ...opts}),
  }
}
