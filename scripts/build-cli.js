#!/usr/bin/env node
/**
 * Bundles the CLI for a fast start (`npm run build`: after tsc, before `oclif manifest`).
 *
 * Where a command's start-up went on Node 20: the ESM loader resolving and linking hundreds of files
 * (@oclif/core, zod), then V8 compiling them all again on every run. So:
 * 1. esbuild follows the imports of src/cli/main.ts and of every src/commands/<topic>/<verb>.ts into one
 *    CommonJS file, dist/bundle/payapp.cjs, where each command module (and what only it imports) is
 *    evaluated only when that command is loaded.
 * 2. dist/bundle/commands/<topic>/<verb>.cjs: one small stub per command for oclif (its manifest and
 *    `oclif readme` find commands there), each taking its class from the bundle; and one ES module stub per
 *    command of the oclif plugins payapp ships (help, autocomplete), so oclif loads no plugin at start-up.
 * 3. (scripts/train-cli-cache.js, after `oclif manifest`) dist/bundle/payapp.cache: V8's code cache of
 *    the bundle, which src/cli/bundle-loader.cts hands to V8 on Node 20 (Node ≥ 22.1 uses its own compile cache).
 * Inside the bundle, work a call may not need waits for first use: the SDK's schemas (packages/sdk/scripts/lazy-schemas.js), modules
 * and builtins packages import for rare paths (LAZY_IMPORTS), and a few patched dependencies (scripts/dependency-patches.js).
 * Native and gateway-only packages stay external and load from node_modules as before.
 */
