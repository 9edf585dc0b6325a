/**
 * Several real `payapp gateway start` processes on one database, behind HAProxy running the config of
 * docs/shared-gateway.md (docs/shared-gateway/haproxy.cfg, its ports replaced by free ones): the shared
 * gateway a team runs, brought up for a test. The database is chosen by one switch, so the same tests run
 * on either engine: `PAYAPP_TEST_DB=postgres` (a private server, scripts/postgres-server.js),
 * `PAYAPP_TEST_DB=postgres://…` (that server), otherwise a fresh SQLite file the processes share.
 */
import {spawn, type ChildProcess} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {createServer} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {createInterface} from 'node:readline'

import {BIN, ROOT} from './cli.js'
import {HttpGateway} from './gateway.js'

export const HAPROXY = '/usr/sbin/haproxy'
export const HAPROXY_CONFIG = join(ROOT, 'docs', 'shared-gateway', 'haproxy.cfg')

export interface ClusterProcess {
  url: string
  pid: number
  /** The HAProxy server name (`gw1`…), as the balancer's `X-Payapp-Process` header names it. */
  name: string
  child: ChildProcess
  /** Sends `signal` (default SIGTERM) and resolves once the process has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>
}

export interface Cluster {
  /** The balancer. */
  url: string
  adminKey: string
  /** The database every process uses (a SQLite path or a postgres:// URL). */
  db: string
  processes: ClusterProcess[]
  /** Starts one more gateway process on the same database (not behind the balancer): to read back after a run. */
  startProcess(): Promise<ClusterProcess>
  /** Stops the balancer, every process and a database this cluster started; safe to call twice. */
  stop(): Promise<void>
}

export interface ClusterOptions {
  processes?: number
  /** A SQLite path or postgres:// URL; by default `testDatabase()`'s. */
  db?: string
  /** More `gateway start` flags, e.g. `['--rate-limit', 'writes=20,window=60']` (default `--rate-limit off`). */
  args?: string[]
}

/** Every child any cluster started, killed if the test process exits without stopping them. */
const running = new Set<ChildProcess>()
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL')
})

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const {port} = server.address() as {port: number}
      server.close(() => resolve(port))
    })
  })
}

/** Which engine `PAYAPP_TEST_DB` asks for: a postgres:// URL, `postgres` (a private server), or SQLite. */
export function testEngine(): 'postgres' | 'sqlite' {
  const wanted = process.env.PAYAPP_TEST_DB ?? ''
  return wanted === 'postgres' || wanted.startsWith('postgres://') || wanted.startsWith('postgresql://') ? 'postgres' : 'sqlite'
}

/** The database for a cluster as `PAYAPP_TEST_DB` says, and how to remove it afterwards. */
export async function testDatabase(): Promise<{db: string; stop: () => void}> {
  const wanted = process.env.PAYAPP_TEST_DB ?? ''
  if (wanted.startsWith('postgres://') || wanted.startsWith('postgresql://')) return {db: wanted, stop: () => {}}
  if (wanted === 'postgres') {
    const {startPostgres} = await import('../../scripts/postgres-server.js')
    const server = await startPostgres()
    return {db: server.url, stop: server.stop}
  }
  const dir = mkdtempSync(join(tmpdir(), 'payapp-cluster-'))
  return {db: join(dir, 'gateway.sqlite'), stop: () => rmSync(dir, {recursive: true, force: true})}
}

/**
 * docs/shared-gateway/haproxy.cfg with the balancer on `port` and one `server` line per backend port
 * (the doc's three lines are the model: their options are kept).
 */
export function haproxyConfig(port: number, backends: number[]): string {
  const lines = readFileSync(HAPROXY_CONFIG, 'utf8').split('\n')
  const serverLine = /^(\s*)server gw\d+ 127\.0\.0\.1:\d+(.*)$/
  const model = lines.find((l) => serverLine.test(l))
  if (!model) throw new Error(`${HAPROXY_CONFIG} has no "server gwN 127.0.0.1:PORT" line`)
  const [, indent, rest] = serverLine.exec(model)!
  const servers = backends.map((p, i) => `${indent}server gw${i + 1} 127.0.0.1:${p}${rest}`)
  const out: string[] = []
  for (const line of lines) {
    if (serverLine.test(line)) {
      if (line === model) out.push(...servers)
      continue
    }
    out.push(line.replace(/^(\s*bind 127\.0\.0\.1:)\d+/, `$1${port}`))
  }
  return out.join('\n')
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()))
}

/** SIGTERM, then SIGKILL if the child is still there after `ms`. */
async function terminate(child: ChildProcess, ms = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), ms)
  await exited(child)
  clearTimeout(timer)
}

