/**
 * A shared gateway on this machine, for tests and benchmarks: N `payapp gateway start` processes on one
 * database (a SQLite file or a postgres:// URL) behind HAProxy running docs/shared-gateway/haproxy.cfg, its
 * ports replaced by free ones. Everything started here is a child process, stopped by `stop()` (and killed
 * if this process exits first).
 */
import {spawn} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {createInterface} from 'node:readline'
import {fileURLToPath} from 'node:url'

import {freePort} from './postgres-server.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const BIN = join(ROOT, 'bin', 'run.js')
export const HAPROXY = '/usr/sbin/haproxy'
/** The niceness docs/shared-gateway.md runs HAProxy at on a machine it shares with the gateway processes. */
export const HAPROXY_NICE = 5
export const HAPROXY_CONFIG = join(ROOT, 'docs', 'shared-gateway', 'haproxy.cfg')
const SHARED_GATEWAY_DOC = join(ROOT, 'docs', 'shared-gateway.md')

/**
 * The doc's variant of the balancer for a machine with fewer cores than gateway processes (docs/shared-gateway.md,
 * the block after `<!-- haproxy: small machine -->`): its `balance` line and the options of each of its `server`
 * lines, in order, as `startBalancer` takes them (`{balance, servers}`). Read from the doc, so the doc's lines are
 * the ones tests and benchmarks run.
 * @returns {{balance: string, servers: string[]}}
 */
export function smallMachineVariant() {
  const doc = readFileSync(SHARED_GATEWAY_DOC, 'utf8')
  const block = /<!-- haproxy: small machine -->\s*```[^\n]*\n([\s\S]*?)```/.exec(doc)?.[1]
  if (!block) throw new Error(`${SHARED_GATEWAY_DOC} has no block after "<!-- haproxy: small machine -->"`)
  const balance = /^\s*balance (\S+)\s*$/m.exec(block)?.[1]
  const servers = [...block.matchAll(/^\s*server gw\d+ 127\.0\.0\.1:\d+(.*)$/gm)].map((m) => m[1].trim())
  if (!balance || servers.length === 0) throw new Error(`the small machine's block of ${SHARED_GATEWAY_DOC} has no balance or server line:\n${block}`)
  return {balance, servers}
}

/** Every child any cluster started, killed if this process exits without stopping them. */
const running = new Set()
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL')
})

function track(child) {
  running.add(child)
  child.once('exit', () => running.delete(child))
  return child
}

/**
 * docs/shared-gateway/haproxy.cfg with the balancer on `port` and one `server` line per backend: a port on
 * 127.0.0.1, or `host:port` (the doc's lines are the model: their options are kept).
 * @param {number} port
 * @param {(number | string)[]} backends
 * @param {{balance?: string, server?: string, servers?: string[], threads?: number}} [opts] a variant (see `startBalancer`)
 */
export function haproxyConfig(port, backends, {balance, server = '', servers = [], threads} = {}) {
  const lines = readFileSync(HAPROXY_CONFIG, 'utf8').split('\n')
  const serverLine = /^(\s*)server gw\d+ 127\.0\.0\.1:\d+(.*)$/
  const model = lines.find((l) => serverLine.test(l))
  if (!model) throw new Error(`${HAPROXY_CONFIG} has no "server gwN 127.0.0.1:PORT" line`)
  const [, indent, rest] = serverLine.exec(model)
  const out = []
  for (const line of lines) {
    if (line === model) {
      const options = (i) => [server, servers[i]].filter(Boolean).map((o) => ` ${o}`).join('')
      out.push(...backends.map((p, i) => `${indent}server gw${i + 1} ${typeof p === 'number' ? `127.0.0.1:${p}` : p}${rest}${options(i)}`))
    } else if (!serverLine.test(line))
      out.push(
        line
          .replace(/^(\s*bind 127\.0\.0\.1:)\d+/, `$1${port}`)
          .replace(/^(\s*balance )\S+/, (all, head) => (balance ? head + balance : all))
          .replace(/^(\s*nbthread )\d+/, (all, head) => (threads ? head + threads : all)),
      )
  }
  return out.join('\n')
}

const exited = (child) => (child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve())))

/** SIGTERM, then SIGKILL if the child is still there after `ms`. */
async function terminate(child, ms = 5000) {
  if (child.exitCode !== null || child.signalCode !== null) return
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), ms)
  await exited(child)
  clearTimeout(timer)
}

/**
 * `payapp gateway start --port 0 --json` on `db`, resolved once its first stdout line gives its URL.
 * `bin`: another build's bin/run.js (a benchmark's baseline); this checkout's by default. `inside`: a command
 * prefix it runs under (`ip netns exec NAME`: its own network namespace, test/helpers/netns.ts; give it
 * `--host` with the namespace's address in `args`).
 * @param {{db: string, adminKey: string, args?: string[], home?: string, name?: string, port?: number, env?: Record<string, string>, bin?: string, inside?: string[]}} opts
 */
