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
 *
 * Each server runs in its own process; autocannon drives it from this one (50 connections).
 * Env: BENCH_SECONDS (default 8), BENCH_CONNECTIONS (50), BENCH_RUNS (CLI runs per command, 21).
 */
import {spawn} from 'node:child_process'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

import autocannon from 'autocannon'

import {benchClock} from './bench/clock.js'
import {benchStartup} from './bench/startup.js'
import {benchOpenApi} from './bench/openapi.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const BIN = join(ROOT, 'bin', 'run.js')
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)
const work = mkdtempSync(join(tmpdir(), 'payapp-bench-'))
const children = []

process.on('exit', () => children.forEach((c) => c.kill('SIGKILL')))

/** Starts a child that prints one JSON line (with `url`) once it listens. */
function startServer(args, env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {cwd: ROOT, env: {...process.env, ...env}, stdio: ['ignore', 'pipe', 'inherit']})
    children.push(child)
    let buf = ''
    child.stdout.on('data', (d) => {
      buf += d
      const nl = buf.indexOf('\n')
      if (nl >= 0) resolve({child, info: JSON.parse(buf.slice(0, nl))})
    })
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}`)))
  })
}

async function call(url, method, path, token, body, headers = {}) {
  const res = await fetch(url + path, {
    method,
    headers: {authorization: `Bearer ${token}`, ...(body ? {'content-type': 'application/json'} : {}), ...headers},
    body: body ? JSON.stringify(body) : undefined,
  })
  const text = await res.text()
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`)
  return {status: res.status, text, json: JSON.parse(text), contentType: res.headers.get('content-type')}
}

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
  const admin = (path, body) => call(url, 'POST', `/_admin${path}`, gwInfo.admin_key, body)
  const merchant = (await admin('/merchants', {company: 'Bench GmbH'})).json
  const {token} = (await admin('/installations', {merchant: merchant.id, env: 'test', scopes: ['products:read', 'products:write', 'store:read']})).json

  // 25 full products: every product field set, a default price each.
  for (let i = 0; i < 25; i++) {
    await call(url, 'POST', '/v1/app/products', token, {
      name: `Bench product ${i}`,
      description: 'A sturdy, well-made product used to measure the gateway. '.repeat(4),
      images: Array.from({length: 4}, (_, k) => `https://cdn.example.com/p${i}/${k}.jpg`),
      tax_code: 'txcd_99999999',
      unit_label: 'piece',
      statement_descriptor: 'BENCH SHOP',
      url: `https://shop.example.com/p/${i}`,
      shippable: true,
      package_dimensions: {length: 20, width: 15, height: 5, weight: 400},
      metadata: {sku_family: `fam-${i}`, warehouse: 'berlin-1'},
      tags: ['bench', 'apparel', `t${i}`],
      price: {currency: 'eur', unit_amount: 1999 + i},
    })
  }
  const listPath = '/v1/app/products?limit=25'
  const captured = await call(url, 'GET', listPath, token)
  if (captured.json.data.length !== 25) throw new Error(`expected 25 products, got ${captured.json.data.length}`)
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

  // Variant creation: 3 option groups of 50 values give 125,000 distinct combinations.
  const product = (await call(url, 'POST', '/v1/app/products', token, {name: 'Bench variants', price: {currency: 'eur', unit_amount: 2500}})).json
  const groups = []
  for (const name of ['A', 'B', 'C']) {
    const values = Array.from({length: 50}, (_, k) => `${name}${k}`)
    groups.push((await call(url, 'POST', `/v1/app/products/${product.id}/options`, token, {name, values})).json)
  }
  let n = 0
  const variantBody = (i) =>
    JSON.stringify({
      options: groups.map((g, gi) => ({group: g.id, value: g.values[Math.floor(i / 50 ** gi) % 50].id})),
      sku: `BENCH-${i}`,
      title: `Variant ${i}`,
      features: ['fast', 'light'],
    })
  const first = await call(url, 'POST', `/v1/app/products/${product.id}/variants`, token, JSON.parse(variantBody(n++)), {'idempotency-key': 'bench-0'})
  const createBody = join(work, 'variant.json')
  writeFileSync(createBody, first.text)
  const {info: bareCreate} = await startServer([join(ROOT, 'scripts', 'bare-server.js'), createBody, String(first.status), first.contentType])
  const createOpts = (target) => ({
    url: `${target}/v1/app/products/${product.id}/variants`,
    method: 'POST',
    headers: {...headers, 'content-type': 'application/json'},
    requests: [
      {
        setupRequest(req) {
          const i = n++
          return {...req, body: variantBody(i), headers: {...req.headers, 'idempotency-key': `bench-${i}`}}
        },
      },
    ],
  })
  const createGw = summary('gateway', await load(createOpts(url)))
  const createBare = summary('bare node:http', await load(createOpts(bareCreate.url)))
  printPair(`POST /v1/app/products/{id}/variants with Idempotency-Key (${fmt(n)} variants created)`, createGw, createBare)

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
  writeFileSync(join(work, 'results.json'), JSON.stringify(results, null, 2))
  console.log(`\nraw results: ${join(work, 'results.json')}`)
}

main()
  .catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
  .finally(() => {
    for (const child of children) child.kill('SIGTERM')
  })
