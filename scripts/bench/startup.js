/**
 * CLI start-up, side by side in one run: `node -e 0`, `payapp --version`, `payapp --help` and
 * `payapp products list --json` against a gateway, interleaved round by round so machine load hits all
 * of them alike; each is the median of its runs, and the ratios to `node -e 0` are what we track.
 *
 * From scripts/bench.js: `await benchStartup({url, token, work})`. Alone (starts its own seeded gateway):
 * `npm run build && node scripts/bench/startup.js`. Env: BENCH_RUNS (runs per command, default 21).
 */
import {spawn, spawnSync} from 'node:child_process'
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const BIN = join(ROOT, 'bin', 'run.js')

const TARGETS = {version: 1.2, help: 2.0, products_list: 2.0}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

function timeOnce(args, env) {
  const t0 = process.hrtime.bigint()
  const r = spawnSync(process.execPath, args, {cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe']})
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr}`)
  return ms
}

/** Measures start-up against the gateway at `url` with an installation `token` allowed to read products. */
export async function benchStartup({url, token, work = mkdtempSync(join(tmpdir(), 'payapp-startup-')), runs = Number(process.env.BENCH_RUNS ?? 21)}) {
  const env = {...process.env, PAYAPP_BASE_URL: url, PAYAPP_TOKEN: token, XDG_CONFIG_HOME: join(work, 'config'), PAYAPP_KEYCHAIN: 'off'}
  const commands = {
    node: ['-e', '0'],
    version: [BIN, '--version'],
    help: [BIN, '--help'],
    products_list: [BIN, 'products', 'list', '--json'],
  }
  const times = Object.fromEntries(Object.keys(commands).map((name) => [name, []]))
  for (const args of Object.values(commands)) timeOnce(args, env) // warm the page cache
  for (let i = 0; i < runs; i++) for (const [name, args] of Object.entries(commands)) times[name].push(timeOnce(args, env))

  const ms = Object.fromEntries(Object.entries(times).map(([name, xs]) => [name, median(xs)]))
  const ratio = (name) => ms[name] / ms.node
  const line = (label, name) => {
    const target = TARGETS[name] ? ` (target ≤ ${TARGETS[name].toFixed(1)}×)` : ''
    return `  ${label.padEnd(32)} ${ms[name].toFixed(0).padStart(6)} ms   ${ratio(name).toFixed(2)}×${target}`
  }
  console.log(`\nCLI start-up (median of ${runs} interleaved runs each)`)
  console.log(line('node -e 0', 'node'))
  console.log(line('payapp --version', 'version'))
  console.log(line('payapp --help', 'help'))
  console.log(line('payapp products list --json', 'products_list'))
  return {
    runs,
    node_ms: ms.node,
    version_ms: ms.version,
    version_ratio: ratio('version'),
    help_ms: ms.help,
    help_ratio: ratio('help'),
    products_list_ms: ms.products_list,
    products_list_ratio: ratio('products_list'),
  }
}

/** Alone: a seeded in-memory gateway of this build, then the measurement. */
async function main() {
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
    await benchStartup({url: info.url, token: info.seed.installations.test.token, work})
  } finally {
    gateway.kill('SIGTERM')
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main()
