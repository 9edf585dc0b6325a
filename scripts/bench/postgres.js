#!/usr/bin/env node
/**
 * The gateway on PostgreSQL beside the gateway on SQLite and a bare node:http server, side by side in one
 * run, one gateway process each (after `npm run build`):
 *
 * 1. Reads: GET /v1/app/products?limit=25 (25 full products), each server twice, interleaved; best run each.
 * 2. Keyed writes: idempotent variant creation (a fresh Idempotency-Key and option combination per request),
 *    interleaved in rounds.
 * 3. Reads with the read cache that SQLite has and PostgreSQL turns off (a per-call generation, since another
 *    process's commit is not announced): the cost of that choice is the PostgreSQL read row against SQLite's.
 *
 * The PostgreSQL server is a private one (scripts/postgres-server.js: Debian's binaries, fsync off), or the one
 * PAYAPP_BENCH_DB names. Env: BENCH_SECONDS (default 8), BENCH_CONNECTIONS (50).
 *
 *   node scripts/bench/postgres.js
 */
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

import autocannon from 'autocannon'

import {startPostgres} from '../postgres-server.js'
import {startJsonServer} from './gateway-workloads.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const BIN = join(ROOT, 'bin', 'run.js')
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)
const startServer = async (children, args, env = {}) => (await startJsonServer(children, args, {cwd: ROOT, env})).info


async function call(url, method, path, token, body, headers = {}) {
  const res = await fetch(url + path, {method, headers: {authorization: `Bearer ${token}`, ...(body ? {'content-type': 'application/json'} : {}), ...headers}, body: body ? JSON.stringify(body) : undefined})
  const text = await res.text()
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`)
  return {status: res.status, text, json: JSON.parse(text), contentType: res.headers.get('content-type')}
}

const load = (opts) =>
  new Promise((resolve, reject) => autocannon({connections: CONNECTIONS, duration: SECONDS, pipelining: 1, ...opts}, (err, r) => (err ? reject(err) : resolve(r))))
const summary = (r) => ({rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.non2xx + r.errors + r.timeouts})
const fmt = (n, d = 0) => n.toLocaleString('en-US', {maximumFractionDigits: d, minimumFractionDigits: d})

/** A merchant, an installation, 25 full products, and a product with 3 option groups of 50 values for variants. */
async function prepare(gw) {
  const admin = (path, body) => call(gw.url, 'POST', `/_admin${path}`, gw.admin_key, body)
  const merchant = (await admin('/merchants', {company: 'Bench GmbH'})).json
  const {token} = (await admin('/installations', {merchant: merchant.id, env: 'test', scopes: ['products:read', 'products:write', 'store:read']})).json
  for (let i = 0; i < 25; i++) {
    await call(gw.url, 'POST', '/v1/app/products', token, {
      name: `Bench product ${i}`,
      description: 'A sturdy, well-made product used to measure the gateway. '.repeat(4),
      images: Array.from({length: 4}, (_, k) => `https://cdn.example.com/p${i}/${k}.jpg`),
      metadata: {sku_family: `fam-${i}`, warehouse: 'berlin-1'},
      tags: ['bench', `t${i}`],
      price: {currency: 'eur', unit_amount: 1999 + i},
    })
  }
  const product = (await call(gw.url, 'POST', '/v1/app/products', token, {name: 'Bench variants', price: {currency: 'eur', unit_amount: 2500}})).json
  const groups = []
  for (const name of ['A', 'B', 'C']) groups.push((await call(gw.url, 'POST', `/v1/app/products/${product.id}/options`, token, {name, values: Array.from({length: 50}, (_, k) => `${name}${k}`)})).json)
  let n = 0
  const variantBody = (i) => JSON.stringify({options: groups.map((g, gi) => ({group: g.id, value: g.values[Math.floor(i / 50 ** gi) % 50].id})), sku: `BENCH-${i}`, title: `Variant ${i}`})
  const headers = {authorization: `Bearer ${token}`}
  return {
    ...gw,
    token,
    headers,
    read: () => load({url: `${gw.url}/v1/app/products?limit=25`, headers}),
    create: (url = gw.url) =>
      load({
        url: `${url}/v1/app/products/${product.id}/variants`,
        method: 'POST',
        headers: {...headers, 'content-type': 'application/json'},
        requests: [{setupRequest: (req) => ({...req, body: variantBody(n), headers: {...req.headers, 'idempotency-key': `bench-${n++}`}})}],
      }),
    created: () => n,
  }
}

