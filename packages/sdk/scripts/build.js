/**
 * The published builds of @payapp/sdk (`npm run build`, after tsc wrote dist/**\/*.js and the declarations).
 *
 * An app pays for the SDK on every start: as tsc's files, `import('@payapp/sdk')` linked some 30 modules
 * and built every zod schema (~150) and node:crypto before its first call. So both module systems get bundles
 * in which a schema is built when first read (lazy-schemas.js; the endpoint, admin and event tables name theirs through
 * functions). The sources import no Node built-in (the check at the end fails the build if one appears), so the same
 * files load in Node, Deno, Bun, workerd and browsers:
 *
 * - ESM: dist/bundle/sdk.js (every module of src/, each as a namespace export) and dist/bundle/webhooks.js (the
 *   modules webhooks-edge.ts needs, no node builtins), sharing chunks. Each of tsc's dist/<module>.js is then
 *   replaced by a facade that re-exports its module from a bundle: `@payapp/sdk`, `@payapp/sdk/webhooks` and every
 *   deep path (`@payapp/sdk/client`, `@payapp/sdk/schemas/catalog`…) stay where they were, with the same names and
 *   declarations, and share one instance of each class and schema.
 * - CommonJS: dist/cjs/index.cjs and dist/cjs/webhooks.cjs for `require('@payapp/sdk')`, zod external, and the
 *   ESM declarations copied beside them under a package.json that marks the directory CommonJS, so TypeScript
 *   reads them as the require side's types.
 */
import {cpSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {builtinModules} from 'node:module'
import {dirname, join, relative, sep} from 'node:path'
import {fileURLToPath} from 'node:url'

import {build} from 'esbuild'

import {slimEndpointTable, slimSchemaModule} from './browser-slim.js'
import {SCHEMA_MODULES, lazySchemas} from './lazy-schemas.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const SRC = join(root, 'src')
const dist = join(root, 'dist')

/**
 * The SDK's version, written into src/version.ts (a literal in every build, so no runtime reads a file for it at
 * import) when package.json's version moved on; the bundles below read it from there (its declaration says `string`).
 */
const {version} = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const versionFile = join(SRC, 'version.ts')
const versionSource = readFileSync(versionFile, 'utf8')
const versionLiteral = /export const SDK_VERSION: string = '([^']*)'/
if (!versionLiteral.test(versionSource)) throw new Error(`${versionFile}: no SDK_VERSION literal to write the version into`)
if (versionSource.match(versionLiteral)[1] !== version) {
  writeFileSync(versionFile, versionSource.replace(versionLiteral, `export const SDK_VERSION: string = '${version}'`))
  // tsc compiled the old literal before this script ran.
  const compiled = join(dist, 'version.js')
  writeFileSync(compiled, readFileSync(compiled, 'utf8').replace(/SDK_VERSION = '[^']*'/, `SDK_VERSION = '${version}'`))
}

/**
 * What a bundler picks for a page or a Worker (the `browser` condition: esbuild --platform=browser, Vite, webpack,
 * wrangler): tsc's ES modules as they are, one file a module, copied before the facades below replace them. An app's
 * bundler follows only what the page reaches and drops the rest (the OpenAPI builder, the admin and event schemas,
 * the deep paths): less than half the gzipped size of the facades' bundle, which an app's bundler keeps whole.
 */
rmSync(join(dist, 'browser'), {recursive: true, force: true})
for (const file of tsFiles(dist, '.js')) {
  const to = join(dist, 'browser', relative(dist, file))
  mkdirSync(dirname(to), {recursive: true})
  cpSync(file, to)
}
// Less for a page to carry: no request schemas, no documentation texts (browser-slim.js says why).
for (const name of ['common', 'catalog', 'commerce', 'billing']) {
  const file = join(dist, 'browser', 'schemas', `${name}.js`)
  writeFileSync(file, slimSchemaModule(readFileSync(file, 'utf8'), file))
}
{
  const file = join(dist, 'browser', 'endpoints.js')
  writeFileSync(file, slimEndpointTable(readFileSync(file, 'utf8'), file))
}

/**
 * Beyond the schema modules, the two tables that import zod for a schema or two of their own: as lazy modules, the
 * CommonJS build requires zod on the first read of a schema, not at `require('@payapp/sdk')` (the ES module build
 * imports zod at once: ES modules cannot load it later).
 */
const LAZY_MODULES = [...SCHEMA_MODULES, join(SRC, 'events.ts'), join(SRC, 'admin-endpoints.ts')]

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  external: ['zod', ...builtinModules.map((name) => `node:${name}`)],
  plugins: [lazySchemas({modules: LAZY_MODULES, root})],
  logLevel: 'warning',
}

