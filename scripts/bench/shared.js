/**
 * The shared gateway (docs/shared-gateway.md), side by side in one run: the gateway bench's reads and
 * idempotent writes (scripts/bench/gateway-workloads.js) against
 *   - SQLite, one process (what `payapp gateway start` runs by default), and three on one SQLite file behind
 *     HAProxy (what the cluster costs apart from the engine),
 *   - PostgreSQL, one process,
 *   - PostgreSQL, three processes behind HAProxy (the doc's config),
 *   - the bare node:http server answering the same bytes (the transport's limit),
 * each at the same number of connections, with p99. Targets: PostgreSQL one process ≥ 0.5 of SQLite's write
 * rate, three processes ≥ 0.9 of one, p99 < 50 ms. Without PostgreSQL (not installed, or a gateway that does
 * not take a postgres:// URL yet) it prints "PostgreSQL: not available" and measures the rest.
 *
 * From scripts/bench.js: `await benchShared()`. Alone: `npm run build && node scripts/bench/shared.js`.
 * Env: BENCH_SECONDS (default 8), BENCH_CONNECTIONS (50).
 */
import {execFileSync, spawn} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {createInterface} from 'node:readline'
import {fileURLToPath} from 'node:url'

import autocannon from 'autocannon'

import {HAPROXY, startCluster, startGateway} from '../cluster.js'
import {postgresBin, startPostgres} from '../postgres-server.js'
import {LIST_PATH, seedReads, seedWrites} from './gateway-workloads.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)
const LABELS = {sqlite: 'SQLite, 1 process', sqlite3: 'SQLite file, 3 behind HAProxy', pg1: 'PostgreSQL, 1 process', pg3: 'PostgreSQL, 3 behind HAProxy'}
const fmt = (n, d = 0) => n.toLocaleString('en-US', {maximumFractionDigits: d, minimumFractionDigits: d})

const load = (opts) =>
  new Promise((resolve, reject) => autocannon({connections: CONNECTIONS, duration: SECONDS, pipelining: 1, ...opts}, (err, r) => (err ? reject(err) : resolve(r))))
const summary = (r) => ({rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.non2xx + r.errors + r.timeouts})

/** Why PostgreSQL rows cannot be measured here, or undefined when they can. */
function postgresMissing() {
  if (!postgresBin()) return 'no PostgreSQL server installed (apt-get install postgresql)'
  const help = execFileSync(process.execPath, [join(ROOT, 'bin', 'run.js'), 'gateway', 'start', '--help'], {encoding: 'utf8', env: {...process.env, NO_COLOR: '1'}})
  if (!/postgres/i.test(help)) return 'this build of "gateway start --db" takes no postgres:// URL'
  if (!existsSync(HAPROXY)) return `no HAProxy at ${HAPROXY} (apt-get install haproxy)`
  return undefined
}

/** The bare node:http server answering `text` with `status` and `contentType`. */
function bareServer(work, name, {text, status, contentType}) {
  const file = join(work, name)
  writeFileSync(file, text)
  const child = spawn(process.execPath, [join(ROOT, 'scripts', 'bare-server.js'), file, String(status), contentType], {stdio: ['ignore', 'pipe', 'inherit']})
  return new Promise((resolve, reject) => {
    createInterface({input: child.stdout}).once('line', (line) => resolve({url: JSON.parse(line).url, stop: () => child.kill('SIGTERM')}))
    child.once('exit', (code) => reject(new Error(`bare-server.js exited ${code}`)))
  })
}

function printTable(title, rows, base, bare) {
  console.log(`\n${title}`)
  console.log(`  ${'server'.padEnd(32)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'errors'.padStart(7)} ${'/SQLite'.padStart(8)} ${'/bare'.padStart(6)}`)
  for (const r of rows) {
    if (!r.result) {
      console.log(`  ${r.label.padEnd(32)} ${'not available'.padStart(8)}`)
      continue
    }
    const s = r.result
    console.log(
      `  ${r.label.padEnd(32)} ${fmt(s.rps).padStart(8)} ${fmt(s.p50, 1).padStart(7)} ${fmt(s.p99, 1).padStart(7)} ${String(s.errors).padStart(7)} ${(s.rps / base.rps).toFixed(2).padStart(8)} ${(s.rps / bare.rps).toFixed(2).padStart(6)}`,
    )
  }
}

