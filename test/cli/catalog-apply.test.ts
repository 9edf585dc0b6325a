import {mkdtempSync, writeFileSync} from 'node:fs'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {expect} from 'chai'

import {applyPlan, exportCatalog, Pacer, parseCatalog, planCatalog, serializeCatalog, type CatalogClient} from '../../src/cli/services/catalog/index.js'
import {AppClient, StoreClient, type ClientOptions} from '@payapp/sdk'
import {storeProduct} from '../helpers/catalog.js'
import {TestGateway, type Account} from '../helpers/gateway.js'

const TEE = `
products:
  - key: tee
    name: Classic T-Shirt
    description: Organic cotton tee.
    store_visible: true
    prices:
      - {key: tee-eur, currency: EUR, unit_amount: 2500, default: true}
      - {key: tee-club, currency: eur, unit_amount: 900, recurring: {interval: month}}
    options:
      Size: [S, M, L]
      Color: [Red, Blue]
    variants:
      - {sku: TEE-S-RED, options: {Size: S, Color: Red}, price: tee-eur, track_inventory: true, stock_qty: 10, title: Small red tee}
      - {sku: TEE-M-BLUE, options: {Size: M, Color: Blue}, features: [soft, soft]}
  - key: mug
    name: Mug
    prices: [{key: mug-eur, currency: eur, unit_amount: 1200}]
    variants: [{sku: MUG, options: {}, track_inventory: true, stock_qty: 3}]
`

interface Recorder {
  writes: string[]
  statuses: number[]
}

/** A client that records every write it sends (method and path) and every status it gets. */
function client(gw: TestGateway, acct: Account, door: 'app' | 'store' = 'app', extra: Partial<ClientOptions> = {}): CatalogClient & {rec: Recorder} {
  const rec: Recorder = {writes: [], statuses: []}
  const opts: ClientOptions = {
    baseUrl: gw.url,
    onRequest: (e) => {
      if (e.method !== 'GET' && e.attempt === 1) rec.writes.push(`${e.method} ${new URL(e.url).pathname.replace(/^\/v1\/(app|store)/, '')}`)
    },
    ...extra,
    onResponse: (e) => {
      if (e.status) rec.statuses.push(e.status)
      extra.onResponse?.(e)
    },
  }
  const c = door === 'app' ? new AppClient({token: acct.token, ...opts}) : new StoreClient({secretKey: acct.secretKey, ...opts})
  return Object.assign(c, {rec})
}

const file = (text: string) => parseCatalog(text, 'yaml', 'test.yaml')
const notUnchanged = <C extends {action: string}>(plan: {changes: C[]}) => plan.changes.filter((c) => c.action !== 'unchanged')

async function apply(c: CatalogClient, text: string, opts: {prune?: boolean; baseDir?: string} = {}) {
  const plan = await planCatalog(c, file(text), opts)
  const result = await applyPlan(c, plan, {concurrency: 4})
  return {plan, result}
}

