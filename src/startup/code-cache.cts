/**
 * Runs one of the build's CommonJS bundles with V8's code cache: the CLI's (dist/bundle/payapp.cjs, through
 * src/cli/bundle-loader.cts) and the gateway's (dist/bundle/gateway.cjs, through src/gateway/load.ts).
 *
 * Node 20 has no compile cache for modules (`module.enableCompileCache` is Node 22), so without help every start
 * parses and compiles oclif, fastify, zod and the rest again. Compiled as a `vm.Script` with the `cachedData` the
 * build saved beside the bundle after a training run, a process starts without that work. A cache from another
 * Node version or with other V8 flags is rejected by V8, and the bundle then compiles as usual: slower, never wrong.
 *
 * Each bundle is evaluated once per process, wherever this module is loaded from (dist/, or inlined into the CLI's
 * bundle, which loads the gateway's): instances are kept on `globalThis`. CommonJS, like bin/, so a CLI call never
 * starts Node's ES module loader.
 */
import {readFileSync, statSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {dirname} from 'node:path'
import vm from 'node:vm'

const INSTANCES = Symbol.for('payapp.code-cached-bundles')
type Holder = {[INSTANCES]?: Map<string, {exports: unknown; script: vm.Script}>}
const instances = () => ((globalThis as Holder)[INSTANCES] ??= new Map())

/** The cache file beside a bundle: `x.cjs` → `x.cache`. */
export const cacheFileOf = (bundle: string): string => bundle.replace(/\.cjs$/, '.cache')

export interface RunBundleOptions {
  /** false: compile without the cache (the build's training run, which then writes a new one). */
  useCache?: boolean
  /** Names and values the bundle sees beside `exports, require, module, __filename, __dirname`. */
  params?: Record<string, unknown>
}

/** `module.exports` of the bundle at `file`, evaluated on the first call; undefined when there is no such file. */
export function runBundle<T>(file: string, {useCache = true, params = {}}: RunBundleOptions = {}): T | undefined {
  const loaded = instances().get(file)
  if (loaded) return loaded.exports as T
  let source: string
  try {
    // The build writes bundles in ASCII, so latin1 reads them as UTF-8 would, without the decoding.
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
  instances().set(file, {exports: module.exports, script})
  return module.exports
}

/** Writes the code cache of what this process compiled of the bundle at `file` so far (after a training run). */
export function writeBundleCache(file: string): number {
  const loaded = instances().get(file)
  if (!loaded) throw new Error(`${file} is not loaded`)
  const data = loaded.script.createCachedData()
  writeFileSync(cacheFileOf(file), data)
  return data.length
}
