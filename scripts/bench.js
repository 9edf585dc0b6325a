#!/usr/bin/env node
/**
 * `npm run bench`: side-by-side measurements in one run, printed as ratios.
 *
 * 1. Gateway reads: GET /v1/app/products?limit=25 (25 full products) against a bare node:http server
 *    that answers the very same response bytes (captured from the gateway): the transport's limit.
 * 2. Idempotent variant creation (a fresh Idempotency-Key and option combination per request) against
 *    the bare server answering the captured 201 bytes.
 * 2b. The gateway beside Prism mocking the OpenAPI document (scripts/bench/openapi.js).
 * 3. CLI start-up (scripts/bench/startup.js): `payapp --version`, `--help` and `products list --json`
 *    beside `node -e 0`.
 * 4. The test clock (scripts/bench/clock.js): a year of renewals in one jump, with and without webhook
 *    deliveries, beside bare POSTs to the same receiver.
 * 5. The gateway inside a test suite (scripts/bench/testing.js): in-process and process start, a suite workload.
 * 6. The SDK's load cost (scripts/bench/sdk.js): import of @payapp/sdk (ESM) and require (CommonJS) beside `node -e 0`.
 * 7. The shared gateway (scripts/bench/shared.js): reads and idempotent writes on SQLite and PostgreSQL with one
 *    process, and with three behind HAProxy, beside the bare server; then the writes' p99 at 0.5 and 0.8 of the
 *    PostgreSQL rows' rate, sent evenly.
 *
 * Each server runs in its own process; autocannon drives it from this one (50 connections).
 * Env: BENCH_SECONDS (default 8), BENCH_CONNECTIONS (50), BENCH_RUNS (CLI runs per command, 21).
 */
import {mkdtempSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

import autocannon from 'autocannon'

import {benchClock} from './bench/clock.js'
import {benchStartup} from './bench/startup.js'
import {benchOpenApi} from './bench/openapi.js'
import {LIST_PATH, seedReads, seedWrites, startJsonServer} from './bench/gateway-workloads.js'

const startServer = (args, env = {}) => startJsonServer(children, args, {cwd: ROOT, env})

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const BIN = join(ROOT, 'bin', 'run.js')
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)
const work = mkdtempSync(join(tmpdir(), 'payapp-bench-'))
const children = []

process.on('exit', () => children.forEach((c) => c.kill('SIGKILL')))


function load(opts) {
  return new Promise((resolve, reject) => {
    autocannon({connections: CONNECTIONS, duration: SECONDS, pipelining: 1, ...opts}, (err, result) => (err ? reject(err) : resolve(result)))
  })
}

const fmt = (n, d = 0) => n.toLocaleString('en-US', {maximumFractionDigits: d, minimumFractionDigits: d})

function summary(name, r) {
  const non2xx = r.non2xx + r.errors + r.timeouts
  return {name, rps: r.requests.average, p99: r.latency.p99, p50: r.latency.p50, non2xx}
}

/** `target` is printed for reads only: every keyed create is a committed SQLite write, which a bare server answering captured bytes never does. */
function printPair(title, gw, bare, target) {
  console.log(`\n${title}`)
  console.log(`  ${'server'.padEnd(18)} ${'req/s'.padStart(10)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'errors'.padStart(7)}`)
  for (const s of [gw, bare]) {
    console.log(`  ${s.name.padEnd(18)} ${fmt(s.rps).padStart(10)} ${fmt(s.p50, 1).padStart(8)} ${fmt(s.p99, 1).padStart(8)} ${String(s.non2xx).padStart(7)}`)
  }
  const ratio = (gw.rps / bare.rps).toFixed(2)
  console.log(target ? `  ratio gateway/bare: ${ratio} (target ≥ 0.50), gateway p99 ${fmt(gw.p99, 1)} ms (target < 10 ms)` : `  ratio gateway/bare: ${ratio} (no target: each request is a committed SQLite write), gateway p99 ${fmt(gw.p99, 1)} ms`)
}

async function main() {
  console.log(`payapp bench — node ${process.version}, ${CONNECTIONS} connections, ${SECONDS} s per run`)
  const {info: gwInfo} = await startServer([BIN, 'gateway', 'start', '--port', '0', '--db', join(work, 'bench.sqlite'), '--rate-limit', 'off', '--json', '--no-save-profile'], {
    XDG_CONFIG_HOME: join(work, 'config'),
    PAYAPP_KEYCHAIN: 'off',
  })
  const url = gwInfo.url
  const {token, captured} = await seedReads(url, gwInfo.admin_key)
  const listPath = LIST_PATH
  const listBody = join(work, 'list.json')
  writeFileSync(listBody, captured.text)
  const {info: bareList} = await startServer([join(ROOT, 'scripts', 'bare-server.js'), listBody, '200', captured.contentType])

  const headers = {authorization: `Bearer ${token}`}
  // Warm both servers up, then measure each twice, interleaved, and keep each one's best run.
  await load({url: url + listPath, headers, duration: 2})
  await load({url: bareList.url + listPath, duration: 2})
  const readRuns = {gw: [], bare: []}
  for (let round = 0; round < 2; round++) {
    readRuns.gw.push(summary('gateway', await load({url: url + listPath, headers})))
    readRuns.bare.push(summary('bare node:http', await load({url: bareList.url + listPath})))
  }
  const best = (runs) => runs.reduce((a, b) => (b.rps > a.rps ? b : a))
  const readGw = best(readRuns.gw)
  const readBare = best(readRuns.bare)
  printPair(`GET ${listPath} (${captured.text.length} bytes)`, readGw, readBare, true)
  const openapi = await benchOpenApi({root: ROOT, url, token, load, summary, children})

  const writes = await seedWrites(url, token)
  const createBody = join(work, 'variant.json')
  writeFileSync(createBody, writes.first.text)
  const {info: bareCreate} = await startServer([join(ROOT, 'scripts', 'bare-server.js'), createBody, String(writes.first.status), writes.first.contentType])
  const createOpts = writes.options
  const createGw = summary('gateway', await load(createOpts(url)))
  const createBare = summary('bare node:http', await load(createOpts(bareCreate.url)))
  printPair(`POST /v1/app/products/{id}/variants with Idempotency-Key (${fmt(writes.created())} variants created)`, createGw, createBare)

  const cli = await benchStartup({url, token, work})
  const clock = await benchClock()

  const results = {
    read: {gateway: readGw, bare: readBare, ratio: readGw.rps / readBare.rps},
    create: {gateway: createGw, bare: createBare, ratio: createGw.rps / createBare.rps},
    openapi,
    cli,
    clock,
  }
  results.catalog = await (await import('./bench/catalog.js')).benchCatalog()
  results.testing = await (await import('./bench/testing.js')).run()
  results.sdk = await (await import('./bench/sdk.js')).run()
  results.shared = await (await import('./bench/shared.js')).benchShared()
  writeFileSync(join(work, 'results.json'), JSON.stringify(results, null, 2))
  console.log(`\nraw results: ${join(work, 'results.json')}`)
  // The results stay; the databases and bodies the runs used (a hundred megabytes) do not pile up in the temp dir.
  for (const name of readdirSync(work)) if (name !== 'results.json') rmSync(join(work, name), {recursive: true, force: true})
}

main()
  .catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
  .finally(() => {
    for (const child of children) child.kill('SIGTERM')
  })
