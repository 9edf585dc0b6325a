/**
 * Loads the bundled CLI (dist/bundle/payapp.cjs, written by scripts/build-cli.js) with V8's code cache.
 *
 * Node 20 has no compile cache for modules (`module.enableCompileCache` is Node 22), so without help every
 * run parses and compiles oclif, zod and got again. Compiled as a `vm.Script` with the `cachedData` that
 * the build saved beside the bundle, the CLI starts without that work. A cache from another Node version
 * or with other V8 flags is rejected by V8, and the bundle then compiles as usual: slower, never wrong.
 *
 * bin/run.js and the per-command stubs in dist/bundle/commands/ (what oclif's manifest points at) both
 * come here, and get the one instance of the bundle: one oclif, one `Command` class. CommonJS, like them,
 * so a command's start-up never starts Node's ES module loader.
 */
import {readFileSync, statSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {join} from 'node:path'
import vm from 'node:vm'

import type {Command} from '@oclif/core'

export interface CliBundle {
  /** Runs the CLI for `process.argv` (or `argv`); `dir` is the package root (oclif reads its package.json). */
  run(dir: string, argv?: string[]): Promise<void>
  /** Every command's module by oclif id, each evaluated only when its command is loaded. */
  commands: Record<string, () => {default: Command.Class}>
}

export const BUNDLE_DIR = join(__dirname, '..', 'bundle')
export const BUNDLE_FILE = join(BUNDLE_DIR, 'payapp.cjs')
export const CACHE_FILE = join(BUNDLE_DIR, 'payapp.cache')

const INSTANCE = Symbol.for('payapp.cli-bundle')
type Holder = {[INSTANCE]?: {bundle: CliBundle; script: vm.Script}}

/**
 * The bundle, evaluated once per process. A `vm.Script` cannot use the host's `import()` after a code-cache
 * hit on Node 20, so the build rewrote the bundle's dynamic imports of external modules to `__payappImport`,
 * which imports from here.
 */
export function loadCli(options: {useCache?: boolean} = {}): CliBundle {
  const holder = globalThis as Holder
  const loaded = holder[INSTANCE]
  if (loaded) return loaded.bundle
  // The build writes the bundle in ASCII, so latin1 reads it as UTF-8 would, without the decoding.
  const source = readFileSync(BUNDLE_FILE, 'latin1')
  let cachedData: Buffer | undefined
  if (options.useCache !== false) {
    try {
      // V8 checks a cache against the source's length only: one older than the bundle may be another build's.
      if (statSync(CACHE_FILE).mtimeMs >= statSync(BUNDLE_FILE).mtimeMs) cachedData = readFileSync(CACHE_FILE)
    } catch {
      // No cache (not built yet, or removed): compile as usual.
    }
  }
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname, __payappImport) {${source}\n})`, {
    filename: BUNDLE_FILE,
    cachedData,
  })
  const module = {exports: {} as CliBundle}
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void
  wrapper(module.exports, createRequire(BUNDLE_FILE), module, BUNDLE_FILE, BUNDLE_DIR, (specifier: string) => import(specifier))
  holder[INSTANCE] = {bundle: module.exports, script}
  return module.exports
}

/** Writes the code cache of what this process compiled so far (the build calls it after a training run). */
export function writeCodeCache(): number {
  const loaded = (globalThis as Holder)[INSTANCE]
  if (!loaded) throw new Error('the CLI bundle is not loaded')
  const data = loaded.script.createCachedData()
  writeFileSync(CACHE_FILE, data)
  return data.length
}