/** `payapp gateway start --port 0 --json` on `db`, resolved with its first stdout line's URL. */
function startGateway(db: string, adminKey: string, args: string[], home: string, name: string): Promise<ClusterProcess> {
  const child = spawn(process.execPath, [BIN, 'gateway', 'start', '--port', '0', '--db', db, '--admin-key', adminKey, '--json', '--no-save-profile', ...args], {
    cwd: ROOT,
    env: {PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, 'config'), XDG_DATA_HOME: join(home, 'data'), PAYAPP_KEYCHAIN: 'off'},
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  running.add(child)
  child.once('exit', () => running.delete(child))
  let stderr = ''
  child.stderr!.on('data', (d) => (stderr += d))
  return new Promise((resolve, reject) => {
    createInterface({input: child.stdout!}).once('line', (line) => {
      const {url} = JSON.parse(line) as {url: string}
      resolve({
        url,
        pid: child.pid!,
        name,
        child,
        async kill(signal: NodeJS.Signals = 'SIGTERM') {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal)
          await exited(child)
        },
      })
    })
    child.once('exit', (code, signal) => reject(new Error(`gateway start --db ${db} exited ${code ?? signal} before its first line: ${stderr}`)))
  })
}

/** Resolves once the balancer answers through a process (any status but HAProxy's own 503). */
async function balancerReady(url: string, haproxy: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 15_000
  for (;;) {
    if (haproxy.exitCode !== null) throw new Error(`haproxy exited ${haproxy.exitCode}: ${output()}`)
    try {
      const res = await fetch(`${url}/v1/app/products`)
      await res.arrayBuffer()
      if (res.headers.has('x-payapp-process')) return
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`haproxy at ${url} routed nothing within 15 s: ${output()}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Starts `processes` gateway processes on one database and HAProxy in front of them. */
export async function startCluster(opts: ClusterOptions = {}): Promise<Cluster> {
  const count = opts.processes ?? 3
  const database = opts.db ? {db: opts.db, stop: () => {}} : await testDatabase()
  const {db} = database
  const home = mkdtempSync(join(tmpdir(), 'payapp-cluster-home-'))
  const adminKey = `adm_cluster_${randomBytes(12).toString('hex')}`
  const args = opts.args ?? ['--rate-limit', 'off']
  const processes: ClusterProcess[] = []
  const others: ClusterProcess[] = []
  let haproxy: ChildProcess | undefined
  let extra = 0
  const stop = async () => {
    await Promise.all([...(haproxy ? [terminate(haproxy)] : []), ...[...processes, ...others].map((p) => terminate(p.child))])
    database.stop()
    rmSync(home, {recursive: true, force: true})
  }
  try {
    // The first process creates the schema; the others start together on it.
    processes.push(await startGateway(db, adminKey, args, home, 'gw1'))
    processes.push(...(await Promise.all(Array.from({length: count - 1}, (_, i) => startGateway(db, adminKey, args, home, `gw${i + 2}`)))))
    const port = await freePort()
    const config = join(home, 'haproxy.cfg')
    writeFileSync(config, haproxyConfig(port, processes.map((p) => Number(new URL(p.url).port))))
    // -db: stay in the foreground, as a child this process can stop.
    const child = spawn(HAPROXY, ['-db', '-f', config], {stdio: ['ignore', 'pipe', 'pipe']})
    haproxy = child
    running.add(child)
    child.once('exit', () => running.delete(child))
    let output = ''
    child.stdout!.on('data', (d) => (output += d))
    child.stderr!.on('data', (d) => (output += d))
    const url = `http://127.0.0.1:${port}`
    await balancerReady(url, child, () => output)
    return {
      url,
      adminKey,
      db,
      processes,
      async startProcess() {
        const p = await startGateway(db, adminKey, args, home, `extra${++extra}`)
        others.push(p)
        return p
      },
      stop,
    }
  } catch (error) {
    await stop()
    throw error
  }
}

/**
 * Mocha hooks for a suite against one cluster: `gw` talks to the balancer with the admin key, `direct(i)` to
 * process `i` alone. The cluster is stopped after the suite, whether its tests passed or not.
 */
export function clusterForSuite(opts: ClusterOptions = {}): {cluster: Cluster; gw: HttpGateway; direct(i: number): HttpGateway} {
  const suite = {} as {cluster: Cluster; gw: HttpGateway; direct(i: number): HttpGateway}
  before(async function () {
    this.timeout(60_000)
    suite.cluster = await startCluster(opts)
    suite.gw = new HttpGateway(suite.cluster.url, suite.cluster.adminKey)
    suite.direct = (i) => new HttpGateway(suite.cluster.processes[i]!.url, suite.cluster.adminKey)
  })
  after(async function () {
    this.timeout(30_000)
    await suite.cluster?.stop()
  })
  return suite
}

/** The `X-Payapp-Process` names (which process answered) of `responses`, each once. */
export const servedBy = (responses: Array<{headers: Headers}>) => [...new Set(responses.map((r) => r.headers.get('x-payapp-process')))].sort()
