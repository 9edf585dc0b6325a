/**
 * What each start-up layer of the CLI buys, in ms per command: the build as it is beside builds that each leave one
 * layer out (a dependency patch of scripts/dependency-patches.js, a LAZY_IMPORTS entry of scripts/build-cli.js, lazy
 * schemas, the code cache, bin/run.js's `--version` answer; for the gateway's bundle, timed on an in-memory start,
 * its patch).
 * Each variant is a copy of bin/, dist/ and the manifest under .bench-variants/ (node_modules found as usual). All
 * variants and commands are interleaved round by round, in a shuffled order; the gain of a layer is the median over
 * rounds of (time without it − time of the full build) in the same round, as CPU time (`perf stat -e task-clock`,
 * steadier than wall time on a shared machine) and as wall time.
 *
 * `npm run build && node scripts/bench/startup-layers.js [layer…]` (default: all). Env: BENCH_RUNS (rounds, default 30).
 * It rebuilds the CLI's bundle (and the gateway's) as they were when it ends.
 */
import {execFileSync, spawnSync} from 'node:child_process'
import {cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {PATCHES} from '../dependency-patches.js'
import {median} from './processes.js'
import {withSeededGateway} from './startup.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const VARIANTS_DIR = join(ROOT, '.bench-variants')
/** The names of build-cli.js's LAZY_IMPORTS entries (a script that builds when imported, so named here again). */
const LAZY = ['lazy-oclif-builtins']

/** Layer → how its variant differs from the full build (`gateway`: a layer of the gateway's bundle, timed on a start). */
const LAYERS = {
  ...Object.fromEntries(PATCHES.filter((patch) => patch.name !== 'better-sqlite3-addon-path').map((patch) => [patch.name, {without: patch.name, gateway: patch.bundle === 'gateway'}])),
  ...Object.fromEntries(LAZY.map((name) => [name, {without: name}])),
  'lazy-schemas': {without: 'lazy-schemas'},
  'gateway-from-its-bundle': {without: 'gateway-from-its-bundle'},
  // Layers of several patches and lazy imports that only together keep a module off the start-up path.
  ...Object.fromEntries(['no-fs-promises', 'zod-english-only', 'manifest-minified'].map((layer) => [layer, {without: layer}])),
  // The layers that each buy under 3 ms, left out together: what they buy as a whole.
  'small-layers-together': {without: 'no-fs-promises,zod-english-only,manifest-minified,oclif-node-check'},
  // Identifiers minified (scripts/bundle-options.js), in each bundle.
  'minified-identifiers': {without: 'minified-identifiers'},
  'gateway-minified-identifiers': {without: 'minified-identifiers', gateway: true},
  'code-cache': {noCache: true},
  'version-fast-path': {plainBin: true},
}

const node = (args, env = {}) => execFileSync(process.execPath, args, {cwd: ROOT, env: {...process.env, ...env}, stdio: ['ignore', 'ignore', 'inherit']})

/** A start of the gateway (in memory, as `payapp/testing` does) and its close: the gateway's variants' "bin". */
const START_GATEWAY = `import {loadGateway} from './dist/gateway/load.js'
const gw = await (await loadGateway()).startGateway({port: 0, host: '127.0.0.1', db: ':memory:', rateLimit: false, logger: false})
await fetch(gw.url + '/v1/app/products').then((res) => res.arrayBuffer())
await gw.close()
`

/** Builds the bundle leaving out `layer` (none for the full build) and copies what a call loads to .bench-variants/<name>. */
function makeVariant(name, layer = {}) {
  const dir = join(VARIANTS_DIR, name)
  rmSync(dir, {recursive: true, force: true})
  if (layer.gateway || name === 'gateway') {
    node(['scripts/build-gateway.js'], {PAYAPP_BUILD_WITHOUT: layer.without ?? ''})
    for (const path of ['dist/gateway', 'dist/startup', 'dist/bundle/gateway.cjs', 'dist/bundle/gateway.cache', 'package.json']) cpSync(join(ROOT, path), join(dir, path), {recursive: true})
    writeFileSync(join(dir, 'start-gateway.mjs'), START_GATEWAY)
    return join(dir, 'start-gateway.mjs')
  }
  node(['scripts/build-cli.js'], {PAYAPP_BUILD_WITHOUT: layer.without ?? ''})
  if (!layer.noCache) node(['scripts/train-cli-cache.js'])
  for (const path of ['bin', 'dist/cli', 'dist/startup', 'dist/bundle', 'package.json', 'oclif.manifest.json']) cpSync(join(ROOT, path), join(dir, path), {recursive: true})
  if (layer.plainBin) {
    writeFileSync(join(dir, 'bin', 'run.js'), "#!/usr/bin/env node\nrequire('../dist/cli/bundle-loader.cjs').loadCli().run(require('node:path').join(__dirname, '..'))\n")
  }
  return join(dir, 'bin', 'run.js')
}

const COMMANDS = {version: ['--version'], help: ['--help'], list: ['products', 'list', '--json'], start: []}

/** One run under `perf stat` for its CPU time and one plain run for its wall time: [CPU ms, wall ms]. */
function timeOnce(bin, args, env, statFile) {
  const check = (r) => {
    if (r.status !== 0) throw new Error(`${bin} ${args.join(' ')} exited ${r.status}: ${r.stderr}`)
  }
  check(spawnSync('perf', ['stat', '-x,', '-e', 'task-clock', '-o', statFile, '--', process.execPath, bin, ...args], {cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe']}))
  const cpu = Number(/^([\d.]+),msec,task-clock/m.exec(readFileSync(statFile, 'utf8'))?.[1])
  const t0 = process.hrtime.bigint()
  check(spawnSync(process.execPath, [bin, ...args], {cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe']}))
  return [cpu, Number(process.hrtime.bigint() - t0) / 1e6]
}

/** `--version` loads no bundle: only the layer that answers it is timed on it. A gateway's variant is timed on a start. */
const isGateway = (variant) => variant === 'gateway' || Boolean(LAYERS[variant]?.gateway)
const commandsOf = (variant) =>
  Object.entries(COMMANDS).filter(([command]) =>
    isGateway(variant) ? command === 'start' : command !== 'start' && (command !== 'version' || variant === 'all' || variant === 'version-fast-path'),
  )

const shuffle = (xs) => xs.map((x) => [Math.random(), x]).sort((a, b) => a[0] - b[0]).map(([, x]) => x)

async function main() {
  const names = process.argv.slice(2).length > 0 ? process.argv.slice(2) : Object.keys(LAYERS)
  const runs = Number(process.env.BENCH_RUNS ?? 30)
  const bins = {all: makeVariant('all'), ...(names.some(isGateway) ? {gateway: makeVariant('gateway')} : {})}
  try {
    for (const name of names) {
      if (!LAYERS[name]) throw new Error(`no layer ${name}: ${Object.keys(LAYERS).join(', ')}`)
      bins[name] = makeVariant(name, LAYERS[name])
    }
  } finally {
    // The worktree's build as it was: the CLI's bundle, its cache, and the gateway's bundle (build-cli.js clears dist/bundle).
    node(['scripts/build-cli.js'])
    node(['scripts/train-cli-cache.js'])
    node(['scripts/build-gateway.js'])
  }
  await withSeededGateway(({url, token, work}) => {
    const env = {...process.env, PAYAPP_BASE_URL: url, PAYAPP_TOKEN: token, XDG_CONFIG_HOME: join(work, 'config'), PAYAPP_KEYCHAIN: 'off'}
    const statFile = join(mkdtempSync(join(tmpdir(), 'payapp-layers-')), 'stat')
    const times = {} // `${variant} ${command}` → [[cpu, wall] per round]
    for (const [variant, bin] of Object.entries(bins)) for (const [, args] of commandsOf(variant)) timeOnce(bin, args, env, statFile)
    for (let round = 0; round < runs; round++) {
      for (const variant of shuffle(Object.keys(bins))) {
        for (const [command, args] of commandsOf(variant)) (times[`${variant} ${command}`] ??= []).push(timeOnce(bins[variant], args, env, statFile))
      }
    }
    console.log(`\nWhat each layer buys: median over ${runs} interleaved rounds of (without it − full build), CPU ms (task-clock) / wall ms`)
    console.log(`  ${'layer'.padEnd(28)} ${Object.keys(COMMANDS).map((c) => c.padStart(20)).join('')}`)
    const row = (variant) =>
      Object.keys(COMMANDS)
        .map((command) => {
          const own = times[`${variant} ${command}`]
          if (!own) return '-'.padStart(20)
          const base = times[`${command === 'start' ? 'gateway' : 'all'} ${command}`]
          if (variant === 'all' || variant === 'gateway') return `${median(own.map((t) => t[0])).toFixed(1)} / ${median(own.map((t) => t[1])).toFixed(1)}`.padStart(20)
          const cpu = median(own.map((t, i) => t[0] - base[i][0]))
          const wall = median(own.map((t, i) => t[1] - base[i][1]))
          return `${cpu >= 0 ? '+' : ''}${cpu.toFixed(1)} / ${wall >= 0 ? '+' : ''}${wall.toFixed(1)}`.padStart(20)
        })
        .join('')
    const label = {all: 'full CLI build (absolute)', gateway: 'full gateway build (absolute)'}
    for (const variant of Object.keys(bins)) console.log(`  ${(label[variant] ?? variant).padEnd(28)} ${row(variant)}`)
    if (process.env.LAYERS_JSON) writeFileSync(process.env.LAYERS_JSON, JSON.stringify(times))
  })
  rmSync(VARIANTS_DIR, {recursive: true, force: true})
}

await main()
