/**
 * A private PostgreSQL server for tests and benchmarks: Debian's `postgresql` binaries, a fresh data
 * directory under the system's temp dir, its own port on 127.0.0.1, never the system-wide service. As root
 * (CI) the server runs as the `postgres` user, which PostgreSQL requires. `PAYAPP_TEST_DB` set to a URL
 * skips all this and uses that server instead.
 *
 *   node scripts/postgres-server.js        starts one, prints its URL, stops it on Ctrl-C
 */
import {execFileSync, spawnSync} from 'node:child_process'
import {appendFileSync, chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync} from 'node:fs'
import {createServer} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

/** The newest installed server's bin directory (/usr/lib/postgresql/<major>/bin); undefined when none is. */
export function postgresBin() {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const majors = readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'postgres'))).sort((a, b) => Number(b) - Number(a))
  return majors.length > 0 ? join(root, majors[0], 'bin') : undefined
}

export const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const {port} = server.address()
      server.close(() => resolve(port))
    })
  })

/**
 * Starts a server and creates the database `payapp`; resolves with its URL (TCP on 127.0.0.1), `socketUrl` (the
 * same database through the server's Unix socket), `database(name, {tcp})` (creates another, answers its URL) and a
 * `schedule(policy)` (puts its processes under the `batch` or the `normal` scheduling policy) and a `stop()` that
 * shuts it down and deletes its data directory; `pause()` and `resume()` stop it and start it again on the same data
 * (a restart as its clients see it). It starts under the batch policy unless `schedule` is 'normal'.
 * @param {{maxConnections?: number, settings?: string[], schedule?: 'batch' | 'normal', inside?: string[], address?: string}} [opts] `settings`: more `name=value` server settings (a bench's profiling);
 *   `inside`, a command prefix the server starts under (`ip netns exec NAME`: a network namespace, test/helpers/netns.ts), and `address`, the
 *   one it listens on there instead of 127.0.0.1 (`url`'s host), or several, comma-separated (`url`'s host is the first)
 * @returns {Promise<{url: string, socketUrl: string, database: (name: string, opts?: {tcp?: boolean}) => string, port: number, dir: string, data: string, schedule: (policy: 'batch' | 'normal') => void, pause: (mode?: 'fast' | 'immediate') => void, resume: () => void, stop: () => void}>}
 */
