import {spawn} from 'node:child_process'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {expect} from 'chai'

import {parseRateLimit} from '../../src/cli/services/gateway-start.js'
import {BIN, ROOT, runCli, startCli, tempHome} from '../helpers/cli.js'
import {TestGateway, type Account} from '../helpers/gateway.js'
import {conformanceHook} from '../helpers/openapi-conformance.js'

const dir = mkdtempSync(join(tmpdir(), 'payapp-catalog-cli-'))
function writeCatalog(name: string, text: string): string {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

/** n products, each with an inline default price, one option group and two variants: 4 writes each. */
const bigCatalogue = (n: number) =>
  'products:\n' +
  Array.from(
    {length: n},
    (_, i) =>
      `  - {key: k${i}, name: Product ${i}, prices: [{key: k${i}-eur, currency: eur, unit_amount: ${1000 + i}}], options: {Size: [S, M]}, variants: [{sku: K${i}-S, options: {Size: S}, track_inventory: true, stock_qty: ${i}}, {sku: K${i}-M, options: {Size: M}}]}\n`,
  ).join('')

/** n products of 2 changes each (the product with its inline price counts as two). */
const products = (n: number, prefix = 'r') =>
  'products:\n' + Array.from({length: n}, (_, i) => `  - {key: ${prefix}${i}, name: R${i}, prices: [{key: ${prefix}${i}-eur, currency: eur, unit_amount: ${1000 + i}}]}\n`).join('')

async function allProducts(acct: Account): Promise<any[]> {
  const out: any[] = []
  for (let offset = 0; ; offset += 100) {
    const page = (await acct.store('GET', `/products?limit=100&offset=${offset}`)).body
    out.push(...page.data)
    if (!page.has_more) return out
  }
}

describe('payapp catalog (CLI processes)', function () {
  this.timeout(60_000)
  let gw: TestGateway
  let acct: Account
  let env: Record<string, string>
  before(async () => {
    gw = await TestGateway.start()
  })
  beforeEach(async () => {
    acct = await gw.account()
    env = {PAYAPP_TOKEN: acct.token, PAYAPP_BASE_URL: gw.url}
  })
  after(() => gw.close())

  it('plan --json, apply --json (one line per change, then the summary), and a second plan with nothing to do', async () => {
    const file = writeCatalog('small.yaml', bigCatalogue(2))
    const plan = await runCli(['catalog', 'plan', file, '--json'], {env})
    expect(plan.code, plan.stderr).to.equal(0)
    expect(plan.json().summary).to.deep.equal({create: 10, update: 0, replace: 0, archive: 0, delete: 0, unchanged: 0, left: 0, blocked: 0})
    expect(plan.json().changes[0]).to.deep.equal({action: 'create', kind: 'product', key: 'k0'})

    const applied = await runCli(['catalog', 'apply', file, '--json'], {env})
    expect(applied.code, applied.stderr).to.equal(0)
    const lines = applied.stdout.trim().split('\n').map((l) => JSON.parse(l))
    expect(lines.slice(0, -1).every((l) => l.status === 'done')).to.equal(true)
    expect(lines.slice(0, -1).map((l) => l.key)).to.include.members(['k0', 'k1', 'K0-S', 'K1-M'])
    expect(lines.slice(0, -1)).to.have.length(10)
    expect(lines.at(-1)).to.deep.include({summary: {done: 10, failed: 0, skipped: 0, total: 10, writes: 8, plan: plan.json().summary, converged: true, remaining: []}})

    const again = await runCli(['catalog', 'plan', file], {env})
    expect(again.code).to.equal(0)
    expect(again.stdout).to.contain('No changes: the platform matches the file.')
    expect(again.stdout).to.contain('Plan: 0 to create, 0 to update, 10 unchanged.')
  })

  it('reads the secret key door and stdin; export then plan round-trips through the CLI', async () => {
    const storeEnv = {PAYAPP_SECRET_KEY: acct.secretKey, PAYAPP_BASE_URL: gw.url}
    const applied = await runCli(['catalog', 'apply', '-'], {env: storeEnv, input: bigCatalogue(2)})
    expect(applied.code, applied.stderr).to.equal(0)
    expect(applied.stdout).to.match(/^Applied 10 of 10 changes\. Plan was: 10 to create/)
    const exported = await runCli(['catalog', 'export', '--format', 'csv'], {env})
    expect(exported.code, exported.stderr).to.equal(0)
    expect(exported.stdout.split('\n')[0]).to.contain('option:Size')
    const csv = writeCatalog('export.csv', exported.stdout)
    const plan = await runCli(['catalog', 'plan', csv, '--json'], {env: storeEnv})
    expect(plan.json().summary).to.include({create: 0, update: 0, replace: 0, delete: 0})
  })

  it('refuses destructive changes without --yes when there is no TTY (exit 2), applies them with it', async () => {
    const first = writeCatalog('two.yaml', bigCatalogue(2))
    expect((await runCli(['catalog', 'apply', first], {env})).code).to.equal(0)
    const one = writeCatalog('one.yaml', bigCatalogue(1))
    const refused = await runCli(['catalog', 'apply', one, '--prune'], {env})
    expect(refused.code).to.equal(2)
    expect(refused.stderr).to.contain('--yes')
    expect((await allProducts(acct)).filter((p) => p.active)).to.have.length(2)
    const dry = await runCli(['catalog', 'apply', one, '--prune', '--dry-run', '--json'], {env})
    expect(dry.json().changes).to.deep.include({action: 'archive', kind: 'product', key: 'k1'})
    const done = await runCli(['catalog', 'apply', one, '--prune', '--yes'], {env})
    expect(done.code, done.stderr).to.equal(0)
    expect((await allProducts(acct)).filter((p) => p.active).map((p) => p.metadata.catalog_key)).to.deep.equal(['k0'])
  })

  it('exits 8 when a change failed, naming its key and the platform error; exits 2 for an invalid file naming the line', async () => {
    await acct.app('POST', '/products', {body: {name: 'Elsewhere'}})
    const elsewhere = (await allProducts(acct))[0]
    const defaultVariant = (await acct.app('GET', `/products/${elsewhere.id}`)).body.variants[0]
    await acct.app('PATCH', `/variants/${defaultVariant.id}`, {body: {sku: 'K0-S'}})
    const file = writeCatalog('clash.yaml', bigCatalogue(2))
    const res = await runCli(['catalog', 'apply', file], {env})
    expect(res.code).to.equal(8)
    expect(res.stderr).to.contain('failed: create variant K0-S: sku_exists:')
    expect(res.stdout).to.contain('1 failed')

    const bad = writeCatalog('bad.yaml', 'products:\n  - key: a\n    name: A\n    prices: [{key: a, currency: eur, unit_amount: 5}]\n')
    const invalid = await runCli(['catalog', 'plan', bad], {env})
    expect(invalid.code).to.equal(2)
    expect(invalid.stderr).to.contain('bad.yaml is not a valid catalogue')
    expect(invalid.stderr).to.contain('line 4: products[0].prices[0].unit_amount: must be at least 250 minor units')
  })

  it('survives kill -9 in the middle of a 200-product apply: the re-run finishes with no duplicates and the store equals the file', async () => {
    const file = writeCatalog('big.yaml', bigCatalogue(200))
    const home = tempHome()
    // Killed once a good share of the changes (1,000 in all: a product and its inline price count as two) has landed.
    const killedAfter = await new Promise<number>((resolve, reject) => {
      const child = spawn(process.execPath, [BIN, 'catalog', 'apply', file, '--json', '--concurrency', '8'], {
        cwd: ROOT,
        env: {PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, 'config'), PAYAPP_KEYCHAIN: 'off', ...env},
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let done = 0
      let buf = ''
      child.stdout.on('data', (d) => {
        buf += d
        const lines = buf.split('\n')
        buf = lines.pop()!
        done += lines.filter((l) => l.includes('"status":"done"')).length
        if (done >= 250 && !child.killed) child.kill('SIGKILL')
      })
      child.on('error', reject)
      child.on('close', (code, signal) => (signal === 'SIGKILL' ? resolve(done) : reject(new Error(`apply ended before the kill: ${code}`))))
    })
    expect(killedAfter).to.be.within(250, 999)

    const rerun = await runCli(['catalog', 'apply', file, '--json'], {env, timeoutMs: 50_000})
    expect(rerun.code, rerun.stderr).to.equal(0)
    const summary = JSON.parse(rerun.stdout.trim().split('\n').at(-1)!).summary
    expect(summary.failed).to.equal(0)
    expect(summary.done).to.be.at.most(1000 - killedAfter)

    const products = await allProducts(acct)
    const keys = products.map((p) => p.metadata.catalog_key)
    expect(keys).to.have.length(200)
    expect(new Set(keys).size).to.equal(200)
    expect(products.every((p) => p.prices.length === 1 && p.default_price === p.prices[0].id && p.prices[0].lookup_key === `${p.metadata.catalog_key}-eur`)).to.equal(true)
    const sample = (await acct.store('GET', `/products/${products.find((p) => p.metadata.catalog_key === 'k137').id}`)).body
    expect(sample.option_groups).to.have.length(1)
    expect(sample.variants.map((v: any) => [v.sku, v.stock_qty])).to.have.deep.members([[null, null], ['K137-S', 137], ['K137-M', null]])

    const after = await runCli(['catalog', 'plan', file, '--json'], {env})
    expect(after.json().summary).to.include({create: 0, update: 0, replace: 0, delete: 0, archive: 0, unchanged: 1000})
  })

  it('a catalogue file that is not there: exit 2 and where it was looked for, no ENOENT', async () => {
    const res = await runCli(['catalog', 'plan', join(dir, 'nope.yaml')], {env})
    expect(res.code).to.equal(2)
    expect(res.stderr).to.contain(`${join(dir, 'nope.yaml')}: no such file`)
    expect(res.stderr).not.to.contain('ENOENT')
  })

  it('without a TTY, a long apply prints a progress line every few seconds, and a summary counting what the plan counted', async () => {
    const file = writeCatalog('slow.yaml', products(6))
    // Two writes a second: six products take about three seconds.
    const res = await runCli(['catalog', 'apply', file, '--rate', '120'], {env})
    expect(res.code, res.stderr).to.equal(0)
    const progress = res.stderr.split('\n').filter((l) => /^progress: \d+\/12 changes/.test(l))
    expect(progress.length, res.stderr).to.be.at.least(1)
    expect(res.stdout).to.contain('Applied 12 of 12 changes. Plan was: 12 to create')
  })

  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    it(`${signal} stops taking new writes, says how many of how many landed, exits ${code}; a re-run finishes`, async () => {
      const file = writeCatalog(`stop-${signal}.yaml`, products(10, signal.toLowerCase()))
      const home = tempHome()
      const run = startCli(['catalog', 'apply', file, '--rate', '240'], home, env)
      const exited = new Promise<number | null>((resolve) => run.child.on('exit', (c) => resolve(c)))
      // Stop once some writes landed.
      for (let i = 0; i < 100 && !(await acct.store('GET', '/products?limit=1')).body.data.length; i++) await new Promise((r) => setTimeout(r, 50))
      run.child.kill(signal)
      expect(await exited, run.stderr()).to.equal(code)
      const m = run.stderr().match(new RegExp(`Stopped by ${signal}: (\\d+) of 20 changes landed.*Run the same command again to finish the rest`))
      expect(m, run.stderr()).to.not.equal(null)
      expect(Number(m![1])).to.be.within(1, 19)
      const again = await runCli(['catalog', 'apply', file], {env})
      expect(again.code, again.stderr).to.equal(0)
      expect((await acct.store('GET', '/products?limit=100')).body.data).to.have.length(10)
    })
  }

  it('a wait for a 429 that holds every request in flight is printed once, with the documented attempt count', async () => {
    const file = writeCatalog('limited.yaml', products(8, 'l'))
    const fault = {merchant: acct.merchant.id, route: 'POST /products', status: 429, retry_after: 1, count: 8}
    expect((await gw.admin('POST', '/faults', fault)).status).to.equal(201)
    try {
      const res = await runCli(['catalog', 'apply', file, '--rate', 'off', '--concurrency', '8'], {env})
      expect(res.code, res.stderr).to.equal(0)
      const waits = res.stderr.split('\n').filter((l) => l.startsWith('rate limited'))
      expect(waits, res.stderr).to.have.length(1)
      expect(waits[0]).to.match(/attempt 2\/9\)$/)
    } finally {
      await gw.admin('DELETE', '/faults')
    }
    const help = await runCli(['catalog', 'apply', '--help'])
    expect(help.stdout).to.match(/--max-retries=<value>[\s\S]*\[default: 8\]/)
  })
})

