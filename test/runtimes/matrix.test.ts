/**
 * The SDK where apps run it: Node 20 (the suite's), 22 and 24 (ES module and CommonJS apps, and the CLI), Deno 2, Bun 1 and
 * workerd, each against a real gateway over HTTP (runtimes.ts installs them from the npm registry). Each runs
 * scenario.mjs: a list that pages, an idempotent create, a typed error, webhook verification.
 */
import {expect} from 'chai'
import {execFile, spawn, type ChildProcess} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {createServer} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {promisify} from 'node:util'

import {build} from 'esbuild'

import {signWebhookPayload} from '@payapp/sdk/webhooks-node'

import {BIN, cliEnv, tempHome} from '../helpers/cli.js'
import {TestGateway, type Account} from '../helpers/gateway.js'
import {ROOT, RUNTIMES, ensureAddon, ensureRuntimes, prepareRuntimes} from './runtimes.js'

const run = promisify(execFile)
// As mocha loads this file, before the run's first test: a first run's installs and builds go on meanwhile (in a
// parallel run the main process has started them, and this worker waits for them: runtimes.ts).
prepareRuntimes()
const HERE = join(ROOT, 'test', 'runtimes')

interface Outcome {
  version: string
  list: {firstPage: number; hasMore: boolean; all: number}
  create: {sameId: boolean; id: string}
  error: {notFound: boolean; payapp: boolean; code: string; status: number; requestId: boolean}
  webhook: {id: string; tamperedRefused: boolean; sync?: string}
}