export async function benchShared() {
  const work = mkdtempSync(join(tmpdir(), 'payapp-bench-shared-'))
  const stops = []
  const adminKey = `adm_bench_${Date.now()}`
  try {
    console.log(`\nShared gateway (docs/shared-gateway.md) — ${CONNECTIONS} connections, ${SECONDS} s per run, every server on this machine`)
    const missing = postgresMissing()
    if (missing) console.log(`  PostgreSQL: not available (${missing}); measuring SQLite and the bare server only`)

    /** Each server: its URL, then its workloads seeded through that URL. */
    const targets = []
    const add = async (key, url) => {
      const reads = await seedReads(url, adminKey)
      targets.push({key, label: LABELS[key], url, reads, writes: await seedWrites(url, reads.token)})
    }
    const home = (name) => {
      mkdirSync(join(work, name))
      return join(work, name)
    }
    const sqlite = await startGateway({db: join(work, 'gateway.sqlite'), adminKey, home: home('sqlite')})
    stops.push(() => sqlite.kill())
    await add('sqlite', sqlite.url)
    // The same three-process path on one SQLite file: what the cluster costs apart from the engine.
    const sqlite3 = await startCluster({db: join(work, 'shared.sqlite'), adminKey, processes: 3})
    stops.push(() => sqlite3.stop())
    await add('sqlite3', sqlite3.url)
    if (!missing) {
      const pg = await startPostgres()
      stops.push(pg.stop)
      // One database per row, so the rows do not share tables or their indexes' size.
      execFileSync('psql', [pg.url, '-q', '-c', 'CREATE DATABASE payapp_three'])
      const one = await startGateway({db: pg.url, adminKey, home: home('pg1')})
      stops.push(() => one.kill())
      await add('pg1', one.url)
      const three = await startCluster({db: pg.url.replace(/\/payapp$/, '/payapp_three'), adminKey, processes: 3})
      stops.push(() => three.stop())
      await add('pg3', three.url)
    }
    const base = targets[0]
    const bareReads = await bareServer(work, 'list.json', base.reads.captured)
    stops.push(bareReads.stop)
    const bareWrites = await bareServer(work, 'variant.json', base.writes.first)
    stops.push(bareWrites.stop)

    // Reads: every server warmed up, then measured twice, interleaved; each keeps its best run.
    const readOpts = (t) => ({url: t.url + LIST_PATH, headers: {authorization: `Bearer ${t.reads.token}`}})
    const readers = [...targets.map((t) => ({label: t.label, key: t.key, opts: () => readOpts(t)})), {label: 'bare node:http', key: 'bare', opts: () => ({url: bareReads.url + LIST_PATH})}]
    for (const r of readers) await load({...r.opts(), duration: 2})
    const readRuns = Object.fromEntries(readers.map((r) => [r.key, []]))
    for (let round = 0; round < 2; round++) for (const r of readers) readRuns[r.key].push(summary(await load(r.opts())))
    const best = (runs) => runs.reduce((a, b) => (b.rps > a.rps ? b : a))
    const reads = Object.fromEntries(readers.map((r) => [r.key, best(readRuns[r.key])]))

    // Writes: each a committed write with a fresh Idempotency-Key; one run each, in the same order.
    const writers = [...targets.map((t) => ({label: t.label, key: t.key, opts: () => t.writes.options(t.url)})), {label: 'bare node:http', key: 'bare', opts: () => base.writes.options(bareWrites.url)}]
    const writes = {}
    for (const w of writers) writes[w.key] = summary(await load(w.opts()))

    const rows = (results) => [
      ...Object.entries(LABELS).map(([key, label]) => ({label, result: results[key]})),
      {label: 'bare node:http', result: results.bare},
    ]
    printTable(`  GET ${LIST_PATH}`, rows(reads), reads.sqlite, reads.bare)
    printTable('  POST /v1/app/products/{id}/variants with Idempotency-Key', rows(writes), writes.sqlite, writes.bare)
    const results = {connections: CONNECTIONS, seconds: SECONDS, reads, writes, postgres: missing ? `not available: ${missing}` : 'measured'}
    if (missing) {
      console.log('  PostgreSQL: not available')
    } else {
      results.pg1_vs_sqlite_writes = writes.pg1.rps / writes.sqlite.rps
      results.pg3_vs_pg1_writes = writes.pg3.rps / writes.pg1.rps
      results.pg3_vs_pg1_reads = reads.pg3.rps / reads.pg1.rps
      const p99 = Math.max(...['pg1', 'pg3'].flatMap((k) => [reads[k].p99, writes[k].p99]))
      console.log(`  PostgreSQL 1 process / SQLite, writes: ${results.pg1_vs_sqlite_writes.toFixed(2)} (target ≥ 0.50)`)
      console.log(`  PostgreSQL 3 processes / 1 process: writes ${results.pg3_vs_pg1_writes.toFixed(2)}, reads ${results.pg3_vs_pg1_reads.toFixed(2)} (target ≥ 0.90)`)
      console.log(`  PostgreSQL p99, worst of reads and writes: ${fmt(p99, 1)} ms (target < 50 ms)`)
    }
    return results
  } finally {
    for (const stop of stops.reverse()) await stop()
    rmSync(work, {recursive: true, force: true})
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const results = await benchShared()
  console.log(JSON.stringify(results))
}
