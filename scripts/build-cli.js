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
 *    the bundle, which src/cli/bundle-loader.cts hands to V8 (Node 20 has no module compile cache).
 * Inside the bundle, work a call may not need waits for first use: the SDK's schemas (packages/sdk/scripts/lazy-schemas.js), modules
 * and builtins packages import for rare paths (LAZY_IMPORTS), and a few patched dependencies (trimForStartup).
 * Native and gateway-only packages stay external and load from node_modules as before.
 */
import {existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {readFile} from 'node:fs/promises'
import {createRequire} from 'node:module'
import {dirname, join, relative, sep} from 'node:path'
import {fileURLToPath} from 'node:url'

import {build} from 'esbuild'

import {lazySchemas} from '../packages/sdk/scripts/lazy-schemas.js'
import {BUNDLE_OPTIONS, writeAscii, zodEnglishOnly} from './bundle-options.js'

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
  // oclif: readline to read a flag's value from stdin, perf_hooks for its performance marks (off unless
  // asked for), tinyglobby to find commands when there is no manifest, child_process for Windows' shell.
  // node:fs/promises (which loads readline and file watchers) for its writes and directory checks.
  {importer: /[\\/]node_modules[\\/]@oclif[\\/]core[\\/]/, modules: ['node:readline', 'node:perf_hooks', 'tinyglobby', 'node:child_process', 'node:fs/promises']},
  // The CLI's own modules: node:fs/promises for writes (config, credentials) and `--data @file`.
  {importer: /[\\/]src[\\/]cli[\\/]/, modules: ['node:fs/promises']},
  // oclif's platform check (is this WSL?) loads wsl-utils, which runs child processes only for WSL paths.
  {importer: /[\\/]node_modules[\\/](wsl-utils|powershell-utils)[\\/]/, modules: ['node:child_process', 'node:fs/promises']},
  // oclif's logger: the `debug` package, whose output only DEBUG=… turns on (src/cli/main.ts passes oclif a
  // silent logger otherwise, so it is never loaded).
  {importer: /[\\/]node_modules[\\/]@oclif[\\/]core[\\/]lib[\\/]logger\.js$/, modules: ['debug']},
  // The SDK's file uploads read files with node:fs/promises.
  {importer: /[\\/]packages[\\/]sdk[\\/]src[\\/]resources[\\/]upload\.ts$/, modules: ['node:fs/promises']},
  // The SDK's transport: node:crypto (a dozen internal modules) for the idempotency keys of writes only.
  {importer: /[\\/]packages[\\/]sdk[\\/]src[\\/]transport\.ts$/, modules: ['node:crypto']},
]

/**
 * Work the CLI never needs, left out of start-up (the SDK that `payapp/sdk` exports is not bundled and keeps all):
 * - the LAZY_IMPORTS above;
 * - zod's 60 locales (zodEnglishOnly in bundle-options.js);
 * - in oclif: help text without `<%` is not compiled as an EJS template (one `new Function` per command
 *   summary in the root help; the text comes out the same), and the check of Node against @oclif/core's
 *   `engines.node` compares major versions instead of loading semver and probing for a package.json
 *   that a bundle does not have beside it;
 * - wsl-utils and powershell-utils promisify `execFile` on first use, not at import; oclif sorts command
 *   ids without ICU's collator when they are plain lowercase ids (same order), measures the terminal's width
 *   on first use, and keeps one config per run (see each patch below).
 * Each patch checks that its target is still there; if a dependency changed, the build warns and the
 * bundle keeps that dependency's code unpatched.
 */