describe('runtimes: the SDK in Node 20/22/24, Deno, Bun and workerd against a real gateway', function () {
  this.timeout(120_000)
  let gw: TestGateway
  let acct: Account
  let products: number
  let n = 0
  const config = () => {
    const webhook = signWebhookPayload({id: 'evt_rt', object: 'event', type: 'product.created', livemode: false, created: 1, data: {object: {}}}, 'whsec_runtime')
    return {baseUrl: gw.url, token: acct.token, idempotencyKey: `runtime-${++n}-${Date.now()}`, webhook: {...webhook, secret: 'whsec_runtime'}}
  }

  before(async function () {
    this.timeout(300_000)
    if (!existsSync(join(ROOT, 'packages/sdk/dist/index.js'))) throw new Error('build first: npm run build')
    const seconds = await ensureRuntimes()
    if (seconds > 0) console.log(`      (installed the runtimes from the npm registry in ${seconds} s)`)
    gw = await TestGateway.start()
    acct = await gw.account('test')
    for (const name of ['Mug', 'Tee', 'Cap']) await acct.app('POST', '/products', {body: {name}})
    products = 3
  })
  after(() => gw?.close())

  /** The scenario's results, checked the same way for every runtime; each run adds one product. */
  function expectScenario(out: Outcome, sync: boolean) {
    expect(out.version).to.match(/^\d+\.\d+\.\d+/)
    expect(out.list.firstPage).to.equal(2)
    expect(out.list.hasMore).to.equal(true)
    expect(out.list.all).to.equal(products)
    expect(out.create.sameId, 'the same idempotency key twice gives the same product').to.equal(true)
    expect(out.error).to.deep.equal({notFound: true, payapp: true, code: 'resource_missing', status: 404, requestId: true})
    expect(out.webhook).to.deep.include({id: 'evt_rt', tamperedRefused: true})
    if (sync) expect(out.webhook.sync).to.equal('evt_rt')
    products++
  }

  async function runApp(cmd: string, args: string[]): Promise<Outcome> {
    const {stdout} = await run(cmd, args, {cwd: HERE, env: {PATH: process.env.PATH, HOME: tmpdir(), PAYAPP_SCENARIO: JSON.stringify(config()), NO_COLOR: '1'}})
    return JSON.parse(stdout.trim().split('\n').at(-1)!) as Outcome
  }

  const NODES = {node20: process.execPath, node22: RUNTIMES.node22, node24: RUNTIMES.node24}
  for (const node of ['node20', 'node22', 'node24'] as const) {
    describe(node, () => {
      it('an ES module app: import @payapp/sdk', async () => {
        expectScenario(await runApp(NODES[node], ['app.mjs']), true)
      })

      it('a CommonJS app: require("@payapp/sdk")', async () => {
        expectScenario(await runApp(NODES[node], ['app.cjs']), true)
      })

      it('the CLI: products list against the gateway', async () => {
        const env = cliEnv(tempHome(), {PAYAPP_BASE_URL: gw.url, PAYAPP_TOKEN: acct.token})
        const {stdout} = await run(NODES[node], [BIN, 'products', 'list', '--all', '--json'], {cwd: ROOT, env})
        const listed = JSON.parse(stdout) as {name: string}[] | {data: {name: string}[]}
        const names = (Array.isArray(listed) ? listed : listed.data).map((p) => p.name)
        expect(names).to.include.members(['Mug', 'Tee', 'Cap'])
      })

      if (node === 'node22') {
        it('gateway start, with better-sqlite3 built for this Node (the Node 20 build is refused)', async function () {
          this.timeout(900_000)
          const modules = await ensureAddon(node)
          const refused = await run(NODES[node], [BIN, ...GATEWAY_START], {cwd: ROOT, env: cliEnv(tempHome()), timeout: 60_000}).then(
            () => '',
            (err: {stderr?: string; stdout?: string}) => `${err.stdout ?? ''}${err.stderr ?? ''}`,
          )
          expect(refused).to.match(/NODE_MODULE_VERSION|better_sqlite3|compiled against a different Node/)
          const gateway = await startGatewayOn(NODES[node], modules)
          expect(gateway.addonLoaded(), 'better-sqlite3 serves the database on Node 22').to.equal(true)
          expect(await gateway.stop()).to.equal(0)
        })
      }

      if (node === 'node24') {
        // better-sqlite3 12 built against Node >= 24.19's headers aborts the process when V8 collects one of its
        // Statements outside a context (node::ObjectWrap's cleanup hook: "Assertion failed: (env) != nullptr"), about
        // one start in four here; src/gateway/storage/sqlite-driver.ts opens node:sqlite there instead.
        it('gateway start on Node 24.19+: node:sqlite, never the better-sqlite3 addon an npm install builds (it aborts there)', async function () {
          this.timeout(900_000)
          const modules = await ensureAddon(node)
          for (const addon of [modules, undefined]) {
            const gateway = await startGatewayOn(NODES[node], addon)
            await gateway.load(300)
            expect(gateway.addonLoaded(), 'better_sqlite3.node is mapped into the gateway').to.equal(false)
            expect(await gateway.stop(), gateway.stderr()).to.equal(0)
          }
        })

        it("the gateway's storage suites through node:sqlite (invariants, idempotency, unique keys, files' bytes, WAL checkpoints)", async function () {
          this.timeout(300_000)
          const suites = ['invariants', 'idempotency', 'price-lookup-keys', 'variant-keys', 'sqlite-storage', 'files', 'platform'].map((name) => `test/gateway/${name}.test.ts`)
          const {stdout} = await run(NODES[node], [join(ROOT, 'node_modules/mocha/bin/mocha.js'), '--reporter', 'dot', ...suites], {cwd: ROOT, env: {...process.env, PAYAPP_SQLITE_DRIVER: undefined}, maxBuffer: 16 * 1024 * 1024})
          expect(stdout).to.match(/\d+ passing/).and.not.match(/failing/)
        })
      }
    })
  }

  it('AWS Lambda shape: an ES module handler bundled to CommonJS by esbuild, on Node 22', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'payapp-lambda-'))
    await build({entryPoints: [join(HERE, 'lambda.mjs')], bundle: true, format: 'cjs', platform: 'node', target: 'node20', outfile: join(dir, 'index.js'), logLevel: 'warning'})
    const call = "require('./index.js').handler(JSON.parse(process.env.PAYAPP_SCENARIO)).then((out) => console.log(JSON.stringify(out)))"
    const {stdout} = await run(RUNTIMES.node22, ['-e', call], {cwd: dir, env: {PATH: process.env.PATH, PAYAPP_SCENARIO: JSON.stringify(config())}})
    expectScenario(JSON.parse(stdout) as Outcome, false)
  })

  it('Deno 2 (npm package deno): an ES module app with node_modules, no permission beyond net, env and read', async () => {
    expectScenario(await runApp(RUNTIMES.deno, ['run', '--allow-net', '--allow-env=PAYAPP_SCENARIO', '--allow-read', 'app.mjs']), true)
  })

  it('Bun 1 (npm package bun): an ES module app', async () => {
    expectScenario(await runApp(RUNTIMES.bun, ['app.mjs']), true)
  })

  describe('workerd (npm package workerd), nodejs_compat on and off', () => {
    for (const flags of [['nodejs_compat'], []]) {
      it(`a Worker bundled by esbuild for workerd${flags.length ? ' with nodejs_compat' : ''}`, async () => {
        const dir = mkdtempSync(join(tmpdir(), 'payapp-workerd-'))
        await build({entryPoints: [join(HERE, 'worker.mjs')], bundle: true, format: 'esm', platform: 'browser', conditions: ['workerd', 'worker', 'browser'], outfile: join(dir, 'worker.js'), logLevel: 'warning'})
        const port = await freePort()
        writeFileSync(join(dir, 'config.capnp'), workerdConfig(port, flags))
        const workerd = spawn(RUNTIMES.workerd, ['serve', join(dir, 'config.capnp')], {cwd: dir, stdio: ['ignore', 'ignore', 'pipe']})
        let stderr = ''
        workerd.stderr!.on('data', (d) => (stderr += d))
        try {
          const res = await untilAnswered(`http://127.0.0.1:${port}/`, JSON.stringify(config()), workerd)
          const out = (await res.json()) as Outcome & {failed?: string}
          expect(out.failed, stderr).to.equal(undefined)
          expectScenario(out, false)
        } finally {
          workerd.kill()
        }
      })
    }
  })
})

