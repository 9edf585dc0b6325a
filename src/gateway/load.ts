/**
 * The gateway's code, loaded the fast way where a build made one: what `payapp gateway start` and
 * `payapp/testing` call instead of importing server.ts.
 *
 * Where a gateway's start-up went on Node 20: resolving and compiling fastify, its plugins, zod and the
 * gateway (some 300 files) on every start, before anything ran. `npm run build` bundles server.ts with them
 * into dist/bundle/gateway.cjs and saves V8's code cache of a training run beside it
 * (scripts/build-gateway.js); here that bundle is compiled as a `vm.Script` with the cache, as the CLI's
 * bundle is (src/cli/bundle-loader.cts). Only better-sqlite3 (native) loads from node_modules.
 *
 * Run from the sources (tsx, mocha) there is no bundle beside this file, and server.ts is imported as
 * usual; a cache that V8 rejects (another Node version) only means compiling as usual.
 */
import {readFileSync, statSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {dirname} from 'node:path'
import {fileURLToPath} from 'node:url'
import vm from 'node:vm'

export type GatewayModule = typeof import('./server.js')

/** dist/gateway/load.js and the CLI bundle (dist/bundle/payapp.cjs) both find the bundle at dist/bundle/. */
export const GATEWAY_BUNDLE = fileURLToPath(new URL('../bundle/gateway.cjs', import.meta.url))
export const GATEWAY_CACHE = GATEWAY_BUNDLE.replace(/\.cjs$/, '.cache')

const INSTANCE = Symbol.for('payapp.gateway-bundle')
type Holder = {[INSTANCE]?: {module: GatewayModule; script: vm.Script}}

/** The gateway's server module: the bundle when there is one (evaluated once per process), else server.ts. */
export async function loadGateway(options: {useCache?: boolean} = {}): Promise<GatewayModule> {
  return bundledGateway(options) ?? import('./server.js')
}

function bundledGateway({useCache = true}: {useCache?: boolean}): GatewayModule | undefined {
  const holder = globalThis as Holder
  if (holder[INSTANCE]) return holder[INSTANCE].module
  let source: string
  try {
    // The build writes it in ASCII: latin1 reads the same text without decoding UTF-8.
    source = readFileSync(GATEWAY_BUNDLE, 'latin1')
  } catch {
    return undefined
  }
  let cachedData: Buffer | undefined
  try {
    // V8 checks a cache against the source's length only: one older than the bundle may be another build's.
    if (useCache && statSync(GATEWAY_CACHE).mtimeMs >= statSync(GATEWAY_BUNDLE).mtimeMs) cachedData = readFileSync(GATEWAY_CACHE)
  } catch {
    // No cache: compile as usual.
  }
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {filename: GATEWAY_BUNDLE, cachedData})
  const module = {exports: {} as GatewayModule}
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void
  wrapper(module.exports, createRequire(GATEWAY_BUNDLE), module, GATEWAY_BUNDLE, dirname(GATEWAY_BUNDLE))
  holder[INSTANCE] = {module: module.exports, script}
  return module.exports
}

/** Writes the code cache of what this process compiled of the bundle so far (the build's training run). */
export function writeGatewayCache(): number {
  const loaded = (globalThis as Holder)[INSTANCE]
  if (!loaded) throw new Error('the gateway bundle is not loaded')
  const data = loaded.script.createCachedData()
  writeFileSync(GATEWAY_CACHE, data)
  return data.length
}
