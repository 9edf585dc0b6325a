#!/usr/bin/env node
/**
 * `npm run demo`: the quick start in one command. Starts the reference gateway with a seeded store
 * (in memory), saves its credentials to the profile "local", runs a CLI call against it, and keeps the
 * gateway running for you to explore until Ctrl-C. `--exit` stops after the CLI call (used by the tests).
 */
import {spawn, spawnSync} from 'node:child_process'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const BIN = join(ROOT, 'bin', 'run.js')
const exitAfter = process.argv.includes('--exit')
const port = process.env.PAYAPP_GATEWAY_PORT ?? '4242'

const gateway = spawn(process.execPath, [BIN, 'gateway', 'start', '--seed', '--db', ':memory:', '--port', port, '--json'], {
  cwd: ROOT,
  stdio: ['ignore', 'pipe', 'inherit'],
})
// The ready line is one JSON line with `url`; an error is a multi-line JSON envelope, read whole once stdout closes.
let buffer = ''
let ready = false
gateway.on('close', (code) => {
  if (!code) return
  let message
  try {
    message = ready ? undefined : JSON.parse(buffer).error?.message
  } catch {
    // Not an envelope: shown below as the gateway printed it.
  }
  if (message) console.error(`Error: ${message}${port !== '0' ? ' (npm run demo: PAYAPP_GATEWAY_PORT=0 npm run demo picks a free port)' : ''}`)
  else console.error(`${ready ? '' : buffer}gateway exited with ${code}`)
  process.exit(code)
})

/** The ready line's fields, or undefined while stdout holds no complete ready line yet. */
function readyLine() {
  const nl = buffer.indexOf('\n')
  if (nl < 0) return undefined
  try {
    const line = JSON.parse(buffer.slice(0, nl))
    return typeof line.url === 'string' ? line : undefined
  } catch {
    return undefined
  }
}

gateway.stdout.on('data', function onData(chunk) {
  buffer += chunk
  const line = readyLine()
  if (!line) return
  ready = true
  gateway.stdout.off('data', onData)
  gateway.stdout.resume()
  const {url} = line
  console.log(`Gateway with a seeded demo store: ${url} (credentials saved to profile "local")\n`)
  const run = (args) => {
    console.log(`$ payapp ${args.join(' ')}`)
    const r = spawnSync(process.execPath, [BIN, ...args], {cwd: ROOT, stdio: 'inherit'})
    console.log('')
    return r.status ?? 1
  }
  const status = Math.max(run(['store', '--profile', 'local']), run(['products', 'list', '--profile', 'local']))
  if (exitAfter || status !== 0) {
    gateway.kill('SIGTERM')
    gateway.once('exit', () => process.exit(status))
    return
  }
  console.log('Try next (in another terminal):')
  console.log('  payapp products get <PRODUCT_ID> --profile local')
  console.log('  payapp products list --profile local --json')
  console.log('  payapp payments list --profile local --env live')
  console.log('The gateway keeps running; press Ctrl-C to stop it.')
})

for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => gateway.kill('SIGTERM'))
