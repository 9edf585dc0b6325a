/**
 * The two published packages, as npm users get them: `payapp` (CLI, gateway, `payapp/sdk` re-export)
 * and `@payapp/sdk` (the SDK alone). Packs both, installs the tarballs offline into empty projects and
 * uses them there; checks engines, shipped files and the SDK's types with @arethetypeswrong/cli.
 */
import {execFile, execFileSync, spawn} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {createInterface} from 'node:readline'
import {promisify} from 'node:util'

import {expect} from 'chai'
import semver from 'semver'

import {pendingInstallScripts, ROOT, tempHome} from './helpers/cli.js'
import {TestGateway} from './helpers/gateway.js'

const run = promisify(execFile)
const SDK_DIR = join(ROOT, 'packages', 'sdk')
const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'))
const pkg = readJson(join(ROOT, 'package.json'))
const sdkPkg = readJson(join(SDK_DIR, 'package.json'))

/** Every installed production package of the project in `cwd` (a workspace with `-w`). */
function productionPackages(cwd: string, workspace?: string): Array<{dir: string; name: string; version: string; node?: string}> {
  const args = ['ls', '--omit=dev', '--all', '--parseable', ...(workspace ? ['-w', workspace] : [])]
  const dirs = execFileSync('npm', args, {cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore']})
    .trim()
    .split('\n')
    .slice(1)
  return [...new Set(dirs)].map((dir) => {
    const p = readJson(join(dir, 'package.json'))
    return {dir, name: p.name, version: p.version, node: p.engines?.node}
  })
}

function refusingEngines(packages: ReturnType<typeof productionPackages>, range: string): string[] {
  const oldest = semver.minVersion(range)!
  return packages.filter((p) => p.node && !semver.satisfies(oldest, p.node)).map((p) => `${p.name}@${p.version} wants node ${p.node}`)
}

/** A long-running process (a gateway) that announces itself with its first stdout line. */
function spawnServer(command: string, args: string[], opts: {cwd: string; env: NodeJS.ProcessEnv}) {
  const child = spawn(command, args, {...opts, stdio: ['ignore', 'pipe', 'pipe']})
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  let stderr = ''
  child.stderr.on('data', (d) => (stderr += d))
  const firstLine = new Promise<string>((resolve, reject) => {
    createInterface({input: child.stdout}).once('line', resolve)
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code} before its first line: ${stderr}`)))
  })
  return {child, firstLine, exited, stderr: () => stderr}
}

const npmEnv = (home: string) => ({...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false', HOME: process.env.HOME, TMPDIR: home})

describe('the payapp package', () => {
  it('ships run.js, dist, templates, the manifest and LICENSE, never bin/dev.js', function () {
    this.timeout(60_000)
    const [packed] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore']}))
    const files: string[] = packed.files.map((f: {path: string}) => f.path)
    expect(files).to.include.members(['bin/run.js', 'LICENSE', 'bin/package.json', 'package.json', 'oclif.manifest.json', 'dist/bundle/payapp.cjs', 'dist/bundle/gateway.cjs', 'dist/bundle/gateway.cache', 'dist/sdk.js', 'dist/sdk.d.ts', 'dist/commands/openapi.js'])
    expect(files).not.to.include('bin/dev.js')
    expect(files.filter((f) => /^(src|test|packages)\//.test(f))).to.deep.equal([])
    expect(readFileSync(join(ROOT, 'LICENSE'), 'utf8')).to.match(/^MIT License/)
    for (const p of [pkg, sdkPkg]) {
      expect(p.license).to.equal('MIT')
      for (const field of ['repository', 'homepage', 'bugs']) expect(p[field], `${p.name} ${field}`).to.not.equal(undefined)
    }
  })

  it('claims in engines no Node older than every production dependency accepts', function () {
    this.timeout(60_000)
    const packages = productionPackages(ROOT)
    expect(packages.length).to.be.above(50)
    expect(refusingEngines(packages, pkg.engines.node), `engines.node ${pkg.engines.node}`).to.deep.equal([])
  })

  it('names every dependency whose install script it needs in allowScripts, which npm 12 enforces (better-sqlite3 built, not skipped)', async function () {
    this.timeout(60_000)
    expect(await pendingInstallScripts(this, ROOT)).to.deep.equal([])
  })

  it('loads payapp/sdk with require() as well as import, and payapp/sdk/webhooks alone', () => {
    const required = execFileSync(process.execPath, ['-e', "const s = require('payapp/sdk'); console.log([typeof s.AppClient, typeof s.verifyWebhookAsync].join())"], {cwd: ROOT, encoding: 'utf8'})
    expect(required.trim()).to.equal('function,function')
    const edge = execFileSync(process.execPath, ['-e', "console.log(Object.keys(require('payapp/sdk/webhooks')).sort().join())"], {cwd: ROOT, encoding: 'utf8'})
    expect(edge.trim()).to.equal('DEFAULT_TOLERANCE_SECONDS,PayappError,SIGNATURE_HEADER,SignatureVerificationError,verifyWebhookAsync')
  })
})

describe('the @payapp/sdk package', () => {
  it('depends on zod only (HTTP is the runtime fetch), and its tree accepts the Node its engines name', function () {
    this.timeout(60_000)
    expect(Object.keys(sdkPkg.dependencies).sort()).to.deep.equal(['zod'])
    expect(sdkPkg.engines.node).to.equal(pkg.engines.node)
    expect(refusingEngines(productionPackages(ROOT, '@payapp/sdk'), sdkPkg.engines.node)).to.deep.equal([])
  })

  it('has types and code that resolve for ESM and CommonJS in every resolution mode (@arethetypeswrong/cli: no problems)', async function () {
    this.timeout(120_000)
    if (!existsSync(join(SDK_DIR, 'dist', 'cjs', 'index.cjs'))) this.skip()
    const {stdout} = await run(join(ROOT, 'node_modules', '.bin', 'attw'), ['--pack', '.', '--format', 'json'], {cwd: SDK_DIR, maxBuffer: 32 * 1024 * 1024, env: npmEnv(tempHome())})
    const report = JSON.parse(stdout)
    expect(report.analysis.problems, JSON.stringify(report.analysis.problems, null, 1).slice(0, 2000)).to.deep.equal([])
    const entrypoints = report.analysis.entrypoints
    expect(Object.keys(entrypoints)).to.include.members(['.', './webhooks'])
    for (const entry of ['.', './webhooks']) {
      expect(entrypoints[entry].resolutions['node16-cjs'].resolution.isTypeScript, `${entry} types for require`).to.equal(true)
      expect(entrypoints[entry].resolutions['node16-cjs'].implementationResolution.fileName).to.match(/\.cjs$/)
      expect(entrypoints[entry].resolutions['node16-esm'].implementationResolution.fileName).to.match(/\.js$/)
    }
  })
})

describe('npm pack of each package, installed offline into an empty project', function () {
  this.timeout(600_000)
  let tarballs: {sdk: string; cli: string}
  let gw: TestGateway
  let token: string
  const work = tempHome()

  before(async function () {
    // `npm test` builds first; a bare mocha run without a build has nothing to pack.
    if (!existsSync(join(SDK_DIR, 'dist', 'cjs', 'index.cjs')) || !existsSync(join(ROOT, 'dist', 'sdk.js'))) this.skip()
    const out = join(work, 'tarballs')
    mkdirSync(out)
    // --ignore-scripts: the build already ran; packing must not rebuild the checkout under other tests.
    await run('npm', ['pack', '--ignore-scripts', '--pack-destination', out, '-w', '@payapp/sdk'], {cwd: ROOT, env: npmEnv(work)})
    await run('npm', ['pack', '--ignore-scripts', '--pack-destination', out], {cwd: ROOT, env: npmEnv(work)})
    const files = readdirSync(out)
    tarballs = {sdk: join(out, files.find((f) => f.startsWith('payapp-sdk-'))!), cli: join(out, files.find((f) => /^payapp-\d/.test(f))!)}
    gw = await TestGateway.start()
    token = (await gw.account()).token
  })

  after(async () => {
    await gw?.close()
  })

  function emptyProject(name: string): string {
    const dir = join(work, name)
    mkdirSync(dir)
    writeFileSync(join(dir, 'package.json'), JSON.stringify({name, version: '1.0.0', private: true}))
    return dir
  }

  /**
   * Installs offline from the tarballs and npm's cache. A cache filled only by `npm ci` holds tarballs but
   * no registry metadata (a lockfile needs none), so where metadata is missing (ENOTCACHED) the same
   * install runs again allowed to fetch just that.
   */
  async function install(dir: string, args: string[], env: Record<string, string> = {}) {
    const opts = {cwd: dir, env: {...npmEnv(work), ...env}, maxBuffer: 16 * 1024 * 1024}
    const common = ['install', '--no-audit', '--no-fund', ...args]
    try {
      await run('npm', ['--offline', ...common], opts)
    } catch (error) {
      if (!/ENOTCACHED/.test(String((error as {stderr?: string}).stderr))) throw error
      console.warn('      (npm cache lacks registry metadata: installing with --prefer-offline)')
      await run('npm', ['--prefer-offline', ...common], opts)
    }
  }

  /** The same use of the SDK from ESM and from CommonJS: a verified webhook and a real list call. */
  async function useSdk(dir: string, specifier: string) {
    const body = (load: string) => `
      const sdk = ${load}
      const {header, body} = sdk.signWebhookPayload({id: 'evt_1', object: 'event', type: 'product.created'}, 'whsec_1')
      const event = sdk.verifyWebhook(body, header, 'whsec_1')
      const app = new sdk.AppClient({token: process.env.TOKEN, baseUrl: process.env.BASE_URL, maxRetries: 0})
      app.products.list().then((page) => console.log(JSON.stringify({event: event.id, list: page.object, version: sdk.SDK_VERSION})))`
    writeFileSync(join(dir, 'use.mjs'), body(`await import('${specifier}')`))
    writeFileSync(join(dir, 'use.cjs'), body(`require('${specifier}')`))
    const env = {...process.env, TOKEN: token, BASE_URL: gw.url}
    for (const file of ['use.mjs', 'use.cjs']) {
      const {stdout} = await run(process.execPath, [file], {cwd: dir, env})
      expect(JSON.parse(stdout), file).to.deep.equal({event: 'evt_1', list: 'list', version: sdkPkg.version})
    }
  }

  it('@payapp/sdk alone: zod only, from import and from require', async () => {
    const dir = emptyProject('sdk-alone')
    await install(dir, [tarballs.sdk])
    const installed = productionPackages(dir)
    const names = installed.map((p) => p.name)
    // The install-size check: the SDK's whole production tree (145 packages when it came with the CLI, 25 with got).
    expect(names.sort()).to.deep.equal(['@payapp/sdk', 'zod'])
    await useSdk(dir, '@payapp/sdk')
    const edge = await run(process.execPath, ['--input-type=module', '-e', "const w = await import('@payapp/sdk/webhooks'); console.log(typeof w.verifyWebhookAsync)"], {cwd: dir})
    expect(edge.stdout.trim()).to.equal('function')
  })

  it('payapp with its SDK: payapp --help and --version, payapp gateway start, payapp/sdk from import and require, and the allowScripts README shows', async function () {
    const dir = emptyProject('cli')
    // Users download better-sqlite3's prebuilt binary; offline, this checkout's build of the same version
    // stands in for it (prebuild-install's local-prebuilds directory), so nothing compiles for minutes.
    const sqlite = readJson(join(ROOT, 'node_modules', 'better-sqlite3', 'package.json'))
    const prebuilds = join(work, 'prebuilds')
    mkdirSync(prebuilds)
    const name = `better-sqlite3-v${sqlite.version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`
    execFileSync('tar', ['-czf', join(prebuilds, name), '-C', join(ROOT, 'node_modules', 'better-sqlite3'), 'build/Release/better_sqlite3.node'])
    await install(dir, ['--omit=optional', tarballs.sdk, tarballs.cli], {npm_config_better_sqlite3_local_prebuilds: prebuilds})

    const bin = join(dir, 'node_modules', '.bin', 'payapp')
    // The CLI runs from its build-time bundle (dist/bundle) and loader: a package without them would pass
    // every test that runs the work tree and fail for every user.
    const help = await run(bin, ['--help'], {cwd: dir})
    expect(help.stdout).to.include('$ payapp [COMMAND]').and.to.include('gateway').and.to.include('openapi')
    const topic = await run(bin, ['products', 'list', '--help'], {cwd: dir})
    expect(topic.stdout).to.include('$ payapp products list')
    const version = await run(bin, ['--version'], {cwd: dir})
    expect(version.stdout).to.match(/^payapp\/\d+\.\d+\.\d+ /)

    const server = spawnServer(bin, ['gateway', 'start', '--port', '0', '--db', ':memory:', '--json'], {cwd: dir, env: {...process.env, XDG_CONFIG_HOME: join(work, 'config'), PAYAPP_KEYCHAIN: 'off'}})
    try {
      const first = await server.firstLine
      const {url} = JSON.parse(first)
      const doc = (await (await fetch(`${url}/openapi.json`)).json()) as {openapi: string}
      expect(doc.openapi).to.equal('3.1.0')
      const unauthenticated = await fetch(`${url}/v1/app/products`)
      expect(unauthenticated.status).to.equal(401)
    } finally {
      server.child.kill('SIGTERM')
    }
    expect(await server.exited, server.stderr()).to.equal(0)

    // payapp/testing from the installed package: the gateway's bundle finds better-sqlite3 in the user's node_modules.
    writeFileSync(
      join(dir, 'suite.mjs'),
      `import {startGateway} from 'payapp/testing'
      const gw = await startGateway()
      const {client} = await gw.secretKey()
      const product = await client.products.create({name: 'Mug', price: {currency: 'eur', unit_amount: 1200}})
      console.log(JSON.stringify({listed: (await client.products.list()).data.map((p) => p.id).includes(product.id)}))
      await gw.close()`,
    )
    expect(JSON.parse((await run(process.execPath, ['suite.mjs'], {cwd: dir})).stdout)).to.deep.equal({listed: true})

    await useSdk(dir, 'payapp/sdk')

    // Last (an npm without the install-script policy skips this): README's allowScripts block, added to the
    // project's package.json, covers every install script npm finds unreviewed in what payapp brought.
    const block = /```json\n("allowScripts": \{[^\n]*\})\n```/.exec(readFileSync(join(ROOT, 'README.md'), 'utf8'))
    expect(block, "README.md's allowScripts block").to.not.equal(null)
    writeFileSync(join(dir, 'package.json'), JSON.stringify({...readJson(join(dir, 'package.json')), ...JSON.parse(`{${block![1]}}`)}))
    expect(await pendingInstallScripts(this, dir)).to.deep.equal([])
  })
})
