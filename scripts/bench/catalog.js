/**
 * `npm run bench`, catalogue part: `payapp catalog apply` against the gateway, side by side in one run.
 *
 * 1. Limits off: 1,000 products × 3 variants (an inline default price, one option group of 3 values,
 *    3 variants: 5 writes a product) applied by the CLI, against the gateway's raw write rate for the
 *    very same writes sent directly (fetch, same concurrency: CONCURRENCY products at a time and at most
 *    CONCURRENCY writes in flight, as `--concurrency` means for the CLI; same order; once before and once
 *    after the catalogue run, averaged), each into a fresh merchant.
 *    Target: catalog/raw ≥ 0.8.
 * 2. `--rate-limit writes=600`: 250 products (1,250 writes) with `--rate auto`, started at a window
 *    boundary; the writes completed in each full one-minute window as a share of the limit (the last,
 *    partial window excluded). Target ≥ 0.95 with 0 failures.
 * Env: BENCH_CATALOG_PRODUCTS (1000), BENCH_CATALOG_CONCURRENCY (8), BENCH_CATALOG_RATED=0 skips part 2,
 * BENCH_CATALOG_PROFILE=DIR writes a CPU profile of each `catalog apply` process into DIR (`node --cpu-prof`),
 * BENCH_CATALOG_RAW=http sends the raw writes with node:http instead of fetch: a stricter baseline, since
 * fetch (undici) spends ~3× node:http's CPU per request on the cores the gateway shares.
 */
import {spawn} from 'node:child_process'
import http from 'node:http'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'
import {fileURLToPath} from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const BIN = join(ROOT, 'bin', 'run.js')
const PRODUCTS = Number(process.env.BENCH_CATALOG_PRODUCTS ?? 1000)
const CONCURRENCY = Number(process.env.BENCH_CATALOG_CONCURRENCY ?? 8)
const SIZES = ['S', 'M', 'L']

export function catalogue(n, prefix) {
  const products = Array.from({length: n}, (_, i) => ({
    key: `${prefix}${i}`,
    name: `Product ${i}`,
    description: `Bench product ${i}`,
    prices: [{key: `${prefix}${i}-eur`, currency: 'eur', unit_amount: 1000 + i}],
    options: {Size: SIZES},
    variants: SIZES.map((s) => ({sku: `${prefix}${i}-${s}`, options: {Size: s}, track_inventory: true, stock_qty: 10})),
  }))
  return {products}
}

export function startGateway(work, rateLimit) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'gateway', 'start', '--port', '0', '--db', join(work, `gw-${rateLimit}.sqlite`), '--rate-limit', rateLimit, '--json', '--no-save-profile'], {
      cwd: ROOT,
      env: {...process.env, XDG_CONFIG_HOME: join(work, 'config')},
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let buf = ''
    child.stdout.on('data', (d) => {
      buf += d
      const nl = buf.indexOf('\n')
      if (nl >= 0) resolve({child, ...JSON.parse(buf.slice(0, nl))})
    })
    child.on('exit', (code) => reject(new Error(`gateway exited ${code}`)))
  })
}

const RAW_CLIENT = process.env.BENCH_CATALOG_RAW === 'http' ? 'http' : 'fetch'
const agent = new http.Agent({keepAlive: true})

async function postOne(url, path, token, body, key) {
  if (RAW_CLIENT === 'http') return postHttp(url, path, token, body, key)
  const res = await fetch(url + path, {
    method: 'POST',
    headers: {authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(key ? {'idempotency-key': key} : {})},
    body: JSON.stringify(body),
  })
  const text = await res.text()
  if (res.status >= 300) throw new Error(`POST ${path}: ${res.status} ${text}`)
  return JSON.parse(text)
}

function postHttp(url, path, token, body, key) {
  const payload = Buffer.from(JSON.stringify(body))
  const headers = {authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': String(payload.length), ...(key ? {'idempotency-key': key} : {})}
  return new Promise((resolve, reject) => {
    const req = http.request(url + path, {method: 'POST', headers, agent}, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d) => (text += d))
      res.on('end', () => (res.statusCode >= 300 ? reject(new Error(`POST ${path}: ${res.statusCode} ${text}`)) : resolve(JSON.parse(text))))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(payload)
  })
}

export async function account(gw) {
  const merchant = await postOne(gw.url, '/_admin/merchants', gw.admin_key, {})
  const inst = await postOne(gw.url, '/_admin/installations', gw.admin_key, {merchant: merchant.id, env: 'test', scopes: ['products:read', 'products:write', 'files:write', 'store:read']})
  return inst.token
}

/** The same writes the catalogue makes, sent directly: product (with its price), option group, variants. */
async function rawWrites(url, token, file) {
  let next = 0
  let writes = 0
  // At most CONCURRENCY writes in flight, as `catalog apply --concurrency` allows (the variants of 8 products would otherwise be 24).
  let free = CONCURRENCY
  const waiting = []
  const post = async (...args) => {
    if (free > 0) free--
    else await new Promise((resolve) => waiting.push(resolve))
    try {
      return await postOne(...args)
    } finally {
      const nextWaiting = waiting.shift()
      if (nextWaiting) nextWaiting()
      else free++
    }
  }
  const worker = async () => {
    while (next < file.products.length) {
      const p = file.products[next++]
      const [price] = p.prices
      const product = await post(url, '/v1/app/products', token, {name: p.name, description: p.description, metadata: {catalog_key: p.key}, price: {currency: price.currency, unit_amount: price.unit_amount, lookup_key: price.key}}, `raw-${p.key}`)
      const group = await post(url, `/v1/app/products/${product.id}/options`, token, {name: 'Size', values: SIZES}, `raw-${p.key}-g`)
      await Promise.all(
        p.variants.map((v) =>
          post(url, `/v1/app/products/${product.id}/variants`, token, {sku: v.sku, track_inventory: true, stock_qty: 10, options: [{group: group.id, value: group.values.find((x) => x.value === v.options.Size).id}]}, `raw-${v.sku}`),
        ),
      )
      writes += 2 + p.variants.length
    }
  }
  await Promise.all(Array.from({length: CONCURRENCY}, worker))
  return writes
}

