/**
 * Text patches of dependencies, applied while esbuild bundles them (scripts/build-cli.js, scripts/build-gateway.js).
 *
 * A patch is a last resort, so each one is held to its dependency: it names the package and the version range it was
 * written against (`~`, pinned the same in package.json's `dependencies`, or `overrides` for a transitive package;
 * test/build/dependency-patches.test.ts checks they agree), and each replacement names how often its text occurs
 * (once unless said). The build FAILS when an installed version is outside the range, when a replacement's text
 * occurs any other number of times (a patch never half-applies), or when a patched file was never bundled (moved).
 * Each performance patch says what it buys, measured side by side (scripts/bench/startup-layers.js, CPU ms on Node 20).
 * Those that bought under 3 ms went: oclif's lazy screen widths and spinner (the spinner's patch could half-apply),
 * its logger made once (with `debug` loaded lazily), its config kept for a command's run. Four small layers stay as
 * one: the Node version check below, `node:fs/promises` kept off the start-up path (oclif-read-sync, lilconfig,
 * wsl-utils, powershell-utils and two LAZY_IMPORTS of build-cli.js), zod's English locale only and the minified
 * manifest: each under 3 ms alone, 6.8 ms per `--help` and 8.5 per `products list` together (25 interleaved rounds,
 * with a fifth, the SDK's `node:crypto`, which the SDK now loads itself only when a call needs it), and without them
 * `products list` went over its 2.0× target.
 */
import {existsSync, readFileSync} from 'node:fs'
import {readFile} from 'node:fs/promises'
import {createRequire} from 'node:module'
import {dirname, join} from 'node:path'

import semver from 'semver'

/**
 * @typedef {{find: string | RegExp, replace: string, count?: number}} Replacement
 * @typedef {{name: string, bundle: 'cli' | 'gateway', package: string, version: string, file: string, why: string, replacements: Replacement[]}} Patch
 */

const OCLIF = '~4.14.0'
/** @oclif/core's `engines.node` major, which the oclif-node-check patch compares against. */
const oclifNode = /^>=(\d+)\.\d+\.\d+$/.exec(createRequire(import.meta.url)('@oclif/core/package.json').engines?.node ?? '')?.[1]
if (!oclifNode) throw new Error("@oclif/core's engines.node is no longer `>=X.Y.Z`: update the oclif-node-check patch")

