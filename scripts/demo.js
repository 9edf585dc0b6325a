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
gateway.on('exit', (code) => {
  if (code) {
    console.error(`gateway exited with ${code}${port !== '0' ? ` (is port ${port} in use? try PAYAPP_GATEWAY_PORT=0 npm run demo)` : ''}`)
    process.exit(code)
  }
})

let buffer = ''
gateway.stdout.on('data', function onData(chunk) {
  buffer += chunk
  const nl = buffer.indexOf('\n')
  if (nl < 0) return
  gateway.stdout.off('data', onData)
  gateway.stdout.resume()
  const {url} = JSON.parse(buffer.slice(0, nl))
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
