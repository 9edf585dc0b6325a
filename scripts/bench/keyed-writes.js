#!/usr/bin/env node
/**
 * Only the keyed-write workload of `npm run bench` (idempotent variant creation) beside the bare
 * node:http server answering the captured 201 bytes, BENCH_ROUNDS (3) rounds, with medians; then the
 * read workload (25 full products, GET /v1/app/products?limit=25) once beside bare. For work on the
 * write path without the whole bench.
 * Env: GATEWAYS=dirA,dirB compares checkouts (each with bin/ and built dist/) side by side, one
 * process each (`dir#sqlite` or `dir#postgres` runs that one on that engine whatever BENCH_DB says, so
 * GATEWAYS=dir#sqlite,dir#postgres gives PostgreSQL's write rate beside SQLite's in one run); BENCH_SECONDS (8), BENCH_CONNECTIONS (50), BENCH_READS=0 skips reads,
 * GATEWAY_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=DIR" profiles the gateway processes.
 * BENCH_ROUNDS=0 measures reads only. BENCH_DB=postgres runs each gateway on its own database of one private PostgreSQL server (scripts/postgres-server.js;
 * BENCH_PG_SETTINGS="name=value ..." adds server settings, e.g. shared_preload_libraries=pg_stat_statements) and
 * reports the server's CPU per request beside the gateway's; with pg_stat_statements loaded, it prints the
 * statements' calls and time per created variant of each PostgreSQL gateway (its own database) at the end; BENCH_PG_LOG=FILE keeps the server's log.
 */
