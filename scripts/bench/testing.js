#!/usr/bin/env node
/**
 * `npm run bench`, the gateway inside a test suite (payapp/testing), each beside a bare node:http server:
 *
 * 1. In-process start: `startGateway()` of payapp/testing to its first answered request, timed after the
 *    import (target ≤ 100 ms), against a bare server's listen to first answer; the import of payapp/testing
 *    reported apart and with the start (what a test file pays in all), and the import of the SDK modules
 *    payapp/testing hands out (GatewayAdmin, AppClient, StoreClient) alone, the part that is the SDK's.
 * 2. Process start: `payapp gateway start --db :memory: --json` to its JSON line (target ≤ 250 ms), against
 *    scripts/bare-server.js to its JSON line.
 * 3. A test-suite-shaped workload: 10 concurrent clients each looping create product with price → create
 *    an option group → create variant → store checkout → complete it (admin) → list orders; requests per
 *    second and p99 of the gateway against a bare node:http server replaying the responses recorded from
 *    the gateway for the same six requests.
 *
 * Runs alone (`node scripts/bench/testing.js`) or from scripts/bench.js. Env: BENCH_SECONDS (8), BENCH_RUNS (15).
 */
import {spawn} from 'node:child_process'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const BIN = join(ROOT, 'bin', 'run.js')
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8)
const RUNS = Number(process.env.BENCH_RUNS ?? 15)
const CLIENTS = 10

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]
const fmt = (n, d = 0) => n.toLocaleString('en-US', {maximumFractionDigits: d, minimumFractionDigits: d})

/** Runs `node --input-type=module -e code` and parses its one JSON line. */
function childJson(code) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], {cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit']})
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.on('exit', (status) => (status === 0 ? resolve(JSON.parse(out)) : reject(new Error(`child exited ${status}: ${out}`))))
  })
}

const IN_PROCESS_GATEWAY = `
const t0 = performance.now()
const {startGateway} = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist/testing/index.js')).href)})
const t1 = performance.now()
const gw = await startGateway()
const res = await fetch(gw.url + '/_admin/clock', {headers: {authorization: 'Bearer ' + gw.adminKey}})
await res.text()
const t2 = performance.now()
await gw.close()
process.stdout.write(JSON.stringify({import_ms: t1 - t0, start_ms: t2 - t1, status: res.status}))
process.exit(0)`

const IN_PROCESS_BARE = `
const t0 = performance.now()
const {createServer} = await import('node:http')
const t1 = performance.now()
const server = createServer((req, res) => res.end('{}'))
await new Promise((r) => server.listen(0, '127.0.0.1', r))
const res = await fetch('http://127.0.0.1:' + server.address().port + '/')
await res.text()
const t2 = performance.now()
server.close()
process.stdout.write(JSON.stringify({import_ms: t1 - t0, start_ms: t2 - t1, status: res.status}))
process.exit(0)`

// What payapp/testing imports of @payapp/sdk, alone: the clients it hands out, which a suite's own code loads too.
const IN_PROCESS_SDK = `
const t0 = performance.now()
await Promise.all([import('@payapp/sdk/admin'), import('@payapp/sdk/client')])
process.stdout.write(JSON.stringify({import_ms: performance.now() - t0}))
process.exit(0)`

/** Spawns a server that prints one JSON line once it listens; resolves with the line and the time to it. */
function startServer(args, env = {}) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    // stderr is kept for a failure only: a gateway says goodbye on SIGTERM, once per timed start.
    const child = spawn(process.execPath, args, {cwd: ROOT, env: {...process.env, ...env}, stdio: ['ignore', 'pipe', 'pipe']})
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    let buf = ''
    child.stdout.on('data', (d) => {
      buf += d
      const nl = buf.indexOf('\n')
      if (nl >= 0 && !child.ready) {
        child.ready = true
        resolve({child, ms: performance.now() - t0, info: JSON.parse(buf.slice(0, nl))})
      }
    })
    child.on('exit', (code) => child.ready || reject(new Error(`${args.join(' ')} exited ${code}\n${stderr}`)))
  })
}

