/**
 * The shared gateway of docs/shared-gateway.md brought up for a test (scripts/cluster.js: N real
 * `gateway start` processes on one database behind HAProxy running the doc's haproxy.cfg). The database is
 * chosen by one switch, so the same tests run on either engine: `PAYAPP_TEST_DB=postgres` (a private server,
 * scripts/postgres-server.js), `PAYAPP_TEST_DB=postgres://…` (that server), otherwise a fresh SQLite file
 * the processes share.
 */
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {startCluster as startProcesses, type BalancerVariant, type Cluster} from '../../scripts/cluster.js'
import {HttpGateway} from './gateway.js'

export {freePort} from '../../scripts/postgres-server.js'
export {haproxyConfig, smallMachineVariant, type Cluster, type ClusterProcess} from '../../scripts/cluster.js'

export interface ClusterOptions {
  processes?: number
  /** A SQLite path or postgres:// URL; by default `testDatabase()`'s. */
  db?: string
  /** Process i's URL of that database, where given (through a relay a test cuts). */
  dbs?: string[]
  /** More `gateway start` flags, e.g. `['--rate-limit', 'writes=20,window=60']` (default `--rate-limit off`). */
  args?: string[]
  /** Environment variables for every process, e.g. a short `PAYAPP_GATEWAY_LEASE_MS` where a test kills one. */
  env?: Record<string, string>
  /** Another balancer config than the doc's haproxy.cfg as it is, e.g. `smallMachineVariant()`. */
  balancer?: BalancerVariant
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
  const dir = mkdtempSync(join(tmpdir(), 'payapp-cluster-db-'))
  return {db: join(dir, 'gateway.sqlite'), stop: () => rmSync(dir, {recursive: true, force: true})}
}

/** Starts `processes` (default 3) gateway processes on one database and HAProxy in front; `stop()` removes a database it made. */
export async function startCluster(opts: ClusterOptions = {}): Promise<Cluster> {
  const database = opts.db ? {db: opts.db, stop: () => {}} : await testDatabase()
  try {
    const cluster = await startProcesses({db: database.db, dbs: opts.dbs, processes: opts.processes, args: opts.args, env: opts.env, ...opts.balancer})
    return {
      ...cluster,
      async stop() {
        await cluster.stop()
        database.stop()
      },
    }
  } catch (error) {
    database.stop()
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

/** How many of `responses` each process answered, by its `X-Payapp-Process` name. */
export const servedCounts = (responses: Array<{headers: Headers}>) => {
  const by: Record<string, number> = {}
  for (const r of responses) {
    const name = r.headers.get('x-payapp-process') ?? 'none'
    by[name] = (by[name] ?? 0) + 1
  }
  return by
}