describe('payapp catalog reads the store a page at a time (expand), and one by one where the platform ignores it (CLI processes)', function () {
  this.timeout(60_000)
  /** The per-product reads among recorded requests: GET /v1/app/products/{id} and its prices. */
  const perProduct = (seen: string[]) => seen.filter((r) => /^GET \/v1\/app\/products\/prod_/.test(r))
  const edited = (n: number) => bigCatalogue(n).replace('unit_amount: 1001', 'unit_amount: 1501').replace('Size: [S, M]', 'Size: [S, M, L]').replace('{sku: K0-M, options: {Size: M}}', '{sku: K0-M, options: {Size: M}}, {sku: K0-L, options: {Size: L}}')

  it('plans and reads back with one expanded list request per page and no read per product', async () => {
    const gw = await TestGateway.start()
    try {
      const acct = await gw.account()
      const env = {PAYAPP_TOKEN: acct.token, PAYAPP_BASE_URL: gw.url}
      const file = writeCatalog('expand.yaml', bigCatalogue(120))
      expect((await runCli(['catalog', 'apply', file, '--json'], {env})).code).to.equal(0)
      const seen = gw.recordRequests()
      const second = await runCli(['catalog', 'apply', writeCatalog('expand-edited.yaml', edited(120)), '--json'], {env})
      expect(second.code, second.stderr).to.equal(0)
      expect(JSON.parse(second.stdout.trim().split('\n').at(-1)!).summary).to.include({converged: true, failed: 0})
      expect(perProduct(seen), 'reads per product').to.deep.equal([])
      // The plan and the read-back: two pages of 100 each.
      const lists = seen.filter((r) => r.startsWith('GET /v1/app/products?'))
      expect(lists).to.have.length(4)
      for (const list of lists) expect(new URLSearchParams(list.split('?')[1]).getAll('expand')).to.have.members(['data.prices', 'data.option_groups', 'data.variants'])
    } finally {
      await gw.close()
    }
  })

  it('against a platform that ignores expand (an unknown query parameter), reads each product on its own and still converges', async () => {
    // The gateway as a platform without expand would answer: the parameter is dropped before the route reads it.
    const gw = await TestGateway.start({
      configure(app) {
        conformanceHook(app)
        app.addHook('preHandler', async (request) => {
          const query = request.query as Record<string, unknown>
          delete query.expand
          delete query['expand[]']
        })
      },
    })
    try {
      const acct = await gw.account()
      const env = {PAYAPP_TOKEN: acct.token, PAYAPP_BASE_URL: gw.url}
      const seen = gw.recordRequests()
      const first = await runCli(['catalog', 'apply', writeCatalog('bare.yaml', bigCatalogue(3)), '--json'], {env})
      expect(first.code, first.stderr).to.equal(0)
      expect(JSON.parse(first.stdout.trim().split('\n').at(-1)!).summary).to.include({converged: true, failed: 0})
      // The read-back: each product and its prices (the App API lists products without prices).
      expect(perProduct(seen)).to.have.length(6)
      seen.length = 0
      const second = await runCli(['catalog', 'apply', writeCatalog('bare-edited.yaml', edited(3)), '--json'], {env})
      expect(second.code, second.stderr).to.equal(0)
      expect(JSON.parse(second.stdout.trim().split('\n').at(-1)!).summary).to.include({converged: true, failed: 0})
      expect(perProduct(seen)).to.have.length(12)
      const again = await runCli(['catalog', 'plan', writeCatalog('bare-edited.yaml', edited(3))], {env})
      expect(again.stdout).to.contain('No changes: the platform matches the file.')
      const k1 = (await acct.store('GET', '/products?limit=100')).body.data.find((p: any) => p.metadata.catalog_key === 'k1')
      expect(k1.prices.filter((p: any) => p.active).map((p: any) => p.unit_amount)).to.deep.equal([1501])
    } finally {
      await gw.close()
    }
  })
})

describe('payapp gateway start --rate-limit', () => {
  it('takes on, off, or per-bucket limits with an optional window', () => {
    expect(parseRateLimit('on')).to.deep.equal({enabled: true})
    expect(parseRateLimit('off')).to.deep.equal({enabled: false})
    expect(parseRateLimit('writes=600,reads=1000,checkout=50')).to.deep.equal({enabled: true, config: {limits: {write: 600, read: 1000, checkout: 50}}})
    expect(parseRateLimit('writes=5,window=2')).to.deep.equal({enabled: true, config: {limits: {write: 5}, windowSeconds: 2}})
    expect(() => parseRateLimit('writes=0')).to.throw(/positive whole/)
    expect(() => parseRateLimit('deletes=5')).to.throw(/unknown limit "deletes"/)
  })
})
