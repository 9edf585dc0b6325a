/**
 * The gateway workloads `npm run bench` measures, set up once per server so every bench that compares
 * servers (scripts/bench.js, scripts/bench/shared.js) drives the very same requests:
 * reads, GET /v1/app/products?limit=25 of 25 full products; writes, idempotent variant creation (a fresh
 * Idempotency-Key and option combination per request).
 */
import {spawn} from 'node:child_process'
import {readFileSync} from 'node:fs'

import {serverPids} from '../postgres-server.js'

/**
 * Starts a child (`node ...args`) that prints one JSON line (with `url`) once it listens, and adds it to
 * `children` (killed by the bench at its end); resolves with the child and that line.
 */
export function startJsonServer(children, args, {cwd, env = {}} = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {cwd, env: {...process.env, ...env}, stdio: ['ignore', 'pipe', 'inherit']})
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

/** One API call that must succeed: status, text, parsed JSON and content type. */
export async function call(url, method, path, token, body, headers = {}) {
  const res = await fetch(url + path, {
    method,
    headers: {authorization: `Bearer ${token}`, ...(body ? {'content-type': 'application/json'} : {}), ...headers},
    body: body ? JSON.stringify(body) : undefined,
  })
  const text = await res.text()
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`)
  return {status: res.status, text, json: JSON.parse(text), contentType: res.headers.get('content-type')}
}

/** A process's CPU time (user + system) in ms, from /proc (Linux), else NaN. */
export function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
  } catch {
    return Number.NaN
  }
}

/**
 * A PostgreSQL server's CPU time in ms (Linux): its postmaster's own and its ended children's (cutime, cstime:
 * backends that exited), plus its live children's. `data` is the server's data directory.
 */
export function postgresCpuMs(data) {
  const [postmaster, ...children] = serverPids(data)
  const fields = readFileSync(`/proc/${postmaster}/stat`, 'utf8').split(') ')[1].split(' ')
  // The postmaster's own time and its ended children's (fields 14–17), then each running child's (NaN once gone).
  let total = ((Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 1000) / 100
  for (const pid of children) total += cpuMs(pid) || 0
  return total
}

export const LIST_PATH = '/v1/app/products?limit=25'

/** A merchant with 25 full products (every product field set, a default price each); the list as captured. */
export async function seedReads(url, adminKey) {
  const admin = (path, body) => call(url, 'POST', `/_admin${path}`, adminKey, body)
  const merchant = (await admin('/merchants', {company: 'Bench GmbH'})).json
  const {token} = (await admin('/installations', {merchant: merchant.id, env: 'test', scopes: ['products:read', 'products:write', 'store:read']})).json
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
  const captured = await call(url, 'GET', LIST_PATH, token)
  if (captured.json.data.length !== 25) throw new Error(`expected 25 products, got ${captured.json.data.length}`)
  return {token, captured}
}

/**
 * A product with 3 option groups of 50 values (125,000 distinct combinations) and its first variant created;
 * `tag` names its SKUs and Idempotency-Keys (one per product seeded with one token);
 * `options(target)` gives autocannon's options for keyed creates against `target` (the gateway, or a bare
 * server answering `first`'s bytes), `created()` how many bodies were handed out.
 */
export async function seedWrites(url, token, tag = 'bench') {
  const product = (await call(url, 'POST', '/v1/app/products', token, {name: 'Bench variants', price: {currency: 'eur', unit_amount: 2500}})).json
  const groups = []
  for (const name of ['A', 'B', 'C']) {
    const values = Array.from({length: 50}, (_, k) => `${name}${k}`)
    groups.push((await call(url, 'POST', `/v1/app/products/${product.id}/options`, token, {name, values})).json)
  }
  let n = 0
  // The bare server's requests do not use up the gateway's combinations (125,000 distinct ones, one per request).
  let bareN = 0
  const body = (i) =>
    JSON.stringify({
      options: groups.map((g, gi) => ({group: g.id, value: g.values[Math.floor(i / 50 ** gi) % 50].id})),
      sku: `${tag.toUpperCase()}-${i}`,
      title: `Variant ${i}`,
      features: ['fast', 'light'],
    })
  const first = await call(url, 'POST', `/v1/app/products/${product.id}/variants`, token, JSON.parse(body(n++)), {'idempotency-key': `${tag}-0`})
  const options = (target) => ({
    url: `${target}/v1/app/products/${product.id}/variants`,
    method: 'POST',
    headers: {authorization: `Bearer ${token}`, 'content-type': 'application/json'},
    requests: [
      {
        setupRequest(req) {
          const i = target === url ? n++ : bareN++
          return {...req, body: body(i % 125_000), headers: {...req.headers, 'idempotency-key': `${tag}-${i}`}}
        },
      },
    ],
  })
  return {first, options, created: () => n}
}

/**
 * The statements run on database `name` of the server at `url` (pg_stat_statements, which the server must load:
 * `shared_preload_libraries=pg_stat_statements`), by total time, at most `limit`: calls, exec and plan time in ms,
 * rows, and the text's first 150 characters with its whitespace folded.
 */
export async function topStatements(url, name, limit = 15) {
  const {default: pg} = await import('pg')
  const client = new pg.Client(url)
  await client.connect()
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
    const {rows} = await client.query(
      `SELECT calls, plans, total_exec_time, total_plan_time, rows, left(regexp_replace(query, '\\s+', ' ', 'g'), 150) AS query FROM pg_stat_statements
       WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1) ORDER BY total_exec_time + total_plan_time DESC LIMIT ${Number(limit)}`,
      [name],
    )
    return rows
  } finally {
    await client.end()
  }
}

/** Empties pg_stat_statements on the server at `url` (every database's), so what follows is counted alone. */
export async function resetStatements(url) {
  const {default: pg} = await import('pg')
  const client = new pg.Client(url)
  await client.connect()
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
    await client.query('SELECT pg_stat_statements_reset()')
  } finally {
    await client.end()
  }
}