import {existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {dirname, join, relative, sep} from 'node:path'
import {fileURLToPath} from 'node:url'

import {build} from 'esbuild'

import {lazySchemas} from '../packages/sdk/scripts/lazy-schemas.js'
import {BUNDLE_OPTIONS, writeAscii, zodEnglishOnly} from './bundle-options.js'
import {patchDependencies, without} from './dependency-patches.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const SRC = join(ROOT, 'src')
const OUT = join(ROOT, 'dist', 'bundle')
// tsc's output of src/cli/bundle-loader.cts, which the stubs require.
const LOADER = join(ROOT, 'dist', 'cli', 'bundle-loader.cjs')

// Native modules, the heavy packages only `gateway start` and `init` load, and the compilers oclif looks
// for in development only: resolved from node_modules at run time.
const EXTERNAL = ['better-sqlite3', 'keytar', 'fastify', '@fastify/*', 'handlebars', 'typescript', 'ts-node', 'tsx']

/**
 * Modules that packages import at start-up but use only for options or paths a CLI call rarely takes:
 * in the bundle they load on first use instead, through getters (or a proxy) that forward to the real module.
 * Per importing package, the modules it gets lazily.
 */
const LAZY_IMPORTS = [
  // oclif: readline to read a flag's value from stdin, perf_hooks for its performance marks (off unless asked for),
  // tinyglobby to find commands when there is no manifest, child_process for Windows' shell, node:fs/promises (which
  // loads readline and file watchers) for its writes. Buys 4.6 and 5.8 ms CPU per `--help` (startup-layers.js, two runs).
  // node:fs/promises for the CLI's own writes and wsl-utils' child processes: part of the small layers of
  // scripts/dependency-patches.js (each under 3 ms, 7 to 8 together). (The SDK reaches node:fs/promises and
  // node:crypto itself only when a call needs them, through runtime.ts, so it needs no entry here.)
  {name: 'lazy-oclif-builtins', importer: /[\\/]node_modules[\\/]@oclif[\\/]core[\\/]/, modules: ['node:readline', 'node:perf_hooks', 'tinyglobby', 'node:child_process', 'node:fs/promises']},
  {name: 'lazy-cli-fs-promises', layer: 'no-fs-promises', importer: /[\\/]src[\\/]cli[\\/]/, modules: ['node:fs/promises']},
  {name: 'lazy-wsl-child-process', layer: 'no-fs-promises', importer: /[\\/]node_modules[\\/](wsl-utils|powershell-utils)[\\/]/, modules: ['node:child_process', 'node:fs/promises']},
]

/**
 * Work the CLI never needs, left out of start-up (the SDK that `payapp/sdk` exports is not bundled and keeps all):
 * the LAZY_IMPORTS above and the patches of oclif in scripts/dependency-patches.js (each says why and what it
 * buys; the build fails if one no longer applies).
 */
const lazyImports = {
  name: 'lazy-imports',
  setup(build) {
    const require = createRequire(import.meta.url)
    const used = new Set()
    const entryOf = (args) => LAZY_IMPORTS.find(({name, layer, importer, modules}) => !without.has(name) && !without.has(layer) && importer.test(args.importer) && modules.includes(args.path))
    build.onResolve({filter: /^(node:[a-z_/0-9]+|[a-z][\w-]*)$/}, (args) => {
      const entry = entryOf(args)
      if (!entry) return undefined
      used.add(entry.name)
      return {path: args.path, namespace: 'startup-shim', pluginData: args.resolveDir}
    })
    build.onLoad({filter: /.*/, namespace: 'startup-shim'}, (args) => {
      const real = args.path.startsWith('node:') ? args.path : createRequire(join(args.pluginData, 'x.js')).resolve(args.path)
      const load = `let real; const load = () => (real ??= require(${JSON.stringify(real)}));\n`
      // A builtin's exports are known here: one getter each, so named imports from ES modules (which copy the
      // exports' own properties at import) work too. Packages, imported whole: a proxy, where `__esModule` (what
      // interop helpers probe on import) must not load the module.
      const contents = args.path.startsWith('node:')
        ? `${load}for (const key of ${JSON.stringify(Object.keys(require(real)))}) Object.defineProperty(exports, key, {enumerable: true, get: () => load()[key]});`
        : `${load}module.exports = new Proxy({}, {get: (_, key) => (key === '__esModule' ? undefined : load()[key]), has: (_, key) => key in load()});`
      return {contents, resolveDir: args.pluginData, loader: 'js'}
    })
    // An entry that made nothing lazy would buy nothing, silently: its package (or our code) moved the import.
    build.onEnd((result) => {
      const idle = LAZY_IMPORTS.filter(({name, layer}) => !without.has(name) && !without.has(layer) && !used.has(name)).map(({name}) => name)
      return result.errors.length === 0 && idle.length > 0 ? {errors: [{text: `lazy-imports: ${idle.join(', ')} made nothing lazy; its importer no longer imports those modules; update LAZY_IMPORTS`}]} : undefined
    })
  },
}

/**
 * The gateway comes from its own bundle (dist/bundle/gateway.cjs, src/gateway/load.ts), which the build writes beside
 * this one. load.ts's fallback for a run from the sources, `import('./server.js')`, would put the whole gateway (its
 * routes, domain, storage and node-postgres: a third of this bundle) into every CLI call's read and compile; here it
 * is a module that says the gateway's bundle is missing. The build fails if load.ts no longer has that import.
 */
const gatewayFromItsBundle = {
  name: 'gateway-from-its-bundle',
  setup(build) {
    if (without.has('gateway-from-its-bundle')) return
    let redirected = 0
    build.onResolve({filter: /^\.\/server\.js$/}, (args) => {
      if (!/[\\/]src[\\/]gateway[\\/]load\.ts$/.test(args.importer)) return undefined
      redirected++
      return {path: 'gateway-server', namespace: 'gateway-from-its-bundle'}
    })
    build.onLoad({filter: /.*/, namespace: 'gateway-from-its-bundle'}, () => ({
      contents: `throw new Error(${JSON.stringify("payapp's gateway bundle (dist/bundle/gateway.cjs) is missing: run npm run build")})`,
      loader: 'js',
    }))
    build.onEnd((result) =>
      result.errors.length === 0 && redirected === 0 ? {errors: [{text: "gateway-from-its-bundle: src/gateway/load.ts no longer imports './server.js'; update the plugin"}]} : undefined,
    )
  },
}

/** The package folder of a module file: the nearest folder up with a package.json. */
function packageRoot(file) {
  let dir = dirname(file)
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir)
  return dir
}

