/**
 * Runs one of the build's CommonJS bundles with a code cache: the CLI's (dist/bundle/payapp.cjs, through
 * src/cli/bundle-loader.cts) and the gateway's (dist/bundle/gateway.cjs, through src/gateway/load.ts).
 *
 * Without one, every start parses and compiles oclif, fastify, zod and the rest again. Node ≥ 22.1 has a compile
 * cache for modules (`module.enableCompileCache()`, kept in NODE_COMPILE_CACHE or the OS temp folder): there the bundle
 * is required as a plain CommonJS module with it on. Node 20 lacks it, so there the bundle is compiled as a
 * `vm.Script` with the `cachedData` the build saved beside it after a training run. A cache from another Node
 * version or with other V8 flags is rejected by V8, and the bundle then compiles as usual: slower, never wrong.
 *
 * Each bundle is evaluated once per process, wherever this module is loaded from (dist/, or inlined into the CLI's
 * bundle, which loads the gateway's): instances are kept on `globalThis`. CommonJS, like bin/, so a CLI call never
 * starts Node's ES module loader.
 */
import {readFileSync, statSync, writeFileSync} from 'node:fs'
import nodeModule, {createRequire} from 'node:module'
import {dirname} from 'node:path'
import vm from 'node:vm'

const INSTANCES = Symbol.for('payapp.code-cached-bundles')
/** Which cache a loaded bundle was compiled with: Node's own, the build's (accepted or rejected by V8), or none. */
export type CacheUse = 'node' | 'accepted' | 'rejected' | 'none'
type Holder = {[INSTANCES]?: Map<string, {exports: unknown; script?: vm.Script; cache: CacheUse}>}
const instances = () => ((globalThis as Holder)[INSTANCES] ??= new Map())

/** The cache file beside a bundle: `x.cjs` → `x.cache`. */
export const cacheFileOf = (bundle: string): string => bundle.replace(/\.cjs$/, '.cache')

export interface RunBundleOptions {
  /** false: compile without the cache (the build's training run, which then writes a new one). */
  useCache?: boolean
  /** Names and values the bundle sees beside `exports, require, module, __filename, __dirname`. */
  params?: Record<string, unknown>
}

/** Node's own compile cache (Node ≥ 22.1), typed here because @types/node is Node 20's. */
const compileCache = nodeModule as {
  enableCompileCache?: () => {status: number}
  constants?: {compileCacheStatus?: {ENABLED: number; ALREADY_ENABLED: number}}
}

/** Turns Node's compile cache on where Node has it; false where it lacks it, failed or is off (NODE_DISABLE_COMPILE_CACHE). */
function nodeCompileCache(): boolean {
  const statuses = compileCache.constants?.compileCacheStatus
  if (!compileCache.enableCompileCache || !statuses) return false
  const {status} = compileCache.enableCompileCache()
  return status === statuses.ENABLED || status === statuses.ALREADY_ENABLED
}

/**
 * `module.exports` of the bundle at `file`, evaluated on the first call; undefined when there is no such file.
 * With Node's compile cache the bundle runs as a plain module, without `params`: it must default them itself
 * (with NODE_DISABLE_COMPILE_CACHE=1, Node ≥ 22 takes the Node 20 way).
 */
export function runBundle<T>(file: string, {useCache = true, params = {}}: RunBundleOptions = {}): T | undefined {
  const loaded = instances().get(file)
  if (loaded) return loaded.exports as T
  if (useCache && nodeCompileCache()) {
    let exports: T
    try {
      exports = createRequire(file)(file) as T
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' && (error as Error).message.includes(file)) return undefined
      throw error
    }
    instances().set(file, {exports, cache: 'node'})
    return exports
  }
  let source: string
  try {
    // The build writes bundles in ASCII, so latin1 reads them as UTF-8 would, without the decoding (about 3 ms
    // less per call for a 1.8 MB bundle: 0.5 ms against 3.2 to 3.8, median of 60 reads in one process).
    source = readFileSync(file, 'latin1')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  const cacheFile = cacheFileOf(file)
  let cachedData: Buffer | undefined
  try {
    // V8 checks a cache against the source's length only: one older than the bundle may be another build's.
    if (useCache && statSync(cacheFile).mtimeMs >= statSync(file).mtimeMs) cachedData = readFileSync(cacheFile)
  } catch {
    // No cache (not built yet, or removed): compile as usual.
  }
  const names = ['exports', 'require', 'module', '__filename', '__dirname', ...Object.keys(params)]
  const script = new vm.Script(`(function (${names.join(', ')}) {${source}\n})`, {filename: file, cachedData})
  const module = {exports: {} as T}
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void
  wrapper(module.exports, createRequire(file), module, file, dirname(file), ...Object.values(params))
  instances().set(file, {exports: module.exports, script, cache: !cachedData ? 'none' : script.cachedDataRejected ? 'rejected' : 'accepted'})
  return module.exports
}

/** How the bundle at `file` was compiled in this process (undefined before it is loaded): for tests and diagnosis. */
export const cacheUse = (file: string): CacheUse | undefined => instances().get(file)?.cache

/** Writes the code cache of what this process compiled of the bundle at `file` so far (after a training run). */
export function writeBundleCache(file: string): number {
  const loaded = instances().get(file)
  if (!loaded?.script) throw new Error(`${file} is not loaded with useCache: false`)
  const data = loaded.script.createCachedData()
  writeFileSync(cacheFileOf(file), data)
  return data.length
}
