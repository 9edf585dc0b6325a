/**
 * `catalog apply` converges on every re-run: each defect of issue 19 as a service-level test over real
 * HTTP (the gateway on port 0), written before its fix.
 */
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {expect} from 'chai'

import {AppClient} from '@payapp/sdk'
import {applyCatalog, applyPlan, exportCatalog, parseCatalog, planCatalog, serializeCatalog, type CatalogClient} from '../../src/cli/services/catalog/index.js'
import {storeProduct} from '../helpers/catalog.js'
import {TestGateway, type Account} from '../helpers/gateway.js'

const TEE = `
products:
  - key: tee
    name: Classic T-Shirt
    prices:
      - {key: tee-eur, currency: eur, unit_amount: 2500, default: true}
      - {key: tee-club, currency: eur, unit_amount: 900, recurring: {interval: month}}
    options:
      Size: [S, M, L]
      Color: [Red, Blue]
    variants:
      - {sku: TEE-S-RED, options: {Size: S, Color: Red}, price: tee-eur, track_inventory: true, stock_qty: 10}
      - {sku: TEE-M-BLUE, options: {Size: M, Color: Blue}}
`

const file = (text: string) => parseCatalog(text, 'yaml', 'test.yaml')
const pending = <C extends {action: string}>(plan: {changes: C[]}) => plan.changes.filter((c) => !['unchanged', 'left'].includes(c.action))

