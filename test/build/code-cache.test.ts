import {expect} from 'chai'
import {spawn, spawnSync} from 'node:child_process'
import {once} from 'node:events'
import {cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {type AddressInfo} from 'node:net'
import {createServer} from 'node:http'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {ROOT} from '../helpers/cli.js'

/** Runs a CommonJS snippet in a fresh node (this one's binary) from the package root; its stdout. */
function node(code: string, env: Record<string, string> = {}): string {
  const home = mkdtempSync(join(tmpdir(), 'payapp-cache-'))
  try {
    const r = spawnSync(process.execPath, ['-e', code], {cwd: ROOT, env: {...process.env, XDG_CONFIG_HOME: home, PAYAPP_KEYCHAIN: 'off', ...env}, encoding: 'utf8'})
    expect(r.status, r.stderr).to.equal(0)
    return r.stdout
  } finally {
    rmSync(home, {recursive: true, force: true})
  }
}

const nodeHasCompileCache = (() => {
  const [major, minor] = process.versions.node.split('.').map(Number) as [number, number]
  return major > 22 || (major === 22 && minor >= 1)
})()

/** How the CLI's bundle was compiled in a fresh process: Node's compile cache, the build's V8 cache, or none. */
const cacheUse = (env: Record<string, string> = {}) =>
  node(
    "const l = require('./dist/cli/bundle-loader.cjs'); l.loadCli(); process.stdout.write(require('./dist/startup/code-cache.cjs').cacheUse(l.BUNDLE_FILE))",
    env,
  )

describe('the CLI bundle’s code cache (src/startup/code-cache.cts)', function () {
  this.timeout(30_000)
  before(function () {
    // `npm test` builds first; a bare mocha run without a build has no bundle.
    if (!existsSync(join(ROOT, 'dist/bundle/payapp.cjs'))) this.skip()
  })

  it(nodeHasCompileCache ? "uses Node's own compile cache on this Node (≥ 22.1)" : 'uses the cache the build trained, and V8 accepts it, on this Node (20)', function () {
    if (!nodeHasCompileCache) {
      expect(cacheUse()).to.equal('accepted')
      return
    }
    const dir = mkdtempSync(join(tmpdir(), 'payapp-compile-cache-'))
    try {
      expect(cacheUse({NODE_COMPILE_CACHE: dir})).to.equal('node')
      expect(readdirSync(dir), 'Node wrote a cache').not.to.be.empty
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })

  it('runs as a plain CommonJS module too, as Node ≥ 22 loads it (its dynamic imports without the loader’s parameter)', function () {
    // `help` is an adopted plugin command, which the bundle loads with a dynamic import().
    const out = node("require('./dist/bundle/payapp.cjs').run(process.cwd(), ['help', 'products'])")
    expect(out).to.include('Catalogue products.').and.include('USAGE')
  })
})

describe('the CLI bundle leaves the gateway to its own bundle (scripts/build-cli.js, gateway-from-its-bundle)', function () {
  this.timeout(30_000)
  before(function () {
    if (!existsSync(join(ROOT, 'dist/bundle/payapp.cjs'))) this.skip()
  })

  it("has none of the gateway's code, which every CLI call would read and compile; without the gateway's bundle, gateway start says so (exit 1)", function () {
    // The PostgreSQL schema: in the gateway's bundle, so its absence from the CLI's means something.
    const marker = 'CREATE TABLE IF NOT EXISTS objects'
    expect(readFileSync(join(ROOT, 'dist/bundle/gateway.cjs'), 'latin1')).to.include(marker)
    expect(readFileSync(join(ROOT, 'dist/bundle/payapp.cjs'), 'latin1')).not.to.include(marker)

    // A copy of the package without dist/bundle/gateway.cjs: the error names it, not a stack trace.
    const copy = mkdtempSync(join(tmpdir(), 'payapp-no-gateway-bundle-'))
    try {
      for (const entry of ['bin', 'dist', 'package.json', 'oclif.manifest.json']) cpSync(join(ROOT, entry), join(copy, entry), {recursive: true, preserveTimestamps: true})
      symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'))
      rmSync(join(copy, 'dist/bundle/gateway.cjs'))
      const r = spawnSync(process.execPath, [join(copy, 'bin/run.js'), 'gateway', 'start', '--db', ':memory:', '--port', '0', '--json'], {
        cwd: copy,
        env: {...process.env, XDG_CONFIG_HOME: join(copy, 'config'), PAYAPP_KEYCHAIN: 'off'},
        encoding: 'utf8',
      })
      expect(r.status, r.stderr).to.equal(1)
      expect(JSON.parse(r.stdout).error.message).to.equal("payapp's gateway bundle (dist/bundle/gateway.cjs) is missing: run npm run build")
    } finally {
      rmSync(copy, {recursive: true, force: true})
    }
  })
})

describe('what a CLI call that sends a request loads beside Node itself', function () {
  this.timeout(30_000)
  before(function () {
    if (!existsSync(join(ROOT, 'dist/bundle/payapp.cjs'))) this.skip()
  })

  it("neither Node's ES module loader (the builtins are required), fs/promises (credentials read from their file), nor perf_hooks (the SDK's clock)", async function () {
    const home = mkdtempSync(join(tmpdir(), 'payapp-modules-'))
    // A stand-in API: an empty list for `products list`, and the merchant refused (403), which login accepts.
    const server = createServer((req, res) => {
      const merchant = req.url === '/v1/app/merchant'
      res.writeHead(merchant ? 403 : 200, {'content-type': 'application/json', 'x-request-id': 'req_modules'})
      res.end(merchant ? '{"error":{"type":"insufficient_scope","message":"no merchant:read","request_id":"req_modules"}}' : '{"object":"list","has_more":false,"data":[]}')
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    try {
      const out = join(home, 'modules.json')
      const probe = join(home, 'probe.cjs')
      writeFileSync(probe, `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(process.moduleLoadList)))\n`)
      const env = {...process.env, XDG_CONFIG_HOME: join(home, 'config'), PAYAPP_KEYCHAIN: 'off', PAYAPP_PROFILE: 'probe'}
      const run = async (args: string[]) => {
        const child = spawn(process.execPath, ['--require', probe, ...args], {cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe']})
        let stderr = ''
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk))
        const [status] = (await once(child, 'exit')) as [number]
        expect(status, stderr).to.equal(0)
        return JSON.parse(readFileSync(out, 'utf8')) as string[]
      }
      const baseline = new Set(await run(['-e', '0']))
      // The token in the credentials file (no keychain), as a login without one stores it.
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      await run([join(ROOT, 'bin/run.js'), 'login', '--env', 'test', '--token', 'app_test_modules0000000000000000', '--base-url', base])
      const loaded = (await run([join(ROOT, 'bin/run.js'), 'products', 'list', '--json'])).filter((m) => !baseline.has(m))
      expect(loaded, 'the request went out').to.include('NativeModule http')
      expect(loaded.filter((m) => /esm\/module_job|^NativeModule fs\/promises$|^NativeModule perf_hooks$|readline/.test(m))).to.deep.equal([])
    } finally {
      server.close()
      rmSync(home, {recursive: true, force: true})
    }
  })
})
