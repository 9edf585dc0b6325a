/**
 * The CommonJS build of @payapp/sdk, for `require('@payapp/sdk')`: the ESM sources bundled by esbuild
 * into dist/cjs/*.cjs (zod stays external), and the ESM declarations copied beside them under a
 * package.json that marks the directory CommonJS, so TypeScript reads them as the require side's types.
 */
import {cpSync, mkdirSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {build} from 'esbuild'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const out = join(root, 'dist', 'cjs')
rmSync(out, {recursive: true, force: true})
mkdirSync(out, {recursive: true})

await build({
  entryPoints: {index: join(root, 'src', 'index.ts'), webhooks: join(root, 'src', 'webhooks-edge.ts')},
  outdir: out,
  outExtension: {'.js': '.cjs'},
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  external: ['zod'],
  // import.meta.url has no CommonJS equivalent in esbuild's output: supply it from __filename.
  define: {'import.meta.url': 'importMetaUrl'},
  banner: {js: "const importMetaUrl = require('node:url').pathToFileURL(__filename).href;"},
  logLevel: 'warning',
})

// Declarations: the same files, read as CommonJS because of the package.json beside them.
const dist = join(root, 'dist')
for (const entry of readdirSync(dist, {withFileTypes: true})) {
  if (entry.name === 'cjs') continue
  if (entry.isDirectory()) cpSync(join(dist, entry.name), join(out, entry.name), {recursive: true, filter: (f) => !f.endsWith('.js') || f.endsWith('.d.ts')})
  else if (entry.name.endsWith('.d.ts')) cpSync(join(dist, entry.name), join(out, entry.name))
}
writeFileSync(join(out, 'package.json'), JSON.stringify({type: 'commonjs'}) + '\n')
