/**
 * The test clock, side by side in one run: a year of monthly renewals for N subscriptions in one
 * `POST /_admin/clock` jump, first with no webhook endpoint (jobs alone), then with a `*` endpoint on a
 * local receiver (every renewal's events delivered, each attempt awaited and logged before the call
 * returns). Beside the second: the same number of bare `fetch` POSTs to the same receiver, one at a
 * time — the transport's limit for in-order delivery — so the ratio says what the walk costs on top.
 *
 * From scripts/bench.js: `await benchClock()`. Alone: `npm run build && node scripts/bench/clock.js`.
 * Env: BENCH_SUBSCRIPTIONS (default 100); BENCH_GATEWAY, another build's `dist/gateway/server.js`, to compare
 * two builds side by side on a shared machine (run them alternately).
 */
import {createServer} from 'node:http'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const YEAR = 365 * 86_400

async function receiver() {
  let got = 0
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      got += 1
      res.writeHead(200).end()
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {url: `http://127.0.0.1:${server.address().port}/hooks`, count: () => got, close: () => new Promise((r) => server.close(r))}
}

export async function benchClock({subscriptions = Number(process.env.BENCH_SUBSCRIPTIONS ?? 100)} = {}) {
  const {startGateway} = await import(process.env.BENCH_GATEWAY ?? join(ROOT, 'dist', 'gateway', 'server.js'))
  const gw = await startGateway({port: 0, db: ':memory:', rateLimit: false})
  const rx = await receiver()
  const admin = async (method, path, body) => {
    const res = await fetch(`${gw.url}/_admin${path}`, {method, headers: {authorization: `Bearer ${gw.adminKey}`, 'content-type': 'application/json'}, body: body && JSON.stringify(body)})
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`)
    return res.json()
  }
  try {
    const merchant = await admin('POST', '/merchants', {})
    const key = await admin('POST', '/keys', {merchant: merchant.id, mode: 'test', scopes: ['products:write', 'subscriptions:write']})
    const api = async (path, body) => {
      const res = await fetch(gw.url + path, {method: 'POST', headers: {authorization: `Bearer ${key.secret_key}`, 'content-type': 'application/json'}, body: JSON.stringify(body)})
      if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`)
      return res.json()
    }
    const product = await api('/v1/store/products', {name: 'Plan', price: {currency: 'eur', unit_amount: 900, recurring: {interval: 'month'}}})
    for (let i = 0; i < subscriptions; i++) {
      const sub = await api('/v1/subscriptions', {price_id: product.default_price, customer_name: 'Ada Lovelace', customer_email: 'ada@example.com'})
      await admin('POST', `/subscriptions/${sub.id}/confirm`, {outcome: 'paid'})
    }

    let t0 = performance.now()
    const quiet = await admin('POST', '/clock', {advance_seconds: YEAR})
    const quietMs = performance.now() - t0

    await admin('POST', '/webhook_endpoints', {merchant: merchant.id, env: 'test', url: rx.url, events: ['*']})
    t0 = performance.now()
    const loud = await admin('POST', '/clock', {advance_seconds: YEAR})
    const loudMs = performance.now() - t0
    const deliveries = rx.count()

    const body = JSON.stringify({id: 'evt_bench', object: 'event', type: 'invoice.paid', data: {object: {}}})
    t0 = performance.now()
    for (let i = 0; i < deliveries; i++) {
      const res = await fetch(rx.url, {method: 'POST', headers: {'content-type': 'application/json'}, body})
      await res.body?.cancel()
    }
    const bareMs = performance.now() - t0

    const results = {
      subscriptions,
      year_without_webhooks: {jobs: quiet.jobs_run, ms: Math.round(quietMs), jobs_per_s: Math.round((quiet.jobs_run / quietMs) * 1000)},
      year_with_webhooks: {jobs: loud.jobs_run, deliveries, ms: Math.round(loudMs), deliveries_per_s: Math.round((deliveries / loudMs) * 1000)},
      bare_posts: {requests: deliveries, ms: Math.round(bareMs), per_s: Math.round((deliveries / bareMs) * 1000)},
      ratio_walk_to_bare: Number((bareMs / loudMs).toFixed(2)),
    }
    console.log(`\nTest clock: a year of monthly renewals for ${subscriptions} subscriptions in one jump`)
    console.log(`  without webhooks  ${results.year_without_webhooks.jobs} jobs in ${results.year_without_webhooks.ms} ms (${results.year_without_webhooks.jobs_per_s} jobs/s)`)
    console.log(`  with a * endpoint ${results.year_with_webhooks.jobs} jobs, ${deliveries} deliveries in ${results.year_with_webhooks.ms} ms (${results.year_with_webhooks.deliveries_per_s} deliveries/s)`)
    console.log(`  bare fetch POSTs  ${deliveries} in ${results.bare_posts.ms} ms (${results.bare_posts.per_s}/s); ratio walk/bare throughput ${results.ratio_walk_to_bare}`)
    return results
  } finally {
    await rx.close()
    await gw.close()
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  benchClock().catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
}