describe('catalog plan and apply (service, over HTTP)', function () {
  this.timeout(20_000)
  let gw: TestGateway
  before(async () => {
    gw = await TestGateway.start()
  })
  after(() => gw.close())

  it('finishes against injected faults (429 with Retry-After, random 500s) with no duplicate', async () => {
    const acct = await gw.account()
    const faults = [
      {merchant: acct.merchant.id, route: 'POST /products', status: 429, retry_after: 0, count: 2},
      {merchant: acct.merchant.id, status: 500, probability: 0.3, seed: 11},
      {merchant: acct.merchant.id, route: 'POST /products/{id}/variants', status: 503, retry_after: 0, count: 3},
    ]
    for (const fault of faults) expect((await gw.admin('POST', '/faults', fault)).status).to.equal(201)
    try {
      const c = client(gw, acct, 'app', {retryDelays: {initialMs: 5, maxMs: 20}, maxRetries: 8})
      const {result} = await apply(c, TEE)
      expect(result).to.include({ok: true, failed: 0})
      expect(c.rec.statuses).to.include.members([429, 500, 503])
    } finally {
      await gw.admin('DELETE', '/faults')
    }
    const tee = await storeProduct(acct, 'tee')
    expect(tee.prices).to.have.length(2)
    expect(tee.variants).to.have.length(3)
    await storeProduct(acct, 'mug')
    expect(notUnchanged(await planCatalog(client(gw, acct), file(TEE)))).to.deep.equal([])
  })

  it('creates the catalogue in dependency order, then a second run plans nothing and writes nothing', async () => {
    const acct = await gw.account()
    const c = client(gw, acct)
    const first = await apply(c, TEE)
    expect(first.result).to.include({ok: true, failed: 0})
    expect(first.plan.summary).to.include({create: 9, update: 1})

    const tee = await storeProduct(acct, 'tee')
    expect(tee.name).to.equal('Classic T-Shirt')
    const eur = tee.prices.find((p: any) => p.lookup_key === 'tee-eur')
    expect(tee.default_price).to.equal(eur.id)
    expect(tee.option_groups.map((g: any) => [g.name, g.values.map((v: any) => v.value)])).to.deep.equal([
      ['Size', ['S', 'M', 'L']],
      ['Color', ['Red', 'Blue']],
    ])
    const red = tee.variants.find((v: any) => v.sku === 'TEE-S-RED')
    expect(red).to.include({price: eur.id, price_inherited: false, stock_qty: 10, title: 'Small red tee'})
    expect(tee.variants.find((v: any) => v.sku === 'TEE-M-BLUE')).to.include({price_inherited: true}).and.have.deep.property('features', ['soft'])
    const mug = await storeProduct(acct, 'mug')
    expect(mug.variants).to.have.length(1)
    expect(mug.variants[0]).to.include({is_default: true, sku: 'MUG', stock_qty: 3})

    const writesBefore = c.rec.writes.length
    const second = await planCatalog(c, file(TEE))
    expect(notUnchanged(second)).to.deep.equal([])
    expect(second.summary.unchanged).to.equal(10)
    const again = await applyPlan(c, second)
    expect(again.done).to.equal(0)
    expect(c.rec.writes.length).to.equal(writesBefore)
  })

  it('updates changed fields only, and normalises before comparing (currency case, duplicate features, defaults)', async () => {
    const acct = await gw.account()
    const c = client(gw, acct)
    await apply(c, TEE)
    const edited = TEE.replace('Organic cotton tee.', 'Now with more cotton.').replace('stock_qty: 10', 'stock_qty: 12').replace('currency: eur, unit_amount: 900', 'currency: EUR, unit_amount: 900, tax_behavior: unspecified')
    const plan = await planCatalog(c, file(edited))
    expect(notUnchanged(plan)).to.deep.equal([
      {action: 'update', kind: 'product', key: 'tee', fields: ['description']},
      {action: 'update', kind: 'variant', key: 'TEE-S-RED', fields: ['stock_qty']},
    ])
    const before = c.rec.writes.length
    expect((await applyPlan(c, plan)).ok).to.equal(true)
    expect(c.rec.writes.slice(before)).to.have.length(2)
    expect((await storeProduct(acct, 'tee')).description).to.equal('Now with more cotton.')
  })

  it('replaces a price whose amount changed in the safe order: new price as default, variants moved, old one deactivated last', async () => {
    const acct = await gw.account()
    const c = client(gw, acct)
    await apply(c, TEE)
    const old = (await storeProduct(acct, 'tee')).prices.find((p: any) => p.lookup_key === 'tee-eur')
    const before = c.rec.writes.length

    const {plan, result} = await apply(c, TEE.replace('unit_amount: 2500', 'unit_amount: 2700'))
    expect(result.ok).to.equal(true)
    expect(notUnchanged(plan).map((ch) => `${ch.action} ${ch.kind} ${ch.key.replace(/price_\w+/, 'ID')}`)).to.deep.equal([
      'replace price tee-eur',
      'update variant TEE-S-RED',
    ])
    // Writes in order: create (as default), move the variant on the old price, then deactivate the old one.
    const writes = c.rec.writes.slice(before)
    expect(writes.map((w) => w.replace(/\/(prod_\w+|price_\w+|[0-9a-f-]{36})/g, '/ID'))).to.deep.equal(['POST /products/ID/prices', 'PATCH /variants/ID', 'PATCH /products/ID/prices/ID'])

    const tee = await storeProduct(acct, 'tee')
    const current = tee.prices.find((p: any) => p.lookup_key === 'tee-eur')
    expect(current).to.include({unit_amount: 2700, active: true})
    expect(tee.default_price).to.equal(current.id)
    expect(tee.prices.find((p: any) => p.id === old.id)).to.include({active: false, lookup_key: null})
    expect(tee.variants.find((v: any) => v.sku === 'TEE-S-RED').price).to.equal(current.id)
    expect(notUnchanged(await planCatalog(c, file(TEE.replace('unit_amount: 2500', 'unit_amount: 2700'))))).to.deep.equal([])
  })

  it('finishes a replace a killed run left half done (the new price holds the key, the old one is still active)', async () => {
    const acct = await gw.account()
    const c = client(gw, acct)
    await apply(c, TEE)
    const old = (await storeProduct(acct, 'tee')).prices.find((p: any) => p.lookup_key === 'tee-eur')
    // A run killed after the new price landed: every later write (variant move, old price retired) never happens.
    const killed = client(gw, acct)
    killed.variants.update = (() => Promise.reject(new Error('killed'))) as unknown as typeof killed.variants.update
    killed.products.prices.update = (() => Promise.reject(new Error('killed'))) as unknown as typeof killed.products.prices.update
    const edited = TEE.replace('unit_amount: 2500', 'unit_amount: 2700')
    expect((await apply(killed, edited)).result.ok).to.equal(false)
    const half = await storeProduct(acct, 'tee')
    expect(half.prices.filter((p: any) => p.lookup_key === 'tee-eur').map((p: any) => p.unit_amount)).to.deep.equal([2700])
    expect(half.prices.find((p: any) => p.id === old.id)).to.include({active: true, lookup_key: null})

    const {plan, result} = await apply(c, edited)
    expect(result.ok).to.equal(true)
    expect(plan.summary).to.include({create: 0, replace: 1, archive: 0})
    expect(plan.destructive).to.equal(false)
    const after = await storeProduct(acct, 'tee')
    expect(after.prices.filter((p: any) => p.active && p.unit_amount !== 900).map((p: any) => p.unit_amount)).to.deep.equal([2700])
    expect(after.prices.find((p: any) => p.id === old.id)).to.include({active: false})
    expect(after.variants.find((v: any) => v.sku === 'TEE-S-RED').price).to.equal(after.default_price)
    expect(notUnchanged(await planCatalog(c, file(edited)))).to.deep.equal([])
  })

  it('deletes and recreates a variant whose option combination changed; removes values and groups where the guards allow, explains where not', async () => {
    const acct = await gw.account()
    const c = client(gw, acct)
    await apply(c, TEE)
    const moved = TEE.replace('{sku: TEE-M-BLUE, options: {Size: M, Color: Blue}', '{sku: TEE-M-BLUE, options: {Size: L, Color: Blue}')
    const {plan, result} = await apply(c, moved)
    expect(result.ok).to.equal(true)
    expect(notUnchanged(plan)).to.deep.equal([{action: 'replace', kind: 'variant', key: 'TEE-M-BLUE', fields: ['options']}])
    const tee = await storeProduct(acct, 'tee')
    expect(tee.variants.filter((v: any) => v.sku === 'TEE-M-BLUE').map((v: any) => v.title)).to.deep.equal(['L / Blue'])

    // A value no variant uses is deleted; one used by a variant the file no longer lists is blocked, not crashed on.
    const fewer = moved.replace('Size: [S, M, L]', 'Size: [S, L]').replace('Color: [Red, Blue]', 'Color: [Blue]').replace(/\n {6}- \{sku: TEE-S-RED.*\n/, '\n')
    const second = await apply(c, fewer)
    expect(second.result.ok).to.equal(true)
    expect(notUnchanged(second.plan)).to.deep.include.members([
      {action: 'delete', kind: 'value', key: 'tee/Size/M'},
      {action: 'left', kind: 'variant', key: 'TEE-S-RED', reason: 'not in the file (--prune deletes it)'},
    ])
    const blocked = second.plan.changes.find((ch) => ch.action === 'blocked')!
    expect(blocked).to.include({kind: 'value', key: 'tee/Color/Red'})
    expect(blocked.reason).to.match(/^value_in_use: variant TEE-S-RED uses it/)

    // --prune deletes the variant, then the value can go.
    const pruned = await apply(c, fewer, {prune: true})
    expect(pruned.result.ok).to.equal(true)
    expect(notUnchanged(pruned.plan).map((ch) => `${ch.action} ${ch.kind} ${ch.key}`)).to.have.members(['delete variant TEE-S-RED', 'delete value tee/Color/Red'])
    const after = await storeProduct(acct, 'tee')
    expect(after.option_groups.map((g: any) => g.values.map((v: any) => v.value))).to.deep.equal([['S', 'L'], ['Blue']])
    expect(after.variants.map((v: any) => v.sku)).to.have.members([null, 'TEE-M-BLUE'])
  })

  it('--prune archives products that are not in the file; without it the plan says they are left', async () => {
    const acct = await gw.account()
    const c = client(gw, acct)
    await apply(c, TEE)
    const onlyMug = 'products:\n' + TEE.split('\n  - key: mug')[1]!.replace(/^/, '  - key: mug')
    const plan = await planCatalog(c, file(onlyMug))
    expect(plan.changes).to.deep.include({action: 'left', kind: 'product', key: 'tee', reason: 'not in the file (--prune archives it)'})
    expect(plan.destructive).to.equal(false)
    const {plan: prunePlan, result} = await apply(c, onlyMug, {prune: true})
    expect(prunePlan.destructive).to.equal(true)
    expect(result.ok).to.equal(true)
    expect((await storeProduct(acct, 'tee')).active).to.equal(false)
    // Listing it again brings it back.
    const back = await apply(c, TEE)
    expect(back.plan.changes).to.deep.include({action: 'update', kind: 'product', key: 'tee', fields: ['active']})
    expect((await storeProduct(acct, 'tee')).active).to.equal(true)
  })

  it("a product put back after --prune gets the file's default price again, whichever of its prices the platform reactivates first", async () => {
    const cap = (def: 'a' | 'b') => `
products:
  - key: cap
    name: Cap
    prices:
      - {key: cap-a, currency: eur, unit_amount: 1500${def === 'a' ? ', default: true' : ''}}
      - {key: cap-b, currency: eur, unit_amount: 1800${def === 'b' ? ', default: true' : ''}}
    variants: [{options: {}}]
`
    const keyOf = async (acct: Account) => {
      const product = await storeProduct(acct, 'cap')
      return product.prices.find((p: {id: string}) => p.id === product.default_price).lookup_key
    }
    // The default first in the file and last: reactivated together, either price may come back first.
    for (const def of ['a', 'b'] as const) {
      const acct = await gw.account()
      const c = client(gw, acct)
      expect((await apply(c, cap(def))).result.ok).to.equal(true)
      expect(await keyOf(acct)).to.equal(`cap-${def}`)
      expect((await apply(c, 'products: []', {prune: true})).result.ok).to.equal(true)
      expect((await storeProduct(acct, 'cap')).active).to.equal(false)
      const back = await apply(c, cap(def))
      expect(back.result.ok).to.equal(true)
      expect(back.plan.changes).to.deep.include({action: 'update', kind: 'product', key: 'cap', fields: ['default_price']})
      expect(await keyOf(acct)).to.equal(`cap-${def}`)
      expect(notUnchanged(await planCatalog(c, file(cap(def))))).to.deep.equal([])
    }
  })

  it('works through either door: applied with the secret key, the App API plans no change', async () => {
    const acct = await gw.account()
    expect((await apply(client(gw, acct, 'store'), TEE)).result.ok).to.equal(true)
    expect(notUnchanged(await planCatalog(client(gw, acct, 'app'), file(TEE)))).to.deep.equal([])
  })

  it('uploads local images once, named by content, and matches them on the next run', async () => {
    const acct = await gw.account()
    const c = client(gw, acct)
    const dir = mkdtempSync(join(tmpdir(), 'payapp-cat-'))
    writeFileSync(join(dir, 'tee red.png'), Buffer.from('89504e470d0a1a0a0000', 'hex'))
    const text = TEE.replace('    store_visible: true', '    store_visible: true\n    images: [./tee red.png, https://cdn.example.com/tee-2.png]').replace('title: Small red tee}', 'title: Small red tee, image: ./tee red.png}')
    const {result} = await apply(c, text, {baseDir: dir})
    expect(result.ok).to.equal(true)
    expect(c.rec.writes.filter((w) => w === 'POST /files')).to.have.length(1)
    const tee = await storeProduct(acct, 'tee')
    expect(tee.images[0]).to.match(/^files\/.+\/[0-9a-f]{16}-tee_red\.png$/)
    expect(tee.images[1]).to.equal('https://cdn.example.com/tee-2.png')
    expect(tee.variants.find((v: any) => v.sku === 'TEE-S-RED').image_path).to.equal(tee.images[0])
    expect(notUnchanged(await planCatalog(c, file(text), {baseDir: dir}))).to.deep.equal([])
  })

  it('reports a failed object with its key and the platform error, applies what does not depend on it, and fails the run', async () => {
    const acct = await gw.account()
    const c = client(gw, acct)
    await apply(c, 'products:\n  - {key: other, name: Other, options: {Size: [S]}, variants: [{sku: TAKEN, options: {Size: S}}]}\n')
    const text = TEE.replace('sku: TEE-M-BLUE', 'sku: TAKEN')
    const plan = await planCatalog(c, file(text))
    const events: any[] = []
    const result = await applyPlan(c, plan, {onEvent: (e) => events.push(e)})
    expect(result.ok).to.equal(false)
    expect(result.failed).to.equal(1)
    expect(result.failures[0]!.change).to.include({kind: 'variant', key: 'TAKEN'})
    expect(result.failures[0]!.error).to.include({code: 'sku_exists', status: 409})
    expect(events.at(-1)).to.include({completed: events.length, total: events.length})
    // Everything else landed.
    const tee = await storeProduct(acct, 'tee')
    expect(tee.variants.map((v: any) => v.sku)).to.have.members([null, 'TEE-S-RED'])
    expect((await storeProduct(acct, 'mug')).variants[0].sku).to.equal('MUG')
  })

  it('round trip: export of a seeded store, planned against the same store, shows no change', async () => {
    const seeded = await TestGateway.start({seed: true})
    try {
      const token = seeded.gw.seed!.installations.test.token
      const app = new AppClient({token, baseUrl: seeded.url})
      const exported = await exportCatalog(app)
      expect(exported.products.length).to.be.greaterThan(2)
      expect(exported.products.some((p) => p.variants.length > 0 && Object.keys(p.options).length > 0)).to.equal(true)
      for (const format of ['yaml', 'json', 'csv'] as const) {
        const text = serializeCatalog(exported, format)
        const plan = await planCatalog(app, parseCatalog(text, format, `export.${format}`), {csv: format === 'csv'})
        // CSV has no columns for some fields and lists only used option values: those are left, never changed.
        expect(notUnchanged(plan).filter((c) => c.action !== 'left'), format).to.deep.equal([])
      }
    } finally {
      await seeded.close()
    }
  })
})

describe('catalog apply against real rate limits', function () {
  this.timeout(60_000)
  let gw: TestGateway
  before(async () => {
    // Five writes a second: a catalogue of ~20 writes must be paced over several windows.
    gw = await TestGateway.start({rateLimit: true, rateLimits: {limits: {write: 5}, windowSeconds: 1}})
  })
  after(() => gw.close())

  const catalogue = (n: number) =>
    'products:\n' + Array.from({length: n}, (_, i) => `  - {key: p${i}, name: P${i}, prices: [{key: p${i}-eur, currency: eur, unit_amount: 1000}], options: {Size: [S, M]}, variants: [{sku: P${i}-S, options: {Size: S}}, {sku: P${i}-M, options: {Size: M}}]}\n`).join('')

  it('auto: follows the X-RateLimit headers and finishes with no failed row', async () => {
    const acct = await gw.account()
    const pacer = new Pacer('auto')
    const c = client(gw, acct, 'app', {onResponse: pacer.observe})
    const plan = await planCatalog(c, file(catalogue(5)))
    const result = await applyPlan(c, plan, {pacer, concurrency: 4})
    expect(result).to.include({ok: true, failed: 0, done: 25})
    expect(pacer.waits).to.be.greaterThan(0)
    expect(notUnchanged(await planCatalog(c, file(catalogue(5))))).to.deep.equal([])
  })

  it('without the headers, a 429 is waited out for its Retry-After and sent again with the same key: no failed row, no duplicate', async () => {
    const acct = await gw.account()
    const c = client(gw, acct)
    const plan = await planCatalog(c, file(catalogue(4)))
    const result = await applyPlan(c, plan, {concurrency: 4})
    expect(result).to.include({ok: true, failed: 0, done: 20})
    expect(c.rec.statuses).to.include(429)
    const products = (await acct.store('GET', '/products?limit=100')).body.data
    expect(products).to.have.length(4)
  })
})

describe('catalog apply through failing responses', function () {
  this.timeout(30_000)
  let gw: TestGateway
  let proxy: Server
  let proxyUrl: string
  let dropped = 0
  before(async () => {
    gw = await TestGateway.start()
    let writes = 0
    // Every third write reaches the gateway (and commits) but its answer is replaced by a 503: the
    // client cannot know it landed, as after a lost response.
    proxy = createServer(async (req, res) => {
      const chunks: Buffer[] = []
      for await (const c of req) chunks.push(c as Buffer)
      const upstream = await fetch(gw.url + req.url, {method: req.method, headers: req.headers as Record<string, string>, body: chunks.length ? Buffer.concat(chunks) : undefined})
      const body = Buffer.from(await upstream.arrayBuffer())
      if (req.method !== 'GET' && ++writes % 3 === 0) {
        dropped++
        res.writeHead(503, {'content-type': 'application/json'}).end(JSON.stringify({error: {type: 'api_error', code: 'unavailable', message: 'injected', request_id: 'req_proxy'}}))
        return
      }
      res.writeHead(upstream.status, Object.fromEntries(upstream.headers)).end(body)
    })
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
  })
  after(async () => {
    await new Promise((resolve) => proxy.close(resolve))
    await gw.close()
  })

  it('retries 5xx with the same idempotency keys: the catalogue lands once, with no duplicate', async () => {
    const acct = await gw.account()
    const c = new AppClient({token: acct.token, baseUrl: proxyUrl, retryDelays: {initialMs: 5, maxMs: 20}})
    const plan = await planCatalog(c, file(TEE))
    const result = await applyPlan(c, plan, {concurrency: 4})
    expect(result).to.include({ok: true, failed: 0})
    expect(dropped).to.be.greaterThan(2)
    const products = (await acct.store('GET', '/products?limit=100')).body.data
    expect(products.map((p: any) => p.metadata.catalog_key)).to.have.members(['tee', 'mug'])
    const tee = await storeProduct(acct, 'tee')
    expect(tee.prices).to.have.length(2)
    expect(tee.option_groups).to.have.length(2)
    expect(tee.variants).to.have.length(3)
    expect(notUnchanged(await planCatalog(new AppClient({token: acct.token, baseUrl: gw.url}), file(TEE)))).to.deep.equal([])
  })
})

describe('catalog pacer', () => {
  it('--rate N spaces writes at N a minute; off never waits', async () => {
    const paced = new Pacer(1200)
    for (let i = 0; i < 3; i++) await paced.beforeWrite()
    expect(paced.waits).to.equal(2)
    const off = new Pacer('off')
    for (let i = 0; i < 3; i++) await off.beforeWrite()
    expect(off.waits).to.equal(0)
  })

  it('auto waits for the window reset once the reported budget is spent, and not before', async () => {
    let now = 1_000_000
    const pacer = new Pacer('auto', () => now)
    const event = (remaining: number) => ({method: 'POST' as const, url: 'x', attempt: 1, status: 201, elapsedMs: 1, headers: {'x-ratelimit-remaining': String(remaining), 'x-ratelimit-reset': '0.05'}})
    await pacer.beforeWrite()
    pacer.observe(event(1))
    await pacer.beforeWrite()
    expect(pacer.waits).to.equal(0)
    pacer.observe(event(0))
    const waiting = pacer.beforeWrite()
    now += 60
    await waiting
    expect(pacer.waits).to.equal(1)
  })
})