function tsFiles(dir, ext = '.ts') {
  return readdirSync(dir, {withFileTypes: true}).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return tsFiles(path, ext)
    return entry.name.endsWith(ext) && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

// ---------------------------------------------------------------- ESM

const modules = tsFiles(SRC).map((path) => {
  const id = relative(SRC, path).replace(/\.ts$/, '').split(sep).join('/')
  return {path, id, name: `m_${id.replace(/[^\w]/g, '_')}`}
})
// Each module's exported names (types are gone; bundled, so `export *` lists what it re-exports) and what webhooks-edge.ts reaches.
const {metafile} = await build({...common, plugins: [], entryPoints: modules.map((m) => m.path), outdir: join(dist, 'x'), format: 'esm', write: false, metafile: true, logLevel: 'silent'})
const exportsOf = new Map(Object.values(metafile.outputs).map((out) => [join(root, out.entryPoint), out.exports]))
const edge = await build({...common, plugins: [], entryPoints: [join(SRC, 'webhooks-edge.ts')], format: 'esm', write: false, metafile: true})
const edgeModules = new Set(Object.keys(edge.metafile.inputs).map((input) => join(root, input)))

const entry = (members) => members.map((m) => `export * as ${m.name} from ${JSON.stringify(`./${m.id}.ts`)}`).join('\n')
rmSync(join(dist, 'bundle'), {recursive: true, force: true})
await build({
  ...common,
  entryPoints: {sdk: 'sdk-entry', webhooks: 'webhooks-entry'},
  outdir: join(dist, 'bundle'),
  format: 'esm',
  splitting: true,
  chunkNames: 'chunk-[hash]',
  plugins: [
    {
      name: 'entries',
      setup(build) {
        build.onResolve({filter: /-entry$/}, (args) => ({path: args.path, namespace: 'entry'}))
        build.onLoad({filter: /.*/, namespace: 'entry'}, (args) => ({
          contents: entry(args.path === 'sdk-entry' ? modules : modules.filter((m) => edgeModules.has(m.path))),
          resolveDir: SRC,
          loader: 'js',
        }))
      },
    },
    ...common.plugins,
  ],
})
for (const m of modules) {
  const file = join(dist, `${m.id}.js`)
  const from = relative(dirname(file), join(dist, 'bundle', edgeModules.has(m.path) ? 'webhooks.js' : 'sdk.js')).split(sep).join('/')
  const names = exportsOf.get(m.path)
  writeFileSync(
    file,
    `// Generated by scripts/build.js: src/${m.id}.ts, from the bundle.\n` +
      (names.length === 0 ? `export {}\n` : `import {${m.name} as m} from ${JSON.stringify(from.startsWith('.') ? from : `./${from}`)}\nexport const {${names.join(', ')}} = m\n`),
  )
}

// ---------------------------------------------------------------- CommonJS

const out = join(dist, 'cjs')
rmSync(out, {recursive: true, force: true})
mkdirSync(out, {recursive: true})
await build({
  ...common,
  entryPoints: {index: join(SRC, 'index.ts'), webhooks: join(SRC, 'webhooks-edge.ts')},
  outdir: out,
  outExtension: {'.js': '.cjs'},
  format: 'cjs',
})

// Declarations: the same files, read as CommonJS because of the package.json beside them.
for (const entry of readdirSync(dist, {withFileTypes: true})) {
  if (entry.name === 'cjs' || entry.name === 'bundle' || entry.name === 'browser') continue
  if (entry.isDirectory()) cpSync(join(dist, entry.name), join(out, entry.name), {recursive: true, filter: (f) => !f.endsWith('.js') || f.endsWith('.d.ts')})
  else if (entry.name.endsWith('.d.ts')) cpSync(join(dist, entry.name), join(out, entry.name))
}
writeFileSync(join(out, 'package.json'), JSON.stringify({type: 'commonjs'}) + '\n')

/**
 * A lazy module is CommonJS inside the bundles, and esbuild's interop gives a CommonJS namespace (`import * as admin`,
 * which `schemas.admin` is) an enumerable `default`: made non-enumerable, so `Object.keys(schemas.admin)` lists the
 * schemas as tsc's build did. Fails the build if esbuild's helper changed.
 */
const DEFAULT_EXPORT = '__defProp(target, "default", { value: mod, enumerable: true })'
for (const file of [...readdirSync(join(dist, 'bundle')).map((f) => join(dist, 'bundle', f)), join(out, 'index.cjs'), join(out, 'webhooks.cjs')]) {
  const code = readFileSync(file, 'utf8')
  if (!code.includes('var __toESM = ')) continue
  if (!code.includes(DEFAULT_EXPORT)) throw new Error(`${file}: esbuild's __toESM changed; update DEFAULT_EXPORT in scripts/build.js`)
  writeFileSync(file, code.replace(DEFAULT_EXPORT, DEFAULT_EXPORT.replace('enumerable: true', 'enumerable: false')))
}

/**
 * What an app bundles for a browser, an edge function or Lambda must not need Node: no built-in, no `process`
 * global, no `import.meta.url` (undefined once an ES module is bundled to CommonJS) in any file of the builds.
 */
const NODE_ONLY = /\bfrom\s*["']node:|\brequire\(["']node:|\bimport\(["']node:|import\.meta\.url|(?<![.\w])process\./
for (const file of [...readdirSync(join(dist, 'bundle')).map((f) => join(dist, 'bundle', f)), ...tsFiles(join(dist, 'browser'), '.js'), ...readdirSync(out).filter((f) => f.endsWith('.cjs')).map((f) => join(out, f))]) {
  // Comments may name what the code avoids (tsc's files keep them).
  const match = NODE_ONLY.exec(readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|^\s*\/\/.*$/gm, ''))
  if (match) throw new Error(`${file}: "${match[0]}" would not load outside Node; the SDK reaches the runtime through src/runtime.ts`)
}