describe('catalog apply converges (issue 19)', function () {
  this.timeout(30_000)
  let gw: TestGateway
  before(async () => {
    gw = await TestGateway.start()
  })
  after(() => gw.close())

  const appClient = (acct: Account): CatalogClient => new AppClient({token: acct.token, baseUrl: gw.url})
  async function apply(c: CatalogClient, text: string, opts: {prune?: boolean} = {}) {
    const plan = await planCatalog(c, file(text), opts)
    const result = await applyPlan(c, plan, {concurrency: 4})
    return {plan, result}
  }

  describe('1: a key names one intended write, never its content', () => {
    it('a variant removed with --prune and put back in the file is created again', async () => {
      const acct = await gw.account()
      const c = appClient(acct)
      expect((await apply(c, TEE)).result.ok).to.equal(true)
      const without = TEE.replace(/\n {6}- \{sku: TEE-M-BLUE.*\n/, '\n')
      expect((await apply(c, without, {prune: true})).result.ok).to.equal(true)
      expect((await storeProduct(acct, 'tee')).variants.map((v: any) => v.sku)).to.have.members([null, 'TEE-S-RED'])
      const back = await apply(c, TEE)
      expect(back.result.ok).to.equal(true)
      expect((await storeProduct(acct, 'tee')).variants.map((v: any) => v.sku)).to.have.members([null, 'TEE-S-RED', 'TEE-M-BLUE'])
      expect(pending(await planCatalog(c, file(TEE)))).to.deep.equal([])
    })

    it('a price changed and reverted (2700 → 2990 → 2700) ends on 2700, the default, with one active price per key', async () => {
      const acct = await gw.account()
      const c = appClient(acct)
      for (const amount of [2500, 2700, 2990, 2700]) {
        const {result} = await apply(c, TEE.replace('unit_amount: 2500', `unit_amount: ${amount}`))
        expect(result, `apply at ${amount}`).to.include({ok: true, failed: 0})
      }
      const tee = await storeProduct(acct, 'tee')
      const active = tee.prices.filter((p: any) => p.lookup_key === 'tee-eur' && p.active)
      expect(active.map((p: any) => p.unit_amount)).to.deep.equal([2700])
      expect(tee.default_price).to.equal(active[0].id)
      expect(pending(await planCatalog(c, file(TEE.replace('unit_amount: 2500', 'unit_amount: 2700'))))).to.deep.equal([])
    })

    it('applyCatalog reads the store back and reports what still differs instead of success', async () => {
      const acct = await gw.account()
      const c = appClient(acct)
      // A client whose variant creates answer 200 without reaching the platform: as a stale replay does.
      const lying = new AppClient({token: acct.token, baseUrl: gw.url})
      const realCreate = lying.products.variants.create.bind(lying.products.variants)
      lying.products.variants.create = (async (...args: Parameters<typeof realCreate>) => {
        if ((args[1] as {sku?: string}).sku === 'TEE-M-BLUE') return {} as never
        return realCreate(...args)
      }) as typeof realCreate
      const out = await applyCatalog(lying, file(TEE), {concurrency: 4})
      expect(out.result.ok).to.equal(true)
      expect(out.converged).to.equal(false)
      expect(out.remaining.map((ch) => `${ch.action} ${ch.kind} ${ch.key}`)).to.deep.equal(['create variant TEE-M-BLUE'])
      // A re-run converges.
      const again = await applyCatalog(c, file(TEE), {concurrency: 4})
      expect(again).to.include({converged: true})
      expect(again.remaining).to.deep.equal([])
    })
  })

  describe('2: option groups follow the file', () => {
    const groups = ['Size', 'Color', 'Fit', 'Sleeve']
    const fourGroups = (n: number) =>
      'products:\n' +
      Array.from({length: n}, (_, i) => {
        const options = groups.map((g) => `${g}: [${g[0]}${i}a, ${g[0]}${i}b]`).join(', ')
        const combo = groups.map((g) => `${g}: ${g[0]}${i}a`).join(', ')
        return `  - {key: g${i}, name: G${i}, prices: [{key: g${i}-eur, currency: eur, unit_amount: 1000}], options: {${options}}, variants: [{sku: G${i}-A, options: {${combo}}}]}\n`
      }).join('')

    it('a fresh apply creates every product\'s groups in the file\'s order, whatever order the requests arrive in', async () => {
      const acct = await gw.account()
      const c = new AppClient({token: acct.token, baseUrl: gw.url})
      // The network may deliver concurrent requests in any order: here the first group's create is always late.
      const create = c.products.options.create.bind(c.products.options)
      c.products.options.create = (async (...args: Parameters<typeof create>) => {
        if (args[1].name === groups[0]) await new Promise((resolve) => setTimeout(resolve, 30))
        return create(...args)
      }) as typeof create
      const text = fourGroups(3)
      expect((await applyPlan(c, await planCatalog(c, file(text)), {concurrency: 8})).ok).to.equal(true)
      const products = (await acct.store('GET', '/products?limit=100')).body.data as any[]
      const orders = await Promise.all(products.map(async (p) => (await acct.store('GET', `/products/${p.id}`)).body.option_groups.map((g: any) => g.name)))
      expect(orders).to.deep.equal([groups, groups, groups])
      expect(pending(await planCatalog(c, file(text)))).to.deep.equal([])
    })

    it('groups stored in another order than the file\'s never plan a replace of variants', async () => {
      const acct = await gw.account()
      const c = appClient(acct)
      const text = fourGroups(1)
      const product = (await acct.store('POST', '/products', {body: {name: 'G0', metadata: {catalog_key: 'g0'}, price: {currency: 'eur', unit_amount: 1000}}})).body
      await acct.store('PATCH', `/products/${product.id}/prices/${product.default_price}`, {body: {lookup_key: 'g0-eur'}})
      const made: any[] = []
      for (const g of [...groups].reverse()) made.push((await acct.store('POST', `/products/${product.id}/options`, {body: {name: g, values: [`${g[0]}0a`, `${g[0]}0b`]}})).body)
      const options = made.map((g) => ({group: g.id, value: g.values[0].id}))
      expect((await acct.store('POST', `/products/${product.id}/variants`, {body: {sku: 'G0-A', options}})).status).to.equal(201)
      const plan = await planCatalog(c, file(text))
      expect(plan.changes.filter((ch) => ch.kind === 'variant').map((ch) => ch.action)).to.deep.equal(['unchanged'])
      expect(pending(plan)).to.deep.equal([])
    })
  })

  describe('found by the model test', () => {
    it('a sku moved to another variant (or two swapped) updates the variants in place, freeing the sku first', async () => {
      const acct = await gw.account()
      const c = appClient(acct)
      const two = 'products:\n  - {key: fit, name: Fit, prices: [{key: fit-eur, currency: eur, unit_amount: 2500}], options: {Fit: [Slim, Loose]}, variants: [{sku: F-1, options: {Fit: Slim}}, {options: {Fit: Loose}}]}\n'
      expect((await applyCatalog(c, file(two))).converged).to.equal(true)
      const moved = two.replace('{sku: F-1, options: {Fit: Slim}}, {options: {Fit: Loose}}', '{options: {Fit: Slim}}, {sku: F-1, options: {Fit: Loose}}')
      const run = await applyCatalog(c, file(moved))
      expect(run.result.failures).to.deep.equal([])
      expect(run.converged).to.equal(true)
      expect(run.plan.summary).to.include({replace: 0, create: 0, update: 2})
      const swapped = moved.replace('{options: {Fit: Slim}}', '{sku: F-2, options: {Fit: Slim}}').replace('{sku: F-1, options: {Fit: Loose}}', '{sku: F-2x, options: {Fit: Loose}}')
      expect((await applyCatalog(c, file(swapped))).converged).to.equal(true)
      const swap = swapped.replace('sku: F-2,', 'sku: TMP,').replace('sku: F-2x,', 'sku: F-2,').replace('sku: TMP,', 'sku: F-2x,')
      const again = await applyCatalog(c, file(swap))
      expect(again.result.failures).to.deep.equal([])
      expect(again.converged).to.equal(true)
      const fit = await storeProduct(acct, 'fit')
      expect(fit.variants.filter((v: any) => !v.is_default).map((v: any) => `${v.options[0].value_name}=${v.sku}`).sort()).to.deep.equal(['Loose=F-2', 'Slim=F-2x'])
    })
  })

  describe('5: a replace is one change, and not destructive', () => {
    it('a price whose amount changed plans as one replace, with nothing to confirm; a variant moved to another combination too', async () => {
      const acct = await gw.account()
      const c = appClient(acct)
      await apply(c, TEE)
      const edited = TEE.replace('unit_amount: 2500', 'unit_amount: 2700').replace('{sku: TEE-M-BLUE, options: {Size: M, Color: Blue}', '{sku: TEE-M-BLUE, options: {Size: L, Color: Blue}')
      const plan = await planCatalog(c, file(edited))
      expect(plan.summary).to.include({replace: 2, archive: 0, delete: 0})
      expect(pending(plan).map((ch) => `${ch.action} ${ch.kind} ${ch.key}`)).to.have.members(['replace price tee-eur', 'replace variant TEE-M-BLUE', 'update variant TEE-S-RED'])
      expect(plan.destructive).to.equal(false)
      const result = await applyPlan(c, plan)
      expect(result).to.include({ok: true})
      const tee = await storeProduct(acct, 'tee')
      expect(tee.prices.filter((p: any) => p.active && p.lookup_key === 'tee-eur').map((p: any) => p.unit_amount)).to.deep.equal([2700])
      expect(pending(await planCatalog(c, file(edited)))).to.deep.equal([])
    })
  })

  describe('3: bytes already uploaded are not sent again', () => {
    it('a second run uploads nothing, and a new product with an image the store already has reuses it', async () => {
      const acct = await gw.account()
      const posts: string[] = []
      const c = new AppClient({
        token: acct.token,
        baseUrl: gw.url,
        onRequest: (e) => {
          if (e.method === 'POST' && e.attempt === 1) posts.push(new URL(e.url).pathname.replace(/^\/v1\/app/, ''))
        },
      })
      const dir = mkdtempSync(join(tmpdir(), 'payapp-cat-img-'))
      writeFileSync(join(dir, 'tee.png'), Buffer.from('89504e470d0a1a0a0001', 'hex'))
      const withImages = TEE.replace('    name: Classic T-Shirt', '    name: Classic T-Shirt\n    images: [./tee.png]').replace('{sku: TEE-M-BLUE, options: {Size: M, Color: Blue}}', '{sku: TEE-M-BLUE, options: {Size: M, Color: Blue}, image: ./tee.png}')
      const first = await applyPlan(c, await planCatalog(c, file(withImages), {baseDir: dir}))
      expect(first.ok).to.equal(true)
      expect(posts.filter((p) => p === '/files')).to.have.length(1)

      const second = await planCatalog(c, file(withImages), {baseDir: dir})
      expect(second.uploads).to.deep.equal([])
      posts.length = 0
      expect((await applyPlan(c, second)).ok).to.equal(true)
      expect(posts).to.deep.equal([])

      const more = withImages + '  - {key: cap, name: Cap, images: [./tee.png], prices: [{key: cap-eur, currency: eur, unit_amount: 1500}]}\n'
      const third = await planCatalog(c, file(more), {baseDir: dir})
      expect(third.uploads).to.deep.equal([])
      expect((await applyPlan(c, third)).ok).to.equal(true)
      expect(posts.filter((p) => p === '/files')).to.deep.equal([])
      expect((await storeProduct(acct, 'cap')).images).to.deep.equal((await storeProduct(acct, 'tee')).images)
    })
  })

  describe('7: the summary counts what the plan counts', () => {
    const actionable = (s: {create: number; update: number; replace: number; archive: number; delete: number}) => s.create + s.update + s.replace + s.archive + s.delete

    it('applied changes equal the plan\'s changes: inline prices, uploads and both halves of a replace counted once', async () => {
      const acct = await gw.account()
      const c = appClient(acct)
      const dir = mkdtempSync(join(tmpdir(), 'payapp-cat-count-'))
      writeFileSync(join(dir, 'mug.png'), Buffer.from('89504e470d0a1a0a0002', 'hex'))
      const text = TEE + '  - {key: mug, name: Mug, images: [./mug.png], prices: [{key: mug-eur, currency: eur, unit_amount: 1200}]}\n'
      const events: number[] = []
      const first = await planCatalog(c, file(text), {baseDir: dir})
      const r1 = await applyPlan(c, first, {onEvent: (e) => events.push(e.completed)})
      expect(r1).to.include({ok: true, done: actionable(first.summary), total: actionable(first.summary)})
      expect(events).to.deep.equal(Array.from({length: r1.total}, (_, i) => i + 1))
      const edited = text.replace('unit_amount: 2500', 'unit_amount: 2700').replace('{sku: TEE-M-BLUE, options: {Size: M, Color: Blue}', '{sku: TEE-M-BLUE, options: {Size: L, Color: Blue}')
      const second = await planCatalog(c, file(edited), {baseDir: dir})
      const r2 = await applyPlan(c, second)
      expect(r2).to.include({ok: true, done: actionable(second.summary), total: 3})
    })

    it('a stopped run starts no new write, counts what landed, and a re-run finishes', async () => {
      const acct = await gw.account()
      const c = appClient(acct)
      const controller = new AbortController()
      const plan = await planCatalog(c, file(TEE))
      const result = await applyPlan(c, plan, {concurrency: 1, signal: controller.signal, onEvent: (e) => e.completed === 2 && controller.abort()})
      expect(result).to.include({stopped: true, ok: false, done: 2, failed: 0, skipped: 0})
      expect(result.total).to.equal(actionable(plan.summary))
      const again = await applyCatalog(c, file(TEE))
      expect(again.converged).to.equal(true)
    })
  })

  describe('8: export writes what differs from the defaults', () => {
    it('leaves out defaults (tax_behavior, generated titles, highlight, sort orders, empty CSV columns), round-trips, and --full keeps them', async () => {
      const acct = await gw.account()
      const c = appClient(acct)
      const source = TEE.replace('track_inventory: true, stock_qty: 10}', 'track_inventory: true, stock_qty: 10, title: Small red tee}')
      await applyCatalog(c, file(source))
      const short = serializeCatalog(await exportCatalog(c), 'yaml', false)
      for (const dflt of ['tax_behavior: unspecified', 'highlight: false', 'sort_order:', 'default: true', 'title: M / Blue', 'interval_count: 1', 'usage_type: licensed', 'store_visible: true', 'track_inventory: false']) {
        expect(short, dflt).not.to.contain(dflt)
      }
      expect(short).to.contain('title: Small red tee')
      const full = serializeCatalog(await exportCatalog(c, {full: true}), 'yaml')
      for (const dflt of ['tax_behavior: unspecified', 'highlight: false', 'sort_order:', 'title: M / Blue']) expect(full, dflt).to.contain(dflt)
      expect(short.split('\n').length).to.be.below(full.split('\n').length - 10)
      const shortCsv = serializeCatalog(await exportCatalog(c), 'csv', false)
      expect(shortCsv.split('\n')[0]).to.equal('product_key,name,price_key,price_currency,price_unit_amount,price_recurring_interval,sku,stock_qty,track_inventory,title,option:Size,option:Color')
      for (const [text, format] of [[short, 'yaml'], [shortCsv, 'csv']] as const) {
        const plan = await planCatalog(c, parseCatalog(text, format, `export.${format}`), {csv: format === 'csv'})
        expect(pending(plan), format).to.deep.equal([])
      }
    })
  })
})