/** @type {Patch[]} */
export const PATCHES = [
  // Buys 4.9 and 6.4 ms CPU per `payapp --help` (two runs of startup-layers.js, 25 and 40 rounds), 0 to 8 on `products list`.
  {
    name: 'oclif-sort-ids',
    bundle: 'cli',
    package: '@oclif/core',
    version: OCLIF,
    file: 'lib/config/plugin.js',
    why: "the first localeCompare builds ICU's collator; ids of lowercase words, `:` and `-` sort the same by code unit",
    replacements: [
      {
        find: '.sort((a, b) => a.id.localeCompare(b.id));',
        replace: '.sort((a, b) => (/^[a-z:-]*$/.test(a.id) && /^[a-z:-]*$/.test(b.id) ? (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) : a.id.localeCompare(b.id)));',
      },
    ],
  },
  // Buys 7.6 ms CPU per `payapp --help` (startup-layers.js, 25 rounds).
  {
    name: 'oclif-help-no-ejs',
    bundle: 'cli',
    package: '@oclif/core',
    version: OCLIF,
    file: 'lib/help/util.js',
    why: 'help text without `<%` is not compiled as an EJS template (one `new Function` per summary in the root help)',
    replacements: [{find: 'return ejs_1.default.render(t, context);', replace: "return typeof t === 'string' && !t.includes('<%') ? t : ejs_1.default.render(t, context);"}],
  },
  // Small layer `no-fs-promises` (see above): 2.1 ms per `--help`, 1.8 per `products list` with its lazy imports.
  {
    name: 'oclif-read-sync',
    layer: 'no-fs-promises',
    bundle: 'cli',
    package: '@oclif/core',
    version: OCLIF,
    file: 'lib/util/fs.js',
    why: 'package.json, manifest and theme are small files, read at once',
    replacements: [{find: "const contents = await (0, promises_1.readFile)(path, 'utf8');", replace: "const contents = (0, node_fs_1.readFileSync)(path, 'utf8');"}],
  },
  {
    name: 'lilconfig-fs-promises-lazy',
    layer: 'no-fs-promises',
    bundle: 'cli',
    package: 'lilconfig',
    version: '~3.1.5',
    file: 'src/index.js',
    why: 'lilconfig takes fs.promises on first use, not at import',
    replacements: [{find: 'const fsReadFileAsync = fs.promises.readFile;', replace: 'const fsReadFileAsync = (...args) => fs.promises.readFile(...args);'}],
  },
  ...['wsl-utils', 'powershell-utils'].map((pkg) => ({
    name: `${pkg}-execfile-lazy`,
    layer: 'no-fs-promises',
    bundle: 'cli',
    package: pkg,
    version: pkg === 'wsl-utils' ? '~0.4.0' : '~0.1.0',
    file: 'index.js',
    why: '`execFile` promisified on first use, not at import',
    replacements: [{find: 'const execFile = promisify(childProcess.execFile);', replace: 'const execFile = (...args) => promisify(childProcess.execFile)(...args);'}],
  })),
  // Small layer (see above): 1.2 ms per `--help`, 1.0 per `products list`.
  {
    name: 'oclif-node-check',
    layer: 'oclif-node-check',
    bundle: 'cli',
    package: '@oclif/core',
    version: OCLIF,
    file: 'lib/index.js',
    why: "Node's major compared with @oclif/core's `engines.node`, instead of loading semver and reading a package.json a bundle lacks",
    replacements: [
      {
        find: /const semver = require\('semver'\);\n(\s*)const root = path\.join\(__dirname, '\.\.'\);\n\s*const pjson = require\(path\.join\(root, 'package\.json'\)\);\n\s*if \(!semver\.satisfies\(process\.versions\.node, pjson\.engines\.node\)\) \{/,
        replace: `const pjson = {engines: {node: '>=${oclifNode}.0.0'}};\n$1if (Number(process.versions.node.split('.')[0]) < ${oclifNode}) {`,
      },
    ],
  },
  // Buys 9.8 ms CPU per gateway start (in memory, one request; startup-layers.js, 30 rounds).
  {
    name: 'find-my-way-prefix',
    bundle: 'gateway',
    package: 'find-my-way',
    version: '~9.10.1',
    file: 'lib/node.js',
    why: "fastify's router compiles a `new Function` per static route prefix on every start (no code cache keeps them); `startsWith` matches the same",
    replacements: [
      {
        find: /\n {2}const lines = \[\]\n {2}for \(let i = 1; i < prefix\.length; i\+\+\) \{\n.*\n.*\n {2}\}\n {2}return new Function\('path', 'i', [^\n]*\n/,
        replace: '\n  return function matchPrefix (path, i) {\n    return path.startsWith(prefix, i)\n  }\n',
      },
    ],
  },
  {
    name: 'better-sqlite3-addon-path',
    bundle: 'gateway',
    package: 'better-sqlite3',
    version: '~12.11.1',
    file: 'lib/database.js',
    // Not for speed: in a bundle, `bindings` would look for the addon beside the bundle, not in better-sqlite3's folder.
    why: "better-sqlite3's addon, found from the package's folder as resolved from the bundle at run time",
    replacements: [
      {
        find: "require('bindings')('better_sqlite3.node')",
        replace: "require('bindings')({bindings: 'better_sqlite3.node', module_root: require('path').dirname(require.resolve('better-sqlite3/package.json'))})",
      },
    ],
  },
]

/** The names `PAYAPP_BUILD_WITHOUT` (comma-separated) leaves out of a build: only for measuring what each buys. */
export const without = new Set((process.env.PAYAPP_BUILD_WITHOUT ?? '').split(',').filter(Boolean))

const count = (source, find) =>
  typeof find === 'string' ? source.split(find).length - 1 : [...source.matchAll(new RegExp(find.source, find.flags.includes('g') ? find.flags : find.flags + 'g'))].length

/**
 * Applies `patch` to `source` (the text of its file): every replacement must find its text exactly `count` times.
 * Returns the patched text, or throws naming the patch and each replacement that did not match.
 */
export function applyPatch(patch, source) {
  const misses = []
  let out = source
  patch.replacements.forEach(({find, replace, count: expected = 1}, i) => {
    const found = count(out, find)
    if (found !== expected) misses.push(`replacement ${i + 1} found ${found}× (expected ${expected}×): ${String(find).slice(0, 80)}`)
    else out = typeof find === 'string' ? out.split(find).join(replace) : out.replace(new RegExp(find.source, find.flags.includes('g') ? find.flags : find.flags + 'g'), replace)
  })
  if (misses.length > 0) throw new Error(`patch ${patch.name} of ${patch.package} no longer applies; update or remove it:\n  ${misses.join('\n  ')}`)
  return out
}

/** The package folder of a module file: the nearest folder up with a package.json that names a package. */
function packageRoot(file) {
  let dir = dirname(file)
  for (;;) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name) return dir
    if (dirname(dir) === dir) throw new Error(`no package.json above ${file}`)
    dir = dirname(dir)
  }
}

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
/** `@oclif/core` + `lib/screen.js` → a filter for `…/node_modules/@oclif/core/lib/screen.js` on any platform. */
const fileFilter = (patch) => new RegExp(`[\\\\/]node_modules[\\\\/]${[...patch.package.split('/'), ...patch.file.split('/')].map(escape).join('[\\\\/]')}$`)

/** The esbuild plugin that applies the patches of `bundle` ('cli' or 'gateway'), failing the build as above. */
export function patchDependencies(bundle, patches = PATCHES) {
  const mine = patches.filter((patch) => patch.bundle === bundle && !without.has(patch.name) && !without.has(patch.layer))
  return {
    name: 'patch-dependencies',
    setup(build) {
      const applied = new Set()
      for (const patch of mine) {
        build.onLoad({filter: fileFilter(patch)}, async (args) => {
          const {version} = JSON.parse(readFileSync(join(packageRoot(args.path), 'package.json'), 'utf8'))
          if (!semver.satisfies(version, patch.version)) {
            throw new Error(`patch ${patch.name} was written for ${patch.package}@${patch.version}, installed is ${version}: check the patch and its pin`)
          }
          applied.add(patch.name)
          return {contents: applyPatch(patch, await readFile(args.path, 'utf8')), loader: 'js'}
        })
      }
      build.onEnd((result) => {
        if (result.errors.length > 0) return undefined
        const missing = mine.filter((patch) => !applied.has(patch.name))
        return {errors: missing.map((patch) => ({text: `patch ${patch.name}: ${patch.package}/${patch.file} was not in the bundle (moved or no longer imported); update or remove the patch`}))}
      })
    },
  }
}
