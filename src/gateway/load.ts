/**
 * The gateway's code, loaded the fast way where a build made one: what `payapp gateway start` and
 * `payapp/testing` call instead of importing server.ts.
 *
 * Where a gateway's start-up went on Node 20: resolving and compiling fastify, its plugins, zod and the
 * gateway (some 300 files) on every start, before anything ran. `npm run build` bundles server.ts with them
 * into dist/bundle/gateway.cjs and saves V8's code cache of a training run beside it
 * (scripts/build-gateway.js); here that bundle is compiled as a `vm.Script` with the cache, as the CLI's
 * bundle is (src/startup/code-cache.cts). Only better-sqlite3 (native) loads from node_modules.
 *
 * Run from the sources (tsx, mocha) there is no bundle beside this file, and server.ts is imported as
 * usual; a cache that V8 rejects (another Node version) only means compiling as usual.
 */
import {fileURLToPath} from 'node:url'

import {runBundle, writeBundleCache} from '../startup/code-cache.cjs'

export type GatewayModule = typeof import('./server.js')

/** dist/gateway/load.js and the CLI bundle (dist/bundle/payapp.cjs) both find the bundle at dist/bundle/. */
const GATEWAY_BUNDLE = fileURLToPath(new URL('../bundle/gateway.cjs', import.meta.url))

/** The gateway's server module: the bundle when there is one (evaluated once per process), else server.ts. */
export async function loadGateway(options: {useCache?: boolean} = {}): Promise<GatewayModule> {
  return runBundle<GatewayModule>(GATEWAY_BUNDLE, options) ?? import('./server.js')
}

/** Writes the code cache of what this process compiled of the bundle so far (the build's training run). */
export function writeGatewayCache(): number {
  return writeBundleCache(GATEWAY_BUNDLE)
}