export async function startPostgres(opts = {}) {
  const bin = postgresBin()
  if (!bin) throw new Error('PostgreSQL is not installed: apt-get install postgresql (the tests start a private server of it)')
  const root = process.getuid?.() === 0
  const batch = (opts.schedule ?? 'batch') === 'batch' && hasChrt()
  const dir = mkdtempSync(join(tmpdir(), 'payapp-pg-'))
  const data = join(dir, 'data')
  if (root) {
    const {uid, gid} = userIds('postgres')
    chownSync(dir, uid, gid)
    chmodSync(dir, 0o700)
  }
  /** Runs one of the server's programs, as the `postgres` user when root; `batch` starts it under that policy. */
  const as = (cmd, args, options = {}, {batch: batched = false, inside = []} = {}) => {
    const [program, ...rest] = [...(batched ? ['chrt', '--batch', '0'] : []), ...inside, ...(root ? ['runuser', '-u', 'postgres', '--'] : []), join(bin, cmd), ...args]
    return execFileSync(program, rest, options)
  }
  as('initdb', ['-D', data, '-U', 'payapp', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync'], {stdio: 'ignore'})
  const port = await freePort()
  const address = opts.address ?? '127.0.0.1'
  // initdb trusts loopback only: a client reaching another address comes from that address's subnet.
  if (opts.address) appendFileSync(join(data, 'pg_hba.conf'), 'host all all samenet trust\n')
  // Durability as a test needs it (a killed gateway process, not a killed machine): no fsync.
  const settings = [
    `-p ${port}`,
    `-c listen_addresses=${address}`,
    `-k ${dir}`,
    `-c max_connections=${opts.maxConnections ?? 200}`,
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c full_page_writes=off',
    ...(opts.settings ?? []).map((s) => `-c ${s}`),
  ].join(' ')
  // Under the batch scheduling policy (docs/shared-gateway.md, "Scheduling"): the server's processes inherit it,
  // backends included, so a backend woken by a gateway's query does not preempt that gateway mid-turn.
  const start = () => as('pg_ctl', ['-D', data, '-o', settings, '-l', join(dir, 'log'), '-w', 'start'], {stdio: 'ignore'}, {batch, inside: opts.inside})
  start()
  let stopped = false
  /** Off between `pause()` and `resume()`. */
  let running = true
  const stop = () => {
    if (stopped) return
    stopped = true
    try {
      if (running) as('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop'], {stdio: 'ignore'})
    } catch (error) {
      // A server that stopped on its own: say why, from its log, before the directory goes.
      const log = existsSync(join(dir, 'log')) ? readFileSync(join(dir, 'log'), 'utf8').split('\n').slice(-15).join('\n') : '(no log)'
      error.message += `\nthe server's log ends:\n${log}`
      throw error
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  }
  try {
    as('createdb', ['-h', dir, '-p', String(port), '-U', 'payapp', 'payapp'], {stdio: 'ignore'})
  } catch (error) {
    stop()
    throw error
  }
  // The same server through its Unix socket (in `dir`): what a gateway on the same machine should use, since a
  // loopback TCP connection costs both sides the kernel's TCP path on every message (docs/shared-gateway.md).
  const socketUrl = `postgres://payapp@localhost:${port}/payapp?host=${encodeURIComponent(dir)}`
  const url = `postgres://payapp@${address.split(',')[0]}:${port}/payapp`
  /** Creates another database on the server; answers its URL, through the socket unless `tcp`. */
  const database = (name, {tcp = false} = {}) => {
    as('createdb', ['-h', dir, '-p', String(port), '-U', 'payapp', name], {stdio: 'ignore'})
    return (tcp ? url : socketUrl).replace(/\/payapp(\?|$)/, `/${name}$1`)
  }
  /** Puts the server's processes (the postmaster, which new backends inherit it from, and every running one) under `policy`. */
  const schedule = (policy) => {
    for (const pid of serverPids(data)) spawnSync('chrt', [policy === 'batch' ? '--batch' : '--other', '--pid', '0', pid], {stdio: 'ignore'})
  }
  /**
   * Shuts the server down, keeping its data for `resume()`: `fast` as a restart or a failover does (each session
   * told 57P01, then cut), `immediate` as a crash does (the sessions just cut).
   */
  const pause = (mode = 'fast') => {
    as('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop'], {stdio: 'ignore'})
    running = false
  }
  /** Starts the paused server again: the same data, port and socket. */
  const resume = () => {
    start()
    running = true
  }
  return {url, socketUrl, database, port, dir, data, schedule, pause, resume, stop}
}

/** A running server's processes, from its data directory: the postmaster first, then its children (backends among them), from /proc. */
export function serverPids(data) {
  const postmaster = readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0].trim()
  const children = readdirSync('/proc').filter((pid) => {
    try {
      return /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1] === postmaster
    } catch {
      return false // ended meanwhile
    }
  })
  return [postmaster, ...children]
}

/** Whether `chrt` (util-linux, on Linux) can start a process under the batch policy here. */
function hasChrt() {
  return spawnSync('chrt', ['--batch', '0', 'true'], {stdio: 'ignore'}).status === 0
}

function userIds(user) {
  const out = spawnSync('id', ['-u', user], {encoding: 'utf8'})
  const gid = spawnSync('id', ['-g', user], {encoding: 'utf8'})
  if (out.status !== 0) throw new Error(`no "${user}" user: is Debian's postgresql package installed?`)
  return {uid: Number(out.stdout.trim()), gid: Number(gid.stdout.trim())}
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const server = await startPostgres()
  console.log(server.url)
  const end = () => {
    server.stop()
    process.exit(0)
  }
  process.on('SIGINT', end)
  process.on('SIGTERM', end)
  setInterval(() => {}, 1 << 30)
}
