#!/usr/bin/env node
/**
 * Bundles the gateway for a fast start (`npm run build`, after tsc): what `payapp gateway start` and
 * `payapp/testing` load through src/gateway/load.ts.
 *
 * 1. esbuild follows src/gateway/server.ts, fastify and its plugins, zod, the SDK's schemas and
 *    better-sqlite3's JavaScript into one CommonJS file, dist/bundle/gateway.cjs (the SQLite addon, native,
 *    stays in node_modules; scripts/dependency-patches.js has the two patches: where the addon is, and fastify's
 *    router without `new Function`, which buys 10 ms CPU per start, scripts/bench/startup-layers.js). The SDK's
 *    schemas are built at load as in the sources: building them when first read, as the CLI's bundle does, bought
 *    under 1 ms per start here.
 * 2. A training run loads it, starts a gateway on 127.0.0.1 with in-memory storage, sends what a test
 *    suite's first tests send (credentials, a product with a variant, a checkout paid, lists, a 404), and
 *    saves V8's code cache of what it compiled: dist/bundle/gateway.cache.
 */
import {dirname, join, relative} from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'

import {build} from 'esbuild'

import {BUNDLE_OPTIONS, writeAscii} from './bundle-options.js'
import {patchDependencies} from './dependency-patches.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const OUT = join(ROOT, 'dist', 'bundle', 'gateway.cjs')

const result = await build({
  ...BUNDLE_OPTIONS,
  entryPoints: [join(ROOT, 'src', 'gateway', 'server.ts')],
  // Resolved at run time, from the bundle's place (the better-sqlite3-addon-path patch). pg (PostgreSQL) is
  // bundled but evaluated only for a postgres:// --db; its optional native binding pg-native is never installed.
  external: ['better-sqlite3/package.json', 'pg-native'],
  plugins: [patchDependencies('gateway')],
})
if (result.errors.length > 0) process.exit(1)
writeAscii(OUT, result.outputFiles[0].text)

// ---------------------------------------------------------------- the training run

const {loadGateway, writeGatewayCache} = await import(pathToFileURL(join(ROOT, 'dist', 'gateway', 'load.js')).href)
const {startGateway} = await loadGateway({useCache: false})
const gw = await startGateway({port: 0, host: '127.0.0.1', db: ':memory:', rateLimit: false, logger: false})
const call = async (method, path, token, body) => {
  const res = await fetch(gw.url + path, {
    method,
    headers: {authorization: `Bearer ${token}`, ...(body ? {'content-type': 'application/json'} : {})},
    body: body ? JSON.stringify(body) : undefined,
  })
  const json = await res.json()
  if (res.status >= 400 && res.status !== 404) throw new Error(`training: ${method} ${path}: ${res.status} ${JSON.stringify(json)}`)
  return json
}
try {
  const admin = (method, path, body) => call(method, `/_admin${path}`, gw.adminKey, body)
  await admin('GET', '/clock')
  const merchant = await admin('POST', '/merchants', {company: 'Training GmbH', store: {display_name: 'Training'}})
  const scopes = ['products:read', 'products:write', 'checkout:write', 'orders:read', 'store:read']
  const {secret_key: key} = await admin('POST', '/keys', {merchant: merchant.id, mode: 'test', scopes})
  const {token} = await admin('POST', '/installations', {merchant: merchant.id, env: 'test', scopes})
  const product = await call('POST', '/v1/store/products', key, {name: 'Mug', price: {currency: 'eur', unit_amount: 1200}})
  const group = await call('POST', `/v1/store/products/${product.id}/options`, key, {name: 'Size', values: ['M']})
  const variant = await call('POST', `/v1/store/products/${product.id}/variants`, key, {options: [{group: group.id, value: group.values[0].id}], track_inventory: true, stock_qty: 5})
  const checkout = await call('POST', '/v1/store/checkouts', key, {product_id: product.id, variant_id: variant.id, quantity: 1})
  await admin('POST', `/checkouts/${checkout.session_id}/complete`, {outcome: 'paid'})
  await call('GET', '/v1/store/orders?limit=10', key)
  await call('GET', `/v1/store/products/${product.id}`, key)
  await call('GET', '/v1/app/products', token)
  await call('GET', '/v1/store/nothing-here', key)
  await admin('POST', '/clock', {advance_seconds: 60})
} finally {
  await gw.close()
}
const bytes = writeGatewayCache()
console.log(`bundled the gateway into ${relative(ROOT, OUT)} and wrote its code cache (${Math.round(bytes / 1024)} KiB)`)