import {copyFileSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

import autocannon from 'autocannon'

import {startPostgres} from '../postgres-server.js'
import {LIST_PATH, call, cpuMs, postgresCpuMs, seedReads, seedWrites, startJsonServer, topStatements} from './gateway-workloads.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const work = mkdtempSync(join(tmpdir(), 'payapp-bench-'))
const children = []
const startServer = (args, env = {}) => startJsonServer(children, args, {cwd: ROOT, env})

const load = (opts) =>
  new Promise((resolve, reject) => autocannon({connections: CONNECTIONS, duration: SECONDS, pipelining: 1, ...opts}, (e, r) => (e ? reject(e) : resolve(r))))
/** The PostgreSQL server's CPU time in ms, or NaN without one. */
const serverCpuMs = () => (postgres ? postgresCpuMs(postgres.data) : Number.NaN)
const roots = (process.env.GATEWAYS ?? ROOT).split(',')
/** The engine of a GATEWAYS entry: its `#sqlite` or `#postgres`, else BENCH_DB's. */
const engineOf = (spec) => spec.split('#')[1] ?? (process.env.BENCH_DB === 'postgres' ? 'postgres' : 'sqlite')
const postgres = roots.some((spec) => engineOf(spec) === 'postgres') ? await startPostgres({settings: (process.env.BENCH_PG_SETTINGS ?? '').split(' ').filter(Boolean)}) : undefined
let databases = 0
/** The --db for a gateway: its own database on the private server, or a SQLite file. */
function database(label, engine) {
  if (engine !== 'postgres') return join(work, `gateway-${label.replace(/\W/g, '_')}.sqlite`)
  // Through the server's Unix socket, as docs/shared-gateway.md advises on one machine.
  return postgres.database(`gw${++databases}`)
}
/** A gateway's statements on its database (pg_stat_statements), by total time, per created variant. */
async function statementStats(g) {
  const rows = await topStatements(postgres.url, new URL(g.db).pathname.slice(1))
  const created = g.count()
  const total = rows.reduce((n, r) => n + r.total_exec_time + r.total_plan_time, 0)
  console.log(`statements of ${g.label} (pg_stat_statements), ${created} variants created, ${((total * 1000) / created).toFixed(0)} µs a variant in all: calls/variant, exec+plan µs/variant, query`)
  for (const r of rows) console.log(`  ${(r.calls / created).toFixed(2).padStart(6)} plans ${(r.plans / created).toFixed(2).padStart(5)} plan µs ${((r.total_plan_time * 1000) / created).toFixed(0).padStart(4)} ${(((r.total_exec_time + r.total_plan_time) * 1000) / created).toFixed(0).padStart(6)}  ${r.query}`)
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** A gateway started from `root` (a checkout with bin/ and dist/), a merchant, a product with 3 option groups of 50 values. */
async function gateway(spec, label) {
  // `dir` or `dir?NAME=value&NAME=value`: the checkout and extra environment for its process.
  const [root, query = ''] = spec.split('#')[0].split('?')
  const engine = engineOf(spec)
  const db = database(label, engine)
  const {child, info: gw} = await startServer(
    [...(process.env.GATEWAY_NODE_OPTIONS ?? '').split(' ').filter(Boolean), join(root, 'bin', 'run.js'), 'gateway', 'start', '--port', '0', '--db', db, '--rate-limit', 'off', '--json', '--no-save-profile'],
    {XDG_CONFIG_HOME: join(work, 'config'), PAYAPP_KEYCHAIN: 'off', ...Object.fromEntries(new URLSearchParams(query))},
  )
  const url = gw.url
  // The read workload's merchant and 25 full products, as scripts/bench.js makes them.
  const {token} = await seedReads(url, gw.admin_key)
  const writes = await seedWrites(url, token)
  return {label, engine, db, child, url, token, first: writes.first, opts: (target = url) => writes.options(target), count: writes.created}
}

async function main() {
  const gws = []
  for (const [i, root] of roots.entries()) gws.push(await gateway(root, roots.length === 1 ? 'gateway' : `${i}:${root}`))
  const createBody = join(work, 'variant.json')
  writeFileSync(createBody, gws[0].first.text)
  const {info: bare} = await startServer([join(ROOT, 'scripts', 'bare-server.js'), createBody, String(gws[0].first.status), gws[0].first.contentType])
  const rows = new Map(gws.map((g) => [g, []]))
  for (let round = 0; round < ROUNDS; round++) {
    // The gateways' order alternates per round; each is measured right after the bare server.
    for (const g of round % 2 ? [...gws].reverse() : gws) {
      const b = await load(g.opts(bare.url))
      const cpu0 = cpuMs(g.child.pid)
      const server0 = g.engine === 'postgres' ? serverCpuMs() : Number.NaN
      const r = await load(g.opts())
      const row = {cpu: ((cpuMs(g.child.pid) - cpu0) * 1000) / r.requests.total, serverCpu: ((serverCpuMs() - server0) * 1000) / r.requests.total, ratio: r.requests.average / b.requests.average, rps: r.requests.average, bare: b.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.non2xx + r.errors + r.timeouts}
      rows.get(g).push(row)
      console.log(`round ${round + 1} ${g.label}: ${row.rps.toFixed(0)} req/s (p50 ${row.p50} ms, p99 ${row.p99} ms, errors ${row.errors}, CPU ${row.cpu.toFixed(0)} µs/req${g.engine === 'postgres' ? `, PostgreSQL CPU ${row.serverCpu.toFixed(0)} µs/req` : ''}), bare ${row.bare.toFixed(0)} req/s, ratio ${row.ratio.toFixed(3)}`)
    }
  }
  // BENCH_ROUNDS=0: reads only.
  for (const g of ROUNDS > 0 ? gws : []) {
    const r = rows.get(g)
    console.log(`median ${g.label}: ratio ${median(r.map((x) => x.ratio)).toFixed(3)}, ${median(r.map((x) => x.rps)).toFixed(0)} req/s, p99 ${median(r.map((x) => x.p99))} ms, CPU ${median(r.map((x) => x.cpu)).toFixed(0)} µs/req${g.engine === 'postgres' ? `, PostgreSQL CPU ${median(r.map((x) => x.serverCpu)).toFixed(0)} µs/req` : ''} (${g.count()} variants created)`)
  }
  // Each PostgreSQL gateway's write rate over the first SQLite gateway's, per round (measured minutes apart at most) and the median.
  const sqlite = gws.find((g) => g.engine !== 'postgres')
  for (const g of ROUNDS > 0 && sqlite ? gws.filter((x) => x.engine === 'postgres') : []) {
    const ratios = rows.get(g).map((x, i) => x.rps / rows.get(sqlite).at(i).rps)
    console.log(`${g.label} / ${sqlite.label} write rate: ${median(ratios).toFixed(2)} (rounds ${ratios.map((x) => x.toFixed(2)).join(', ')})`)
  }
  if (process.env.BENCH_READS !== '0') {
    const listPath = LIST_PATH
    const captured = await call(gws[0].url, 'GET', listPath, gws[0].token)
    const listBody = join(work, 'list.json')
    writeFileSync(listBody, captured.text)
    const {info: bareList} = await startServer([join(ROOT, 'scripts', 'bare-server.js'), listBody, '200', captured.contentType])
    const b = await load({url: bareList.url + listPath})
    for (const g of gws) {
      const r = await load({url: g.url + listPath, headers: {authorization: `Bearer ${g.token}`}})
      console.log(`read ${g.label}: ${r.requests.average.toFixed(0)} req/s (p99 ${r.latency.p99} ms), bare ${b.requests.average.toFixed(0)}, ratio ${(r.requests.average / b.requests.average).toFixed(3)}`)
    }
  }
  if (postgres && process.env.BENCH_PG_SETTINGS?.includes('pg_stat_statements')) for (const g of gws.filter((x) => x.engine === 'postgres')) await statementStats(g)
  // SIGINT: the gateway commits what it acknowledged and closes (a --cpu-prof profile is written then).
  await Promise.all(gws.map((g) => new Promise((resolve) => {
    g.child.removeAllListeners('exit')
    g.child.once('exit', resolve)
    g.child.kill('SIGINT')
  })))
}

main()
  .catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
  .finally(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM')
    // BENCH_PG_LOG=file keeps the server's log (e.g. auto_explain's plans) before its directory goes.
    if (postgres && process.env.BENCH_PG_LOG) copyFileSync(join(postgres.dir, 'log'), process.env.BENCH_PG_LOG)
    postgres?.stop()
  })