const GATEWAY_START = ['gateway', 'start', '--port', '0', '--db', ':memory:', '--json', '--no-save-profile']

/**
 * `payapp gateway start` on `node`, its better-sqlite3 resolved from `modules` (an install built for that Node, by
 * addon-preload.cjs) or else from the checkout; resolves once it answers an admin call.
 */
async function startGatewayOn(node: string, modules?: string) {
  const preload = modules ? ['--require', join(HERE, 'addon-preload.cjs')] : []
  const gateway = spawn(node, [...preload, BIN, ...GATEWAY_START], {cwd: ROOT, env: cliEnv(tempHome(), modules ? {PAYAPP_TEST_ADDON_MODULES: modules} : {}), stdio: ['ignore', 'pipe', 'pipe']})
  let stderr = ''
  gateway.stderr!.on('data', (d) => (stderr += d))
  const exited = new Promise<number | null>((resolve) => gateway.on('exit', (code, signal) => resolve(code ?? (signal === 'SIGABRT' ? 134 : null))))
  try {
    const {url, admin_key: adminKey} = JSON.parse(await firstLine(gateway)) as {url: string; admin_key: string}
    const merchant = () => fetch(`${url}/_admin/merchants`, {method: 'POST', headers: {authorization: `Bearer ${adminKey}`, 'content-type': 'application/json'}, body: '{}'})
    const res = await merchant()
    expect(res.status, await res.clone().text()).to.equal(201)
    expect(((await res.json()) as {id: string}).id).to.match(/^mch_/)
    return {
      stderr: () => stderr,
      /** Creates `n` merchants, 8 at a time. */
      async load(n: number) {
        const statuses = await Promise.all(Array.from({length: 8}, async () => {
          const seen: number[] = []
          for (let i = 0; i < n / 8; i++) {
            const res = await merchant()
            await res.arrayBuffer()
            seen.push(res.status)
          }
          return seen
        }))
        expect(new Set(statuses.flat())).to.deep.equal(new Set([201]))
      },
      /** Whether better-sqlite3's native addon is loaded into the process. */
      addonLoaded: () => readFileSync(`/proc/${gateway.pid}/maps`, 'utf8').includes('better_sqlite3.node'),
      /** SIGTERM, then the exit code (134 for an abort). */
      stop() {
        gateway.kill('SIGTERM')
        return exited
      },
    }
  } catch (error) {
    gateway.kill()
    throw new Error(`${(error as Error).message}\n${stderr}`)
  }
}

/** The first stdout line of a child (gateway start's JSON), or its stderr if it exits first. */
function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = ''
    let err = ''
    child.stdout!.on('data', (d) => {
      out += d
      if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')))
    })
    child.stderr!.on('data', (d) => (err += d))
    child.on('exit', (code) => reject(new Error(`exited ${code} before its first line: ${err}`)))
  })
}

/** A port nothing listens on now (workerd's config names its socket's port). */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const {port} = server.address() as {port: number}
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** POSTs once workerd listens (it prints nothing when ready), failing early if it exited. */
async function untilAnswered(url: string, body: string, child: ChildProcess): Promise<Response> {
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`workerd exited ${child.exitCode}`)
    try {
      return await fetch(url, {method: 'POST', body})
    } catch (err) {
      if (i > 100) throw err
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}

/** One Worker on 127.0.0.1:port whose outbound fetches may reach this machine (the gateway), as `wrangler dev --local` allows. */
function workerdConfig(port: number, flags: string[]): string {
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = "2025-01-01",
  compatibilityFlags = [${flags.map((f) => JSON.stringify(f)).join(', ')}],
  globalOutbound = "internet",
);
`
}
