/**
 * CLI start-up, side by side in one run: `node -e 0`, `payapp --version`, `payapp --help` and
 * `payapp products list --json` against a gateway, interleaved round by round so machine load hits all
 * of them alike; each is the median of its runs, and the ratios to `node -e 0` are what we track.
 *
 * From scripts/bench.js: `await benchStartup({url, token, work})`. Alone (starts its own seeded gateway):
 * `npm run build && node scripts/bench/startup.js`. Env: BENCH_RUNS (runs per command, default 21).
 */
import {spawn} from 'node:child_process'
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {timeProcesses} from './processes.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const BIN = join(ROOT, 'bin', 'run.js')

/** Measures start-up against the gateway at `url` with an installation `token` allowed to read products. */
export async function benchStartup({url, token, work = mkdtempSync(join(tmpdir(), 'payapp-startup-')), runs = Number(process.env.BENCH_RUNS ?? 21)}) {
  const env = {...process.env, PAYAPP_BASE_URL: url, PAYAPP_TOKEN: token, XDG_CONFIG_HOME: join(work, 'config'), PAYAPP_KEYCHAIN: 'off'}
  return timeProcesses(
    'CLI start-up',
    {
      node: {args: ['-e', '0'], label: 'node -e 0'},
      version: {args: [BIN, '--version'], label: 'payapp --version', target: 1.2},
      help: {args: [BIN, '--help'], label: 'payapp --help', target: 2.0},
      products_list: {args: [BIN, 'products', 'list', '--json'], label: 'payapp products list --json', target: 2.0},
    },
    {runs, cwd: ROOT, env},
  )
}

/** Runs `fn({url, token, work})` against a seeded in-memory gateway of this build (also for startup-layers.js). */
export async function withSeededGateway(fn) {
  const work = mkdtempSync(join(tmpdir(), 'payapp-startup-'))
  const env = {...process.env, XDG_CONFIG_HOME: join(work, 'config'), PAYAPP_KEYCHAIN: 'off'}
  const gateway = spawn(process.execPath, [BIN, 'gateway', 'start', '--port', '0', '--db', ':memory:', '--seed', '--rate-limit', 'off', '--json', '--no-save-profile'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  try {
    const info = await new Promise((resolve, reject) => {
      let buf = ''
      gateway.stdout.on('data', (d) => {
        buf += d
        if (buf.includes('\n')) resolve(JSON.parse(buf.slice(0, buf.indexOf('\n'))))
      })
      gateway.on('exit', (code) => reject(new Error(`gateway exited ${code}`)))
    })
    return await fn({url: info.url, token: info.seed.installations.test.token, work})
  } finally {
    gateway.kill('SIGTERM')
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await withSeededGateway(benchStartup)
