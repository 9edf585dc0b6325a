#!/usr/bin/env node
/**
 * The training run behind dist/bundle/payapp.cache: `npm run build` runs it once the bundle and oclif's
 * manifest exist. The cache buys 33 ms CPU per `--help` and 45 per `products list` on Node 20
 * (scripts/bench/startup-layers.js); Node ≥ 22.1 uses its own compile cache instead (src/startup/code-cache.cts).
 *
 * V8's code cache holds the functions compiled before it is written, so this process does what a typical
 * run does — prints the root help, lists products as JSON from a stand-in server on 127.0.0.1 — then saves
 * the cache. A function it never ran is compiled lazily as usual. Other commands' modules are left out: V8 reads
 * the whole cache on every call, and a cache that also held every command module's code (1.31 MB against 1.06)
 * made `products list`, `--help` and `orders list` 5 to 6 ms slower and no command faster (25 interleaved rounds).
 */
import {once} from 'node:events'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {createServer} from 'node:http'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')

// oclif reads and parses its manifest on every call: written without indentation, a third of it is gone (one of the
// small layers of scripts/dependency-patches.js).
const MANIFEST = join(ROOT, 'oclif.manifest.json')
if (process.env.PAYAPP_BUILD_WITHOUT?.split(',').includes('manifest-minified') !== true) writeFileSync(MANIFEST, JSON.stringify(JSON.parse(readFileSync(MANIFEST, 'utf8'))))

const {loadCli, writeCodeCache} = await import(pathToFileURL(join(ROOT, 'dist', 'cli', 'bundle-loader.cjs')).href)

// The shape the gateway answers with (a wrong one would train the error path instead).
const product = {
  id: 'prod_Training0000001', object: 'product', livemode: false, name: 'Training tee', description: 'Organic cotton tee.',
  images: [], tax_code: null, unit_label: null, statement_descriptor: null, url: null, shippable: true,
  package_dimensions: null, metadata: {}, tags: ['apparel'], active: true, store_visible: true,
  default_price: 'price_Training000000000001', created: 1_795_380_896, updated: 1_795_380_896,
}
const server = createServer((req, res) => {
  res.writeHead(200, {'content-type': 'application/json', 'x-request-id': 'req_training'})
  res.end(JSON.stringify({object: 'list', has_more: false, data: [product]}))
})
server.listen(0, '127.0.0.1')
await once(server, 'listening')

const home = mkdtempSync(join(tmpdir(), 'payapp-train-'))
Object.assign(process.env, {
  XDG_CONFIG_HOME: join(home, 'config'), XDG_DATA_HOME: join(home, 'data'), XDG_CACHE_HOME: join(home, 'cache'),
  PAYAPP_KEYCHAIN: 'off', PAYAPP_BASE_URL: `http://127.0.0.1:${server.address().port}`, PAYAPP_TOKEN: 'app_test_training0000000000000000',
})
try {
  const cli = loadCli({useCache: false})
  await cli.run(ROOT, ['--help'])
  await cli.run(ROOT, ['products', 'list', '--json'])
  if (process.exitCode) throw new Error(`a training command failed (exit ${process.exitCode})`)
  const bytes = writeCodeCache()
  process.stderr.write(`wrote the CLI's code cache (${Math.round(bytes / 1024)} KiB)\n`)
} finally {
  server.close()
  rmSync(home, {recursive: true, force: true})
}
