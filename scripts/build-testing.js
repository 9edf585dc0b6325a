#!/usr/bin/env node
/**
 * The CommonJS entry of `payapp/testing` (the exports map's `require` condition): dist/testing/index.cjs, so a
 * CommonJS suite (`require('payapp/testing')`, Jest's default module system, which cannot load ES modules)
 * starts the gateway as an ESM suite does.
 *
 * src/testing/index.ts bundled as CommonJS with nothing ESM on its require path: the SDK's clients come from
 * `@payapp/sdk`'s own CommonJS build (one instance of each class with `require('@payapp/sdk')`), zod is
 * required, and the gateway loads from dist/bundle/gateway.cjs as it does for the ESM entry (gateway/load.ts).
 * Its declarations are tsc's, beside it as index.d.cts, importing what the SDK's root declares for `require`
 * from there, and the rest (ES modules) by type with `resolution-mode: import`.
 */
import {readFileSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {build} from 'esbuild'

import {BUNDLE_OPTIONS} from './bundle-options.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const OUT = join(ROOT, 'dist', 'testing')

/** The SDK's deep paths the entry imports, answered by the package root, whose `require` side is its CommonJS build. */
const sdkFromItsCommonJs = {
  name: 'sdk-from-its-commonjs',
  setup(b) {
    b.onResolve({filter: /^@payapp\/sdk\/(admin|client)$/}, () => ({path: '@payapp/sdk', external: true}))
    // Only reached without a gateway bundle, which a built package always has: tsc's server module.
    b.onResolve({filter: /^\.\/server\.js$/}, (args) => (args.importer.endsWith('load.ts') ? {path: '../gateway/server.js', external: true} : undefined))
  },
}

await build({
  ...BUNDLE_OPTIONS,
  entryPoints: [join(ROOT, 'src', 'testing', 'index.ts')],
  outfile: join(OUT, 'index.cjs'),
  write: true,
  external: ['zod', 'better-sqlite3'],
  plugins: [sdkFromItsCommonJs],
})
const ROOT_EXPORTS = new Set(['@payapp/sdk/admin', '@payapp/sdk/client', '@payapp/sdk/schemas/common'])
const declarations = readFileSync(join(OUT, 'index.d.ts'), 'utf8').replace(/^(import (type )?\{[^}]*\} from )'([^']+)';$/gm, (line, head, typeOnly, from) => {
  if (ROOT_EXPORTS.has(from)) return `${head}'@payapp/sdk';`
  if (!typeOnly) throw new Error(`build-testing: index.d.ts imports values from ${from}, which a CommonJS declaration cannot: ${line}`)
  return `${head}'${from}' with {'resolution-mode': 'import'};`
})
// An import the rewrite did not match (tsc wrote it another way) would be read as a require of an ES module.
const unmatched = declarations.split('\n').filter((l) => /^import .* from '/.test(l) && !/from '@payapp\/sdk';$|'resolution-mode': 'import'/.test(l))
if (unmatched.length) throw new Error(`build-testing: imports left as require()s in index.d.cts:\n${unmatched.join('\n')}`)
writeFileSync(join(OUT, 'index.d.cts'), declarations)
