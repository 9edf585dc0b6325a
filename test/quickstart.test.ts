import {spawn} from 'node:child_process'
import {createServer, type AddressInfo} from 'node:net'
import {join} from 'node:path'

import {expect} from 'chai'

import {ROOT, tempHome} from './helpers/cli.js'

/** The README's quick start, as a newcomer runs it: `npm run demo` (here with --exit so it stops). */
describe('quick start (npm run demo)', () => {
  it('starts the seeded gateway and lists its products with the CLI', async function () {
    this.timeout(60_000)
    const home = tempHome()
    const env = {
      PATH: process.env.PATH,
      HOME: home,
      XDG_CONFIG_HOME: join(home, 'config'),
      XDG_DATA_HOME: join(home, 'data'),
      PAYAPP_KEYCHAIN: 'off',
      PAYAPP_GATEWAY_PORT: '0',
      NO_COLOR: '1',
    }
    const child = spawn(process.execPath, [join(ROOT, 'scripts', 'demo.js'), '--exit'], {cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe']})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
    expect(code, stderr).to.equal(0)
    expect(stdout).to.match(/Gateway with a seeded demo store: http:\/\/127\.0\.0\.1:\d+/)
    expect(stdout).to.include('$ payapp products list --profile local')
    expect(stdout).to.match(/ID\s+NAME\s+ACTIVE/)
    expect(stdout).to.include('Classic T-Shirt')
    expect(stdout + stderr).not.to.match(/app_(test|live)_[0-9A-Za-z]{32}/)
  })

  it('on a busy port says what gateway start says (port in use, --port 0) and exits 2, not a SyntaxError', async function () {
    this.timeout(60_000)
    const busy = createServer()
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve))
    const port = (busy.address() as AddressInfo).port
    try {
      const home = tempHome()
      const env = {PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, 'config'), XDG_DATA_HOME: join(home, 'data'), PAYAPP_KEYCHAIN: 'off', PAYAPP_GATEWAY_PORT: String(port), NO_COLOR: '1'}
      const child = spawn(process.execPath, [join(ROOT, 'scripts', 'demo.js'), '--exit'], {cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe']})
      let stderr = ''
      child.stderr.on('data', (d) => (stderr += d))
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
      expect(stderr).to.equal(`Error: Port ${port} is in use: pass --port 0 for a free one, or another --port (npm run demo: PAYAPP_GATEWAY_PORT=0 npm run demo picks a free port)\n`)
      expect(code).to.equal(2)
    } finally {
      busy.close()
    }
  })
})