function tsFiles(dir) {
  return readdirSync(dir, {withFileTypes: true}).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return tsFiles(path)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

/** `products/variants/create.ts` → `products:variants:create`; `balance/index.ts` → `balance` (oclif's rule). */
const commandId = (file) =>
  relative(join(SRC, 'commands'), file)
    .replace(/\.ts$/, '')
    .split(sep)
    .filter((part, i, parts) => !(part === 'index' && i === parts.length - 1))
    .join(':')

const files = tsFiles(join(SRC, 'commands')).sort()
const entry = [
  `export {run} from './cli/main.js'`,
  'export const commands = {',
  ...files.map((file) => `  ${JSON.stringify(commandId(file))}: () => require(${JSON.stringify('./' + relative(SRC, file).split(sep).join('/'))}),`),
  '}',
].join('\n')

rmSync(OUT, {recursive: true, force: true})
const result = await build({
  ...BUNDLE_OPTIONS,
  stdin: {contents: entry, resolveDir: SRC, sourcefile: 'cli-bundle-entry.ts', loader: 'ts'},
  outfile: join(OUT, 'payapp.cjs'),
  external: EXTERNAL,
  plugins: [zodEnglishOnly, lazyImports, gatewayFromItsBundle, patchDependencies('cli'), ...(without.has('lazy-schemas') ? [] : [lazySchemas()])],
  metafile: Boolean(process.env.METAFILE),
})

// Identifiers are minified (scripts/bundle-options.js): a class or function keeps no name of its own. Names users
// see are literals (the SDK's and the CLI's errors set `name`; lint refuses `new.target.name` and `constructor.name`
// in src/ and packages/sdk/src/), and oclif takes each command's id from its manifest, not from its class's name.
// The check: each error name set by a literal in those sources is in the bundle as that literal.
const named = [...tsFiles(join(ROOT, 'packages', 'sdk', 'src')), ...tsFiles(join(SRC, 'cli'))].flatMap((file) =>
  [...readFileSync(file, 'utf8').matchAll(/(?:this\.name = |override name = )'(\w+)'/g)].map((m) => m[1]),
)
const lost = named.filter((name) => !result.outputFiles[0].text.includes(`"${name}"`))
if (named.length === 0 || lost.length > 0) throw new Error(`build-cli: error names not found in the bundle as literals: ${lost.join(', ') || '(none found in src: update the check)'}`)

if (result.metafile) writeFileSync(process.env.METAFILE, JSON.stringify(result.metafile))
// A vm.Script has no host `import()` once V8's code cache is used (Node 20), so the dynamic imports left
// in the bundle (external packages, node: builtins, oclif loading plugin files) go through the loader.
// Required as a plain module instead (Node ≥ 22's compile cache), the bundle has no such parameter and imports itself.
// A node: builtin is required instead: its import() would start Node's ES module loader (eight more internal modules
// compiled on every call that sends a request), for the same module object.
const bundled = result.outputFiles[0].text
  .replace(/(^|[^\w$.])import\(("node:[\w/]+")\)/g, '$1Promise.resolve().then(()=>require($2))')
  .replace(/(^|[^\w$.])import\((?!\))/g, '$1__payappImport(')
if (/__payappImport\("node:/.test(bundled)) throw new Error('build-cli: a node: builtin is still imported through __payappImport')
const code = writeAscii(join(OUT, 'payapp.cjs'), `var __payappImport = __payappImport || ((specifier) => import(specifier));\n${bundled}`)

for (const file of files) {
  const stub = join(OUT, 'commands', relative(join(SRC, 'commands'), file).replace(/\.ts$/, '.cjs'))
  mkdirSync(dirname(stub), {recursive: true})
  const loader = relative(dirname(stub), LOADER).split(sep).join('/')
  writeFileSync(
    stub,
    `// Generated by scripts/build-cli.js: the command's class, from the CLI bundle.\n` +
      `module.exports = require(${JSON.stringify(loader)}).loadCli().commands[${JSON.stringify(commandId(file))}]()\n`,
  )
}

// The commands of the oclif plugins payapp ships (`help`, `autocomplete`), adopted as payapp's own: oclif lists
// them from payapp's manifest and loads a plugin's module only when its command runs, instead of resolving the
// plugins and reading their package.json and manifests on every start (package.json lists no `oclif.plugins`).
// ES module stubs (the plugins are ES modules), finding the plugin where Node does at run time.
const ADOPTED_PLUGINS = ['@oclif/plugin-help', '@oclif/plugin-autocomplete']
const requireHere = createRequire(import.meta.url)
let adopted = 0
for (const plugin of ADOPTED_PLUGINS) {
  // The plugins export their main module only (not package.json): paths are taken from its folder.
  const main = requireHere.resolve(plugin)
  const root = packageRoot(main)
  const {commands} = JSON.parse(readFileSync(join(root, 'oclif.manifest.json'), 'utf8'))
  const commandsDir = join(root, JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).oclif.commands)
  for (const [id, {relativePath}] of Object.entries(commands)) {
    const file = join(root, ...relativePath)
    const stub = join(OUT, 'commands', relative(commandsDir, file).replace(/\.js$/, '.mjs'))
    const fromMain = relative(dirname(main), file).split(sep)
    mkdirSync(dirname(stub), {recursive: true})
    writeFileSync(
      stub,
      `// Generated by scripts/build-cli.js: ${plugin}'s \`${id.replaceAll(':', ' ')}\` command, loaded only when it runs.\n` +
        `import {createRequire} from 'node:module'\nimport {dirname, join} from 'node:path'\nimport {pathToFileURL} from 'node:url'\n\n` +
        `const main = createRequire(import.meta.url).resolve(${JSON.stringify(plugin)})\n` +
        `export default (await import(pathToFileURL(join(dirname(main), ${fromMain.map((part) => JSON.stringify(part)).join(', ')})).href)).default\n`,
    )
    adopted++
  }
}

console.log(`bundled ${files.length} commands into ${relative(ROOT, OUT)}/payapp.cjs (${Math.round(code.length / 1024)} KiB); adopted ${adopted} plugin commands`)
