/**
 * Loads the bundled CLI (dist/bundle/payapp.cjs, written by scripts/build-cli.js) with V8's code cache
 * (src/startup/code-cache.cts: why, and what happens when V8 rejects a cache).
 *
 * bin/run.js and the per-command stubs in dist/bundle/commands/ (what oclif's manifest points at) both
 * come here, and get the one instance of the bundle: one oclif, one `Command` class. CommonJS, like them,
 * so a command's start-up never starts Node's ES module loader.
 */
import {join} from 'node:path'

import type {Command} from '@oclif/core'

import {runBundle, writeBundleCache} from '../startup/code-cache.cjs'

export interface CliBundle {
  /** Runs the CLI for `process.argv` (or `argv`); `dir` is the package root (oclif reads its package.json). */
  run(dir: string, argv?: string[]): Promise<void>
  /** Every command's module by oclif id, each evaluated only when its command is loaded. */
  commands: Record<string, () => {default: Command.Class}>
}

export const BUNDLE_DIR = join(__dirname, '..', 'bundle')
export const BUNDLE_FILE = join(BUNDLE_DIR, 'payapp.cjs')

/**
 * The bundle, evaluated once per process (src/startup/code-cache.cts). A `vm.Script` cannot use the host's
 * `import()` after a code-cache hit on Node 20, so the build rewrote the bundle's dynamic imports of external
 * modules to `__payappImport`, which imports from here.
 */
export function loadCli(options: {useCache?: boolean} = {}): CliBundle {
  const bundle = runBundle<CliBundle>(BUNDLE_FILE, {...options, params: {__payappImport: (specifier: string) => import(specifier)}})
  if (!bundle) throw new Error(`${BUNDLE_FILE} is missing: run \`npm run build\``)
  return bundle
}

/** Writes the code cache of what this process compiled so far (the build calls it after a training run). */
export function writeCodeCache(): number {
  return writeBundleCache(BUNDLE_FILE)
}