export function startGateway({db, adminKey, args = ['--rate-limit', 'off'], home, name = 'gateway', port = 0, env = {}, bin = BIN, inside = []}) {
  const ownHome = home === undefined
  home ??= mkdtempSync(join(tmpdir(), 'payapp-gateway-'))
  // `ip netns exec` execs the command: the child's pid is the gateway's.
  const command = [...inside, process.execPath, bin, 'gateway', 'start', '--port', String(port), '--db', db, '--admin-key', adminKey, '--json', '--no-save-profile', ...args]
  const child = track(
    spawn(command[0], command.slice(1), {
      cwd: home,
      env: {PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, 'config'), XDG_DATA_HOME: join(home, 'data'), PAYAPP_KEYCHAIN: 'off', ...env},
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  )
  if (ownHome) child.once('exit', () => rmSync(home, {recursive: true, force: true}))
  let output = ''
  child.stderr.on('data', (d) => (output += d))
  return new Promise((resolve, reject) => {
    // The ready line is one JSON object with `url`; anything else (an error, printed as --json does) ends in an exit.
    createInterface({input: child.stdout}).on('line', (line) => {
      output += line + '\n'
      let url
      try {
        url = JSON.parse(line).url
      } catch {
        return
      }
      if (typeof url !== 'string') return
      resolve({
        url,
        pid: child.pid,
        name,
        child,
        async kill(signal = 'SIGTERM') {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal)
          await exited(child)
        },
      })
    })
    child.once('exit', (code, signal) => reject(new Error(`gateway start --db ${db} exited ${code ?? signal} before it was ready: ${output}`)))
  })
}

/** Resolves once the balancer answers through a process (its `X-Payapp-Process` header), not with its own 503. */
async function balancerReady(url, haproxy, output) {
  const deadline = Date.now() + 15_000
  for (;;) {
    if (haproxy.exitCode !== null) throw new Error(`haproxy exited ${haproxy.exitCode}: ${output()}`)
    try {
      const res = await fetch(`${url}/health`)
      await res.arrayBuffer()
      if (res.headers.has('x-payapp-process')) return
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`haproxy at ${url} routed nothing within 15 s: ${output()}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/**
 * HAProxy on a free port with the doc's config over `backends` (ports on 127.0.0.1, or `host:port`), in the foreground as a
 * child; resolves once it routes a request to one of them.
 * @param {(number | string)[]} backends
 * @param {{balance?: string, server?: string, servers?: string[], threads?: number, nice?: number}} [opts] a variant of
 *   the config: another `balance` algorithm, more options on each `server` line (e.g. `maxconn 8`) or on the
 *   i-th (`servers[i]`: `smallMachineVariant()`'s), another `nbthread`; and another niceness than the doc's (`nice -n 5`)
 */
export async function startBalancer(backends, opts = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'payapp-haproxy-'))
  const port = await freePort()
  const config = join(dir, 'haproxy.cfg')
  writeFileSync(config, haproxyConfig(port, backends, opts))
  // -db: stay in the foreground, as a child this process can stop. `nice` execs HAProxy: the child's pid is its.
  const nice = opts.nice ?? HAPROXY_NICE
  const command = [...(nice ? ['nice', '-n', String(nice)] : []), HAPROXY, '-db', '-f', config]
  const child = track(spawn(command[0], command.slice(1), {stdio: ['ignore', 'pipe', 'pipe']}))
  let output = ''
  child.stdout.on('data', (d) => (output += d))
  child.stderr.on('data', (d) => (output += d))
  const url = `http://127.0.0.1:${port}`
  const stop = async () => {
    await terminate(child)
    rmSync(dir, {recursive: true, force: true})
  }
  try {
    await balancerReady(url, child, () => output)
  } catch (error) {
    await stop()
    throw error
  }
  return {url, pid: child.pid, stop}
}

/**
 * Starts `processes` gateway processes on `db` with one admin key, and HAProxy in front of them. `dbs[i]`, where
 * given, is process i's URL of that database instead (a test's way to it through a relay it can cut).
 * @param {{db: string, dbs?: string[], processes?: number, args?: string[], adminKey?: string, env?: Record<string, string>, bin?: string, balance?: string, server?: string, servers?: string[], threads?: number, nice?: number}} opts
 */
export async function startCluster({db, dbs = [], processes: count = 3, args = ['--rate-limit', 'off'], adminKey = `adm_cluster_${randomBytes(12).toString('hex')}`, env = {}, bin = BIN, balance, server, servers, threads, nice}) {
  const home = mkdtempSync(join(tmpdir(), 'payapp-cluster-'))
  const processes = []
  const others = []
  let balancer
  let extra = 0
  const stop = async () => {
    await Promise.all([...(balancer ? [balancer.stop()] : []), ...[...processes, ...others].map((p) => terminate(p.child))])
    rmSync(home, {recursive: true, force: true})
  }
  try {
    // All at once, as a deployment restarts them: creating the schema must be safe when several do it together.
    const started = await Promise.allSettled(Array.from({length: count}, (_, i) => startGateway({db: dbs[i] ?? db, adminKey, args, env, home, bin, name: `gw${i + 1}`})))
    // Those that started are stopped with the rest if another failed.
    for (const s of started) if (s.status === 'fulfilled') processes.push(s.value)
    const failed = started.find((s) => s.status === 'rejected')
    if (failed) throw failed.reason
    balancer = await startBalancer(
      processes.map((p) => Number(new URL(p.url).port)),
      {balance, server, servers, threads, nice},
    )
    return {
      url: balancer.url,
      balancerPid: balancer.pid,
      adminKey,
      db,
      processes,
      async restart(i, signal = 'SIGKILL') {
        const old = processes[i]
        await old.kill(signal)
        others.push(old)
        // The same port: the balancer's config names it, and its health check brings the process back.
        processes[i] = await startGateway({db: dbs[i] ?? db, adminKey, args, env, home, bin, name: old.name, port: Number(new URL(old.url).port)})
        return processes[i]
      },
      async startProcess() {
        const p = await startGateway({db, adminKey, args, env, home, bin, name: `extra${++extra}`})
        others.push(p)
        return p
      },
      stop,
    }
  } catch (error) {
    await stop()
    throw error
  }
}
