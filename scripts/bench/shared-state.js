#!/usr/bin/env node
/**
 * What sharing per-process state through the database costs one gateway process (issue 23), side by side
 * in one run: GET /v1/app/products?limit=25 (a cached read) on a SQLite file with rate limits off and on,
 * for this checkout's gateway and for another checkout's build (`BASE_ROOT`, e.g. the commit before),
 * plus this checkout on `:memory:` (in-memory rate counters, no shared-version read). One process on a file
 * counts rate limits in memory too (alone on its database), in storage once a second one joins. Each server runs in
 * its own process; autocannon drives it from this one; rounds alternate so machine load hits all alike.
 *   BASE_ROOT=/tmp/base node scripts/bench/shared-state.js
 * Env: BENCH_MODE (reads, or writes: idempotent product creation), BENCH_SECONDS (5), BENCH_CONNECTIONS (50),
 * BENCH_ROUNDS (3).
 */
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

import autocannon from 'autocannon'

import {startJsonServer} from './gateway-workloads.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const BASE = process.env.BASE_ROOT
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
/** `reads` (default) or `writes` (POST /v1/app/products with an Idempotency-Key each). */
const MODE = process.env.BENCH_MODE ?? 'reads'
const work = mkdtempSync(join(tmpdir(), 'payapp-bench-shared-'))
const children = []
process.on('exit', () => children.forEach((c) => c.kill('SIGKILL')))

async function start(root, db, rateLimit) {
  const args = [join(root, 'bin', 'run.js'), 'gateway', 'start', '--port', '0', '--db', db, '--rate-limit', rateLimit, '--json', '--no-save-profile']
  return (await startJsonServer(children, args, {cwd: root, env: {XDG_CONFIG_HOME: join(work, 'config'), PAYAPP_KEYCHAIN: 'off'}})).info
}

async function call(url, method, path, token, body) {
  const res = await fetch(url + path, {method, headers: {authorization: `Bearer ${token}`, ...(body ? {'content-type': 'application/json'} : {})}, body: body ? JSON.stringify(body) : undefined})
  return res.json()
}

/** A gateway with 25 products and an installation token. */
async function gateway(root, db, rateLimit) {
  const info = await start(root, db, rateLimit)
  const merchant = await call(info.url, 'POST', '/_admin/merchants', info.admin_key, {company: 'Bench GmbH'})
  const {token} = await call(info.url, 'POST', '/_admin/installations', info.admin_key, {merchant: merchant.id, env: 'test', scopes: ['products:read', 'products:write']})
  for (let i = 0; i < 25; i++) await call(info.url, 'POST', '/v1/app/products', token, {name: `Bench product ${i}`, price: {currency: 'eur', unit_amount: 1999 + i}})
  const headers = {authorization: `Bearer ${token}`}
  if (MODE !== 'writes') return {url: `${info.url}/v1/app/products?limit=25`, headers}
  // Idempotent writes: a product per request, each with a fresh Idempotency-Key.
  let n = 0
  const body = JSON.stringify({name: 'Bench product', price: {currency: 'eur', unit_amount: 1999}})
  return {
    url: `${info.url}/v1/app/products`,
    requests: [{method: 'POST', setupRequest: (req) => ({...req, headers: {...headers, 'content-type': 'application/json', 'idempotency-key': `bench-${process.pid}-${++n}`}, body})}],
  }
}

const load = (target, duration = SECONDS) =>
  new Promise((resolve, reject) => autocannon({...target, connections: CONNECTIONS, duration}, (err, result) => (err ? reject(err) : resolve(result))))

const limits = 'reads=100000000,writes=100000000'
const configs = [
  ...(BASE ? [['base file, rate limits off', BASE, 'file', 'off'], ['base file, rate limits on', BASE, 'file', limits]] : []),
  ['this file, rate limits off', ROOT, 'file', 'off'],
  ['this file, rate limits on (alone: in memory)', ROOT, 'file', limits],
  ['this :memory:, rate limits on (in memory)', ROOT, ':memory:', limits],
]
const targets = []
for (const [label, root, db, rate] of configs) targets.push({label, target: await gateway(root, db === 'file' ? join(work, `${targets.length}.sqlite`) : db, rate), runs: []})
for (const t of targets) await load(t.target, 2)
for (let round = 0; round < ROUNDS; round++) {
  for (const t of targets) {
    const r = await load(t.target)
    if (r.non2xx) throw new Error(`${t.label}: ${r.non2xx} non-2xx answers`)
    t.runs.push({rps: r.requests.average, p99: r.latency.p99})
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
console.log(`${MODE === 'writes' ? 'POST /v1/app/products (Idempotency-Key)' : 'GET /v1/app/products?limit=25'}, ${CONNECTIONS} connections, ${SECONDS} s x ${ROUNDS} interleaved rounds (median)`)
const first = median(targets[0].runs.map((r) => r.rps))
for (const t of targets) {
  const rps = median(t.runs.map((r) => r.rps))
  console.log(`  ${t.label.padEnd(44)} ${rps.toFixed(0).padStart(7)} req/s  ${(rps / first).toFixed(2)}x  p99 ${median(t.runs.map((r) => r.p99))} ms`)
}
process.exit(0)