export async function benchPostgres() {
  const work = mkdtempSync(join(tmpdir(), 'payapp-bench-pg-'))
  const children = []
  const server = process.env.PAYAPP_BENCH_DB ? {url: process.env.PAYAPP_BENCH_DB, stop: () => {}} : await startPostgres()
  try {
    const env = {XDG_CONFIG_HOME: join(work, 'config'), PAYAPP_KEYCHAIN: 'off'}
    const start = (db) => startServer(children, [BIN, 'gateway', 'start', '--port', '0', '--db', db, '--rate-limit', 'off', '--json', '--no-save-profile'], env)
    const sqlite = await prepare(await start(join(work, 'bench.sqlite')))
    // Through the server's Unix socket when it is the private one (docs/shared-gateway.md).
    const pg = await prepare(await start(server.socketUrl ?? server.url))
    const listed = await call(sqlite.url, 'GET', '/v1/app/products?limit=25', sqlite.token)
    writeFileSync(join(work, 'list.json'), listed.text)
    const bare = await startServer(children, [join(ROOT, 'scripts', 'bare-server.js'), join(work, 'list.json'), '200', listed.contentType])
    const bareRead = () => load({url: `${bare.url}/v1/app/products?limit=25`})

    console.log(`payapp bench: PostgreSQL beside SQLite — node ${process.version}, ${CONNECTIONS} connections, ${SECONDS} s per run, one gateway process each`)
    const runs = {sqlite: [], pg: [], bare: []}
    // Warm each up (2 s), then measure each twice, interleaved, and keep each one's best run.
    for (const url of [sqlite.url, pg.url, bare.url]) await load({url: `${url}/v1/app/products?limit=25`, headers: sqlite.url === url ? sqlite.headers : pg.headers, duration: 2})
    for (let round = 0; round < 2; round++) {
      runs.sqlite.push(summary(await sqlite.read()))
      runs.pg.push(summary(await pg.read()))
      runs.bare.push(summary(await bareRead()))
    }
    const best = (xs) => xs.reduce((a, b) => (b.rps > a.rps ? b : a))
    const reads = {sqlite: best(runs.sqlite), pg: best(runs.pg), bare: best(runs.bare)}
    const writes = {sqlite: [], pg: []}
    for (let round = 0; round < 2; round++) {
      writes.sqlite.push(summary(await sqlite.create()))
      writes.pg.push(summary(await pg.create()))
    }
    const keyed = {sqlite: best(writes.sqlite), pg: best(writes.pg)}

    const row = (name, s, base) =>
      `  ${name.padEnd(26)} ${fmt(s.rps).padStart(9)} ${fmt(s.p50, 1).padStart(7)} ${fmt(s.p99, 1).padStart(7)} ${String(s.errors).padStart(6)}${base ? `   ${(s.rps / base.rps).toFixed(2)}` : ''}`
    const head = (title, of) => console.log(`\n${title}\n  ${'server'.padEnd(26)} ${'req/s'.padStart(9)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'errors'.padStart(6)}   ratio to ${of}`)
    head('GET /v1/app/products?limit=25 (best of 2 interleaved runs each)', 'SQLite')
    console.log(row('gateway on SQLite', reads.sqlite))
    console.log(row('gateway on PostgreSQL', reads.pg, reads.sqlite))
    console.log(row('bare node:http', reads.bare, reads.sqlite))
    console.log(`  PostgreSQL / bare: ${(reads.pg.rps / reads.bare.rps).toFixed(2)}   SQLite / bare: ${(reads.sqlite.rps / reads.bare.rps).toFixed(2)}`)
    head(`POST /v1/app/products/{id}/variants with Idempotency-Key (best of 2 interleaved runs; ${fmt(sqlite.created())} + ${fmt(pg.created())} variants created)`, 'SQLite')
    console.log(row('gateway on SQLite', keyed.sqlite))
    console.log(row('gateway on PostgreSQL', keyed.pg, keyed.sqlite))
    console.log(`  PostgreSQL / SQLite keyed writes: ${(keyed.pg.rps / keyed.sqlite.rps).toFixed(2)} (issue 23's target ≥ 0.5)`)
    return {reads, keyed}
  } finally {
    for (const child of children) child.kill('SIGTERM')
    await new Promise((resolve) => setTimeout(resolve, 300))
    server.stop()
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await benchPostgres()