const stop = (child) => new Promise((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', resolve), child.kill('SIGTERM'))))

function gatewayArgs(work) {
  return {
    args: [BIN, 'gateway', 'start', '--port', '0', '--db', ':memory:', '--rate-limit', 'off', '--json', '--no-save-profile'],
    env: {XDG_CONFIG_HOME: join(work, 'config'), PAYAPP_KEYCHAIN: 'off'},
  }
}

// ---------------------------------------------------------------- the workload

/** One loop of a typical suite's test, against `base`; `record` keeps each response for the replay. */
async function loop(base, creds, i, latencies, record) {
  const send = async (name, method, path, token, body) => {
    const t0 = performance.now()
    const res = await fetch(base + path, {
      method,
      headers: {authorization: `Bearer ${token}`, ...(body ? {'content-type': 'application/json'} : {})},
      body: body ? JSON.stringify(body) : undefined,
    })
    const text = await res.text()
    latencies.push(performance.now() - t0)
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`)
    record?.push({name, method, status: res.status, contentType: res.headers.get('content-type'), body: text})
    return JSON.parse(text)
  }
  const product = await send('product', 'POST', '/v1/store/products', creds.key, {name: `Suite product ${i}`, price: {currency: 'eur', unit_amount: 1500}})
  const group = await send('option', 'POST', `/v1/store/products/${product.id}/options`, creds.key, {name: 'Size', values: ['M']})
  const variant = await send('variant', 'POST', `/v1/store/products/${product.id}/variants`, creds.key, {
    options: [{group: group.id, value: group.values[0].id}],
    track_inventory: true,
    stock_qty: 5,
  })
  const checkout = await send('checkout', 'POST', '/v1/store/checkouts', creds.key, {product_id: product.id, variant_id: variant.id, quantity: 1})
  await send('complete', 'POST', `/_admin/checkouts/${checkout.session_id}/complete`, creds.admin, {outcome: 'paid'})
  await send('orders', 'GET', '/v1/store/orders?limit=10', creds.key)
}

/** CLIENTS concurrent loops for SECONDS; requests per second and latency percentiles. */
async function workload(base, creds) {
  const latencies = []
  let loops = 0
  const deadline = performance.now() + SECONDS * 1000
  const t0 = performance.now()
  await Promise.all(
    Array.from({length: CLIENTS}, async (_, c) => {
      for (let i = 0; performance.now() < deadline; i++) {
        await loop(base, creds, `${c}-${i}`, latencies)
        loops++
      }
    }),
  )
  const seconds = (performance.now() - t0) / 1000
  return {rps: latencies.length / seconds, loops_per_s: loops / seconds, p50: pct(latencies, 50), p99: pct(latencies, 99), requests: latencies.length}
}

/** A bare node:http server answering each of the six requests with its recorded response. */
const REPLAY_SERVER = (file) => `
import {readFileSync} from 'node:fs'
import {createServer} from 'node:http'
const recorded = JSON.parse(readFileSync(${JSON.stringify(file)}, 'utf8'))
const routes = [
  ['POST', /^\\/v1\\/store\\/products$/, 'product'],
  ['POST', /^\\/v1\\/store\\/products\\/[^/]+\\/options$/, 'option'],
  ['POST', /^\\/v1\\/store\\/products\\/[^/]+\\/variants$/, 'variant'],
  ['POST', /^\\/v1\\/store\\/checkouts$/, 'checkout'],
  ['POST', /^\\/_admin\\/checkouts\\/[^/]+\\/complete$/, 'complete'],
  ['GET', /^\\/v1\\/store\\/orders$/, 'orders'],
].map(([method, pattern, name]) => ({method, pattern, r: recorded.find((x) => x.name === name), body: Buffer.from(recorded.find((x) => x.name === name).body)}))
let n = 0
const server = createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    const path = req.url.split('?')[0]
    const route = routes.find((x) => x.method === req.method && x.pattern.test(path))
    if (!route) return res.writeHead(404).end()
    res.writeHead(route.r.status, {'content-type': route.r.contentType, 'content-length': route.body.length, 'x-request-id': 'req_bare' + ++n})
    res.end(route.body)
  })
})
server.keepAliveTimeout = 72_000
server.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({url: 'http://127.0.0.1:' + server.address().port}) + '\\n'))
process.on('SIGTERM', () => server.close(() => process.exit(0)))`

// ---------------------------------------------------------------- main

export async function run() {
  const work = mkdtempSync(join(tmpdir(), 'payapp-bench-testing-'))
  console.log(`\nThe gateway in a test suite (payapp/testing), median of ${RUNS} fresh processes`)

  const inProc = {gw: [], bare: [], sdk: []}
  for (let i = 0; i < RUNS; i++) {
    inProc.gw.push(await childJson(IN_PROCESS_GATEWAY))
    inProc.bare.push(await childJson(IN_PROCESS_BARE))
    inProc.sdk.push(await childJson(IN_PROCESS_SDK))
  }
  const gwStart = median(inProc.gw.map((r) => r.start_ms))
  const gwImport = median(inProc.gw.map((r) => r.import_ms))
  const gwTotal = median(inProc.gw.map((r) => r.import_ms + r.start_ms))
  const sdkImport = median(inProc.sdk.map((r) => r.import_ms))
  const bareStart = median(inProc.bare.map((r) => r.start_ms))
  const bareTotal = median(inProc.bare.map((r) => r.import_ms + r.start_ms))
  console.log(`  in-process: startGateway() to first answer   ${fmt(gwStart, 1).padStart(7)} ms (target ≤ 100 ms)`)
  console.log(`  in-process: bare node:http listen to answer  ${fmt(bareStart, 1).padStart(7)} ms   ratio ${(gwStart / bareStart).toFixed(1)}×`)
  console.log(`  in-process: import('payapp/testing')         ${fmt(gwImport, 1).padStart(7)} ms (of which the SDK's clients alone: ${fmt(sdkImport, 0)} ms)`)
  console.log(`  in-process: import + start to first answer   ${fmt(gwTotal, 1).padStart(7)} ms   bare import + listen ${fmt(bareTotal, 1)} ms`)

  const proc = {gw: [], bare: []}
  const {args, env} = gatewayArgs(work)
  const body = join(work, 'bare.json')
  writeFileSync(body, '{}')
  for (let i = 0; i < RUNS; i++) {
    const g = await startServer(args, env)
    proc.gw.push(g.ms)
    await stop(g.child)
    const b = await startServer([join(ROOT, 'scripts', 'bare-server.js'), body, '200', 'application/json'])
    proc.bare.push(b.ms)
    await stop(b.child)
  }
  const gwProc = median(proc.gw)
  const bareProc = median(proc.bare)
  console.log(`  process: gateway start --db :memory: to JSON ${fmt(gwProc, 0).padStart(7)} ms (target ≤ 250 ms)`)
  console.log(`  process: bare node:http server to JSON line  ${fmt(bareProc, 0).padStart(7)} ms   ratio ${(gwProc / bareProc).toFixed(1)}×`)

  // The workload against a gateway process (as a suite's separate server would be), then the replay.
  const gateway = await startServer(args, env)
  const base = gateway.info.url
  const adminKey = gateway.info.admin_key
  const admin = async (path, payload) => {
    const res = await fetch(`${base}/_admin${path}`, {method: 'POST', headers: {authorization: `Bearer ${adminKey}`, 'content-type': 'application/json'}, body: JSON.stringify(payload)})
    return res.json()
  }
  const merchant = await admin('/merchants', {company: 'Suite GmbH'})
  const key = await admin('/keys', {merchant: merchant.id, mode: 'test', scopes: ['products:write', 'products:read', 'checkout:write', 'orders:read', 'store:read']})
  const creds = {key: key.secret_key, admin: adminKey}
  const recorded = []
  await loop(base, creds, 'record', [], recorded)
  const replayFile = join(work, 'recorded.json')
  writeFileSync(replayFile, JSON.stringify(recorded))
  writeFileSync(join(work, 'replay.mjs'), REPLAY_SERVER(replayFile))
  const replay = await startServer([join(work, 'replay.mjs')])

  const gwLoad = await workload(base, creds)
  const bareLoad = await workload(replay.info.url, creds)
  await stop(gateway.child)
  await stop(replay.child)
  console.log(`\n  suite workload: ${CLIENTS} clients looping product+price → option → variant → store checkout → complete (admin) → list orders`)
  console.log(`  ${'server'.padEnd(18)} ${'req/s'.padStart(8)} ${'loops/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)}`)
  for (const [name, r] of [['gateway', gwLoad], ['bare replay', bareLoad]]) {
    console.log(`  ${name.padEnd(18)} ${fmt(r.rps).padStart(8)} ${fmt(r.loops_per_s, 1).padStart(8)} ${fmt(r.p50, 1).padStart(8)} ${fmt(r.p99, 1).padStart(8)}`)
  }
  console.log(`  ratio gateway/bare: ${(gwLoad.rps / bareLoad.rps).toFixed(2)}`)

  return {
    in_process: {gateway_start_ms: gwStart, import_ms: gwImport, import_and_start_ms: gwTotal, sdk_import_ms: sdkImport, bare_start_ms: bareStart, bare_import_and_start_ms: bareTotal},
    process: {gateway_start_ms: gwProc, bare_start_ms: bareProc},
    suite_workload: {gateway: gwLoad, bare: bareLoad, ratio: gwLoad.rps / bareLoad.rps},
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  run().then(
    (results) => console.log(JSON.stringify(results)),
    (error) => {
      console.error(error)
      process.exitCode = 1
    },
  )
}