/** Runs `payapp catalog apply FILE --json`; returns the summary and when each change completed. */
export function cliApply(gw, token, path, work, extra = [], env = {}) {
  return new Promise((resolve, reject) => {
    const profile = process.env.BENCH_CATALOG_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CATALOG_PROFILE] : []
    const child = spawn(process.execPath, [...profile, BIN, 'catalog', 'apply', path, '--json', '--concurrency', String(CONCURRENCY), ...extra], {
      cwd: ROOT,
      env: {...process.env, PAYAPP_TOKEN: token, PAYAPP_BASE_URL: gw.url, XDG_CONFIG_HOME: join(work, 'config'), PAYAPP_KEYCHAIN: 'off', ...env},
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const times = []
    let summary
    let buf = ''
    child.stdout.on('data', (d) => {
      buf += d
      const lines = buf.split('\n')
      buf = lines.pop()
      for (const line of lines) {
        const obj = JSON.parse(line)
        if (obj.summary) summary = obj.summary
        // One line per change; a product's inline price is a change of its own but no write of its own.
        else if (obj.status === 'done' && !(obj.kind === 'price' && obj.action === 'create')) times.push(Date.now())
      }
    })
    child.on('exit', (code) => (summary ? resolve({summary, times, code}) : reject(new Error(`catalog apply exited ${code} without a summary`))))
  })
}

const fmt = (n, d = 0) => n.toLocaleString('en-US', {maximumFractionDigits: d, minimumFractionDigits: d})

export async function benchCatalog() {
  const work = mkdtempSync(join(tmpdir(), 'payapp-bench-catalog-'))
  const results = {}

  // ---- 1. limits off: the catalogue against the raw write rate
  const off = await startGateway(work, 'off')
  try {
    // The raw rate before and after the catalogue run, averaged: the machine's load drifts.
    const rawRun = async (prefix) => {
      const started = performance.now()
      const count = await rawWrites(off.url, await account(off), catalogue(PRODUCTS, prefix))
      return {count, seconds: (performance.now() - started) / 1000}
    }
    const before = await rawRun('raw')

    const path = join(work, 'catalog.json')
    writeFileSync(path, JSON.stringify(catalogue(PRODUCTS, 'cat')))
    const token = await account(off)
    const t0 = performance.now()
    const {summary} = await cliApply(off, token, path, work)
    const seconds = (performance.now() - t0) / 1000
    const after = await rawRun('raw2')
    const rawCount = before.count + after.count
    const raw = rawCount / (before.seconds + after.seconds)
    const applied = summary.writes / seconds
    results.off = {raw_client: RAW_CLIENT, products: PRODUCTS, writes: summary.writes, failed: summary.failed, raw_writes_per_s: raw, catalog_writes_per_s: applied, ratio: applied / raw, seconds}
    console.log(`\ncatalog apply, ${fmt(PRODUCTS)} products × 3 variants, rate limits off (concurrency ${CONCURRENCY})`)
    console.log(`  ${`raw writes (${RAW_CLIENT}), before and after`.padEnd(37)} ${fmt(rawCount)} writes  ${fmt(raw).padStart(6)} writes/s`)
    console.log(`  payapp catalog apply                 ${fmt(summary.writes)} writes  ${fmt(applied).padStart(6)} writes/s  (whole CLI run: start-up, plan, apply, read-back; ${summary.failed} failed)`)
    console.log(`  ratio catalog/raw: ${(applied / raw).toFixed(2)} (target ≥ 0.80)`)
  } finally {
    off.child.kill('SIGTERM')
  }

  // ---- 2. writes=600: achieved rate as a share of the limit
  if (process.env.BENCH_CATALOG_RATED !== '0') {
    const limit = 600
    const limited = await startGateway(work, `writes=${limit}`)
    try {
      const path = join(work, 'rated.json')
      writeFileSync(path, JSON.stringify(catalogue(250, 'rate')))
      const token = await account(limited)
      // Start at a window boundary (the gateway's windows are wall-clock minutes), so every window but the last is full.
      await sleep(60_000 - (Date.now() % 60_000) + 200)
      const start = Math.floor(Date.now() / 60_000)
      const {summary, times} = await cliApply(limited, token, path, work, ['--rate', 'auto'])
      const perWindow = []
      for (const t of times) perWindow[Math.floor(t / 60_000) - start] = (perWindow[Math.floor(t / 60_000) - start] ?? 0) + 1
      const full = perWindow.slice(0, -1).map((n) => n ?? 0)
      const share = full.reduce((a, b) => a + b, 0) / (limit * full.length)
      results.rated = {limit_per_minute: limit, writes: summary.writes, failed: summary.failed, per_window: perWindow, share}
      console.log(`\ncatalog apply, 250 products (${fmt(summary.writes)} writes) against --rate-limit writes=${limit}, --rate auto`)
      console.log(`  writes per one-minute window: ${perWindow.map((n) => n ?? 0).join(', ')}; ${summary.failed} failed`)
      console.log(`  share of the limit over the full windows: ${share.toFixed(3)} (target ≥ 0.95, 0 failures)`)
    } finally {
      limited.child.kill('SIGTERM')
    }
  }
  // Its gateways' databases (tens of megabytes) do not outlive the bench.
  rmSync(work, {recursive: true, force: true})
  return results
}