const trimForStartup = {
  name: 'trim-for-startup',
  setup(build) {
    const require = createRequire(import.meta.url)
    const lazy = (args) => LAZY_IMPORTS.some(({importer, modules}) => importer.test(args.importer) && modules.includes(args.path))
    build.onResolve({filter: /^(node:[a-z_/]+|[a-z][\w-]*)$/}, (args) =>
      lazy(args) ? {path: args.path, namespace: 'startup-shim', pluginData: args.resolveDir} : undefined,
    )
    const patch = (filter, edit) =>
      build.onLoad({filter}, async (args) => {
        const source = await readFile(args.path, 'utf8')
        const patched = edit(source)
        if (patched === source) console.warn(`build-cli: ${args.path} has changed; left unpatched (slower start-up)`)
        return {contents: patched, loader: 'js'}
      })
    // The first localeCompare builds ICU's collator (~6 ms); ids of lowercase words, `:` and `-` sort the same by code unit.
    patch(/[\\/]@oclif[\\/]core[\\/]lib[\\/]config[\\/]plugin\.js$/, (source) =>
      source.replace(
        '.sort((a, b) => a.id.localeCompare(b.id));',
        '.sort((a, b) => (/^[a-z:-]*$/.test(a.id) && /^[a-z:-]*$/.test(b.id) ? (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) : a.id.localeCompare(b.id)));',
      ),
    )
    // oclif's terminal widths, measured on first use: measuring at import creates process.stderr, which a
    // command with nothing to say on stderr never needs (nor does the choice of spinner below).
    patch(/[\\/]@oclif[\\/]core[\\/]lib[\\/]screen\.js$/, (source) =>
      source.replace(
        'exports.stdtermwidth = columns || termwidth(process.stdout);\nexports.errtermwidth = columns || termwidth(process.stderr);',
        'let std, err;\nObject.defineProperty(exports, "stdtermwidth", {enumerable: true, get: () => (std ??= columns || termwidth(process.stdout))});\nObject.defineProperty(exports, "errtermwidth", {enumerable: true, get: () => (err ??= columns || termwidth(process.stderr))});',
      ),
    )
    // A command's `run` reloads oclif's config from the one main just loaded, for a plugin built on another
    // @oclif/core; for a command of this bundle (the same core) the config is kept instead of loaded twice.
    patch(/[\\/]@oclif[\\/]core[\\/]lib[\\/]config[\\/]config\.js$/, (source) =>
      source.replace('        if (isConfig(opts)) {\n', '        if (isConfig(opts) && opts._base === BASE && opts instanceof Config)\n            return opts;\n        if (isConfig(opts)) {\n'),
    )
    // oclif reads its package.json, manifest and theme at start-up: small files, read at once (and lilconfig,
    // which it loads, takes fs.promises on first use, not at import).
    patch(/[\\/]@oclif[\\/]core[\\/]lib[\\/]util[\\/]fs\.js$/, (source) =>
      source.replace("const contents = await (0, promises_1.readFile)(path, 'utf8');", "const contents = (0, node_fs_1.readFileSync)(path, 'utf8');"),
    )
    patch(/[\\/]lilconfig[\\/]src[\\/]index\.js$/, (source) =>
      source.replace('const fsReadFileAsync = fs.promises.readFile;', 'const fsReadFileAsync = (...args) => fs.promises.readFile(...args);'),
    )
    // oclif's default logger is made (loading `debug`) only when there is none yet: `set` would drop it anyway.
    patch(/[\\/]@oclif[\\/]core[\\/]lib[\\/]logger\.js$/, (source) =>
      source.replace('    else {\n        set(makeLogger(OCLIF_NS));\n    }', "    else if (!cachedLoggers.has('root')) {\n        set(makeLogger(OCLIF_NS));\n    }"),
    )
    // Whether stderr is a terminal, from the descriptor (the same answer) rather than by creating process.stderr,
    // and the spinner (which holds process.stderr's write) made on first use.
    patch(/[\\/]@oclif[\\/]core[\\/]lib[\\/]ux[\\/]index\.js$/, (source) =>
      source
        .replace('const ACTION_TYPE = (Boolean(process.stderr.isTTY) &&', "const ACTION_TYPE = (require('node:tty').isatty(2) &&")
        .replace(
          "exports.action = ACTION_TYPE === 'spinner' ? new spinner_1.default() : new simple_1.default();",
          "let action;\nconst makeAction = () => (action ??= ACTION_TYPE === 'spinner' ? new spinner_1.default() : new simple_1.default());\nObject.defineProperty(exports, 'action', {enumerable: true, get: makeAction});",
        )
        .replace('    action: exports.action,', '    get action() { return makeAction(); },'),
    )
    patch(/[\\/](wsl-utils|powershell-utils)[\\/]index\.js$/, (source) =>
      source.replace('const execFile = promisify(childProcess.execFile);', 'const execFile = (...args) => promisify(childProcess.execFile)(...args);'),
    )
    patch(/[\\/]@oclif[\\/]core[\\/]lib[\\/]help[\\/]util\.js$/, (source) =>
      source.replace('return ejs_1.default.render(t, context);', "return typeof t === 'string' && !t.includes('<%') ? t : ejs_1.default.render(t, context);"),
    )
    const oclifNode = /^>=(\d+)\.\d+\.\d+$/.exec(require('@oclif/core/package.json').engines?.node ?? '')
    patch(/[\\/]@oclif[\\/]core[\\/]lib[\\/]index\.js$/, (source) =>
      oclifNode
        ? source.replace(
            /const semver = require\('semver'\);\n(\s*)const root = path\.join\(__dirname, '\.\.'\);\n\s*const pjson = require\(path\.join\(root, 'package\.json'\)\);\n\s*if \(!semver\.satisfies\(process\.versions\.node, pjson\.engines\.node\)\) \{/,
            `const pjson = {engines: {node: '>=${oclifNode[1]}.0.0'}};\n$1if (Number(process.versions.node.split('.')[0]) < ${oclifNode[1]}) {`,
          )
        : source,
    )
    build.onLoad({filter: /.*/, namespace: 'startup-shim'}, (args) => {
      const real = args.path.startsWith('node:') ? args.path : createRequire(join(args.pluginData, 'x.js')).resolve(args.path)
      const load = `let real; const load = () => (real ??= require(${JSON.stringify(real)}));\n`
      // A builtin's exports are known here: one getter each, so named imports from ES modules (which copy the
      // exports' own properties at import) work too. Packages, imported whole: a proxy, where `__esModule` (what
      // interop helpers probe on import) must not load the module; a module that is a function (debug) is callable.
      const target = args.path === 'debug' ? 'function () {}' : '{}'
      const contents = args.path.startsWith('node:')
        ? `${load}for (const key of ${JSON.stringify(Object.keys(require(real)))}) Object.defineProperty(exports, key, {enumerable: true, get: () => load()[key]});`
        : `${load}module.exports = new Proxy(${target}, {get: (_, key) => (key === '__esModule' ? undefined : load()[key]), has: (_, key) => key in load(), apply: (_, self, args) => Reflect.apply(load(), self, args)});`
      return {contents, resolveDir: args.pluginData, loader: 'js'}
    })
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
  plugins: [zodEnglishOnly, trimForStartup, lazySchemas()],
  metafile: Boolean(process.env.METAFILE),
})

// The SDK's errors report `new.target.name`: a class of ours that esbuild renamed (a name clash in the bundle's
// scope) would change what users see. esbuild's keepNames would guard it, at a cost on every start-up.
const ourClasses = [...files, ...tsFiles(join(ROOT, 'packages', 'sdk', 'src')), ...tsFiles(join(SRC, 'cli'))].flatMap((file) =>
  [...readFileSync(file, 'utf8').matchAll(/^(?:export )?(?:abstract )?class (\w+)/gm)].map((m) => m[1]),
)
const renamed = ourClasses.filter((name) => new RegExp(`\\b${name}\\d+=class\\b`).test(result.outputFiles[0].text))
if (renamed.length > 0) throw new Error(`esbuild renamed classes whose names users see: ${renamed.join(', ')}; rename them in src`)

if (result.metafile) writeFileSync(process.env.METAFILE, JSON.stringify(result.metafile))
// A vm.Script has no host `import()` once V8's code cache is used (Node 20), so the dynamic imports left
// in the bundle (external packages, node: builtins, oclif loading plugin files) go through the loader.
const code = writeAscii(join(OUT, 'payapp.cjs'), result.outputFiles[0].text.replace(/(^|[^\w$.])import\((?!\))/g, '$1__payappImport('))

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
