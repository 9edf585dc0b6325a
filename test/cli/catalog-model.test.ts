/**
 * The catalogue's promise, tested as a model (fast-check's `fc.commands` + `fc.asyncModelRun`): generated
 * catalogues (products, prices with keys, up to 4 option groups, variants with stock, local images) and
 * random edit sequences (add, remove with --prune, put back what was removed, reorder groups and values,
 * change and revert prices, rename, move a sku between variants, new option groups) applied by the real
 * CLI (a process) to a real gateway (HTTP, port 0), some applies killed with `kill -9` at a random moment.
 * The model is the file: after every apply that exits 0, `catalog plan` shows no change and the store read
 * back equals the file; an apply that was killed is run again and must then exit 0.
 *
 * `npm test` runs a short budget; `npm run test:long` runs PAYAPP_CATALOG_MODEL_SECONDS (default 600) of
 * sequences. A failure prints its seed and path: add them to REGRESSIONS, which test:long replays, and write
 * the case as a test of its own that `npm test` runs.
 */
import {spawn} from 'node:child_process'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {expect} from 'chai'
import fc from 'fast-check'

import {BIN, cliEnv, ROOT, runCli, tempHome} from '../helpers/cli.js'
import {TestGateway, type Account} from '../helpers/gateway.js'

// ---------------------------------------------------------------- the model: a catalogue file

interface Variant {
  sku?: string
  options: Record<string, string>
  track_inventory?: boolean
  stock_qty?: number
  price?: string
  image?: string
}
interface Product {
  key: string
  name: string
  images: string[]
  prices: {key: string; currency: 'eur'; unit_amount: number; recurring?: {interval: 'month'}}[]
  options: Record<string, string[]>
  variants: Variant[]
}
interface Model {
  products: Product[]
  /** Removed from the file, to be put back later. */
  removedProducts: Product[]
  removedVariants: {product: string; variant: Variant}[]
  skuCounter: number
}
interface Real {
  acct: Account
  env: Record<string, string>
  dir: string
  file: string
  home: string
}

const GROUPS = ['Size', 'Color', 'Fit', 'Sleeve'] as const
const VALUES: Record<(typeof GROUPS)[number], string[]> = {Size: ['S', 'M', 'L'], Color: ['Red', 'Blue', 'Gold'], Fit: ['Slim', 'Loose'], Sleeve: ['Short', 'Long', 'None']}
const AMOUNTS = [2500, 2700, 2990]
const IMAGES = ['img-a.png', 'img-b.png']
const KEYS = ['tee', 'mug', 'cap', 'bag']

/** What a product is made of before it has a key: generated once, built into a product for any key. */
const rawProduct = fc.record({
  name: fc.constantFrom('Tee', 'Mug', 'Cap', 'Hoodie'),
  amounts: fc.array(fc.constantFrom(...AMOUNTS), {minLength: 1, maxLength: 2}),
  club: fc.boolean(),
  groups: fc.shuffledSubarray([...GROUPS], {minLength: 0, maxLength: 4}),
  valueCounts: fc.array(fc.integer({min: 1, max: 3}), {minLength: 4, maxLength: 4}),
  picks: fc.uniqueArray(fc.nat({max: 80}), {maxLength: 4}),
  skus: fc.array(fc.boolean(), {minLength: 4, maxLength: 4}),
  stock: fc.array(fc.option(fc.integer({min: 0, max: 20}), {freq: 2}), {minLength: 4, maxLength: 4}),
  priceRefs: fc.array(fc.boolean(), {minLength: 4, maxLength: 4}),
  image: fc.option(fc.constantFrom(...IMAGES)),
  variantImage: fc.option(fc.constantFrom(...IMAGES), {freq: 3}),
})
type RawProduct = typeof rawProduct extends fc.Arbitrary<infer T> ? T : never

function combinations(options: Record<string, string[]>): Record<string, string>[] {
  return Object.entries(options).reduce<Record<string, string>[]>((acc, [g, values]) => acc.flatMap((c) => values.map((v) => ({...c, [g]: v}))), [{}])
}

function optionsOf(raw: Pick<RawProduct, 'groups' | 'valueCounts'>): Record<string, string[]> {
  return Object.fromEntries(raw.groups.map((g) => [g, VALUES[g].slice(0, Math.min(raw.valueCounts[GROUPS.indexOf(g)]!, VALUES[g].length))]))
}

function variantsOf(key: string, raw: RawProduct, options: Record<string, string[]>, m: Pick<Model, 'skuCounter'>, prices: Product['prices']): Variant[] {
  const withSku = (i: number) => (raw.skus[i] ? {sku: `${key}-${m.skuCounter++}`} : {})
  // Explicit either way: a field the file leaves out is one the catalogue does not manage (kept as stored).
  const stock = (i: number) => (raw.stock[i] === null ? {track_inventory: false} : {track_inventory: true, stock_qty: raw.stock[i]!})
  const price = (i: number) => (raw.priceRefs[i] && prices[1] ? {price: prices[1].key} : {})
  if (Object.keys(options).length === 0) return raw.skus[0] || raw.stock[0] !== null ? [{options: {}, ...withSku(0), ...stock(0)}] : []
  const combos = combinations(options)
  const chosen = [...new Set(raw.picks.map((n) => n % combos.length))]
  return chosen.map((c, i) => ({options: combos[c]!, ...withSku(i), ...stock(i), ...price(i), ...(i === 0 && raw.variantImage ? {image: raw.variantImage} : {})}))
}

function buildProduct(key: string, raw: RawProduct, m: Pick<Model, 'skuCounter'>): Product {
  const prices: Product['prices'] = raw.amounts.map((unit_amount, i) => ({key: `${key}-${'ab'[i]}`, currency: 'eur' as const, unit_amount}))
  if (raw.club) prices.push({key: `${key}-club`, currency: 'eur', unit_amount: 900, recurring: {interval: 'month'}})
  const options = optionsOf(raw)
  return {key, name: raw.name, images: raw.image ? [raw.image] : [], prices, options, variants: variantsOf(key, raw, options, m, prices)}
}

const fileOf = (m: Model) => JSON.stringify({products: m.products}, null, 2)

// ---------------------------------------------------------------- running the CLI

const stats = {sequences: 0, applies: 0, kills: 0, reruns: 0}

function apply(r: Real, prune: boolean, killAfterMs: number | null): Promise<{code: number | null; signal: NodeJS.Signals | null; stderr: string}> {
  const args = [BIN, 'catalog', 'apply', r.file, '--yes', ...(prune ? ['--prune'] : [])]
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {cwd: ROOT, env: cliEnv(r.home, r.env), stdio: ['ignore', 'ignore', 'pipe']})
    stats.applies++
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    const timer = killAfterMs === null ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs)
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({code, signal, stderr})
    })
  })
}

/** Applies the model's file: killed at a random moment when asked, then run again; must end in exit 0 and agree with the file. */
async function applyAndCheck(m: Model, r: Real, prune: boolean, killAfterMs: number | null): Promise<void> {
  writeFileSync(r.file, fileOf(m))
  const first = await apply(r, prune, killAfterMs)
  if (first.signal === 'SIGKILL') {
    stats.kills++
    stats.reruns++
    const again = await apply(r, prune, null)
    expect(again.code, `re-run after kill -9:\n${again.stderr}`).to.equal(0)
  } else {
    expect(first.code, `apply:\n${first.stderr}`).to.equal(0)
  }
  const plan = await runCli(['catalog', 'plan', r.file, '--json', ...(prune ? ['--prune'] : [])], {env: r.env, home: r.home})
  expect(plan.code, plan.stderr).to.equal(0)
  const pending = plan.json().changes.filter((c: {action: string}) => !['unchanged', 'left'].includes(c.action))
  expect(pending, 'plan after exit 0').to.deep.equal([])
  await expectStoreEqualsFile(m, r)
}

// ---------------------------------------------------------------- the store read back, compared with the file

async function expectStoreEqualsFile(m: Model, r: Real): Promise<void> {
  const listed: any[] = []
  for (let offset = 0; ; offset += 100) {
    const page = (await r.acct.store('GET', `/products?limit=100&offset=${offset}`)).body
    listed.push(...page.data)
    if (!page.has_more) break
  }
  const active = listed.filter((p) => p.active)
  expect(active.map((p) => p.metadata.catalog_key).sort(), 'active products').to.deep.equal(m.products.map((p) => p.key).sort())
  const allKeys = new Map<string, number>()
  for (const want of m.products) {
    const have = (await r.acct.store('GET', `/products/${active.find((p) => p.metadata.catalog_key === want.key).id}`)).body
    const at = want.key
    expect(have.name, `${at} name`).to.equal(want.name)
    expect(have.images.map((i: string) => i.replace(/^.*\/[0-9a-f]{16}-/, '')), `${at} images`).to.deep.equal(want.images)
    const prices = have.prices.filter((p: any) => p.active)
    for (const p of prices) if (p.lookup_key) allKeys.set(p.lookup_key, (allKeys.get(p.lookup_key) ?? 0) + 1)
    expect(prices.map((p: any) => [p.lookup_key, p.currency, p.unit_amount, p.recurring?.interval ?? null]).sort(), `${at} active prices`).to.deep.equal(
      want.prices.map((p) => [p.key, p.currency, p.unit_amount, p.recurring?.interval ?? null]).sort(),
    )
    const priceId = (key: string) => prices.find((p: any) => p.lookup_key === key)?.id
    expect(have.default_price, `${at} default price`).to.equal(priceId(want.prices[0]!.key))
    // Group and value order is the platform's creation order (no reorder exists): compared as sets.
    const groups = Object.fromEntries(have.option_groups.map((g: any) => [g.name, g.values.map((v: any) => v.value).sort()]))
    expect(groups, `${at} option groups`).to.deep.equal(Object.fromEntries(Object.entries(want.options).map(([g, v]) => [g, [...v].sort()])))
    // A variant the file gives no image or sku keeps what it has (a field left out is not managed): not compared.
    const comboKey = (options: Record<string, string>) => JSON.stringify(Object.entries(options).sort())
    const imageFree = new Set(want.variants.filter((v) => v.image === undefined).map((v) => comboKey(v.options)))
    const skuFree = new Set(want.variants.filter((v) => v.sku === undefined).map((v) => comboKey(v.options)))
    const shown = (v: any) => {
      const options = Object.fromEntries(v.options.map((o: any) => [o.group_name, o.value_name]))
      return JSON.stringify({
        sku: skuFree.has(comboKey(options)) ? undefined : (v.sku ?? undefined),
        options: Object.fromEntries(Object.entries(options).sort()),
        stock: v.track_inventory ? v.stock_qty : null,
        price: v.price_inherited ? null : v.price,
        image: imageFree.has(comboKey(options)) ? undefined : v.image_path ? v.image_path.replace(/^.*\/[0-9a-f]{16}-/, '') : null,
      })
    }
    const wanted = (v: Variant) =>
      JSON.stringify({
        sku: v.sku,
        options: Object.fromEntries(Object.entries(v.options).sort()),
        stock: v.track_inventory ? v.stock_qty : null,
        price: v.price ? priceId(v.price) : null,
        image: v.image,
      })
    const fileDefault = want.variants.find((v) => Object.keys(v.options).length === 0)
    const storeVariants = have.variants.filter((v: any) => !v.is_default || fileDefault).map(shown).sort()
    expect(storeVariants, `${at} variants`).to.deep.equal(want.variants.map(wanted).sort())
  }
  for (const [key, n] of allKeys) expect(n, `active prices with lookup_key ${key}`).to.equal(1)
}

// ---------------------------------------------------------------- edits

type Cmd = fc.AsyncCommand<Model, Real>
const pick = <T,>(list: readonly T[], n: number): T | undefined => (list.length === 0 ? undefined : list[n % list.length])
const killArb = fc.option(fc.integer({min: 50, max: 1500}), {freq: 3})

abstract class Edit implements Cmd {
  constructor(readonly kill: number | null) {}
  abstract label: string
  /** Removes something: applied with --prune. */
  prune = false
  check(m: Readonly<Model>): boolean {
    return m.products.length > 0
  }
  /** Edits the model; false when there was nothing to edit. */
  abstract edit(m: Model): boolean
  async run(m: Model, r: Real): Promise<void> {
    if (!this.edit(m)) return
    await applyAndCheck(m, r, this.prune, this.kill)
  }
  toString() {
    return `${this.label}${this.kill === null ? '' : ` kill@${this.kill}ms`}`
  }
}

class AddProduct extends Edit {
  label = 'add product'
  constructor(readonly raw: RawProduct, kill: number | null) {
    super(kill)
  }
  override check(m: Readonly<Model>) {
    return KEYS.some((k) => !m.products.some((p) => p.key === k) && !m.removedProducts.some((p) => p.key === k))
  }
  edit(m: Model) {
    const key = KEYS.find((k) => !m.products.some((p) => p.key === k) && !m.removedProducts.some((p) => p.key === k))!
    m.products.push(buildProduct(key, this.raw, m))
    return true
  }
}

class RemoveProduct extends Edit {
  label = 'remove product (--prune)'
  override prune = true
  constructor(readonly n: number, kill: number | null) {
    super(kill)
  }
  edit(m: Model) {
    const [gone] = m.products.splice(this.n % m.products.length, 1)
    m.removedProducts.push(gone!)
    return true
  }
}

class PutBackProduct extends Edit {
  label = 'put back a removed product'
  constructor(kill: number | null) {
    super(kill)
  }
  override check(m: Readonly<Model>) {
    return m.removedProducts.length > 0
  }
  edit(m: Model) {
    m.products.push(m.removedProducts.pop()!)
    return true
  }
}

class RemoveVariant extends Edit {
  label = 'remove variant (--prune)'
  override prune = true
  constructor(readonly n: number, readonly v: number, kill: number | null) {
    super(kill)
  }
  edit(m: Model) {
    const p = pick(m.products.filter((x) => x.variants.some((v) => Object.keys(v.options).length > 0)), this.n)
    if (!p) return false
    const candidates = p.variants.filter((v) => Object.keys(v.options).length > 0)
    const gone = candidates[this.v % candidates.length]!
    p.variants.splice(p.variants.indexOf(gone), 1)
    m.removedVariants.push({product: p.key, variant: gone})
    return true
  }
}

class PutBackVariant extends Edit {
  label = 'put back a removed variant'
  constructor(kill: number | null) {
    super(kill)
  }
  override check(m: Readonly<Model>) {
    return m.removedVariants.length > 0
  }
  edit(m: Model) {
    const {product, variant} = m.removedVariants.pop()!
    const p = m.products.find((x) => x.key === product)
    const fits = p && Object.keys(variant.options).length === Object.keys(p.options).length && Object.entries(variant.options).every(([g, v]) => p.options[g]?.includes(v))
    const combo = JSON.stringify(Object.entries(variant.options).sort())
    if (!fits || p.variants.some((v) => JSON.stringify(Object.entries(v.options).sort()) === combo || (variant.sku && v.sku === variant.sku))) return false
    if (variant.price && !p.prices.some((x) => x.key === variant.price)) return false
    p.variants.push(variant)
    return true
  }
}

class ChangePrice extends Edit {
  label = 'change a price (replace, or revert)'
  constructor(readonly n: number, readonly which: number, readonly amount: number, kill: number | null) {
    super(kill)
  }
  edit(m: Model) {
    const p = pick(m.products, this.n)!
    const price = p.prices.filter((x) => !x.recurring)[this.which % p.prices.filter((x) => !x.recurring).length]!
    if (price.unit_amount === this.amount) return false
    price.unit_amount = this.amount
    return true
  }
}

class Rename extends Edit {
  label = 'rename a product'
  constructor(readonly n: number, readonly name: string, kill: number | null) {
    super(kill)
  }
  edit(m: Model) {
    const p = pick(m.products, this.n)!
    if (p.name === this.name) return false
    p.name = this.name
    return true
  }
}

class Restock extends Edit {
  label = 'change stock'
  constructor(readonly n: number, readonly v: number, readonly qty: number, kill: number | null) {
    super(kill)
  }
  edit(m: Model) {
    const p = pick(m.products.filter((x) => x.variants.length > 0), this.n)
    if (!p) return false
    const v = p.variants[this.v % p.variants.length]!
    v.track_inventory = true
    v.stock_qty = this.qty
    return true
  }
}

class Reorder extends Edit {
  label = 'reorder groups and values'
  constructor(readonly n: number, readonly g: number, kill: number | null) {
    super(kill)
  }
  edit(m: Model) {
    const p = pick(m.products.filter((x) => Object.keys(x.options).length > 0), this.n)
    if (!p) return false
    const entries = Object.entries(p.options).reverse()
    const [group, values] = entries[this.g % entries.length]!
    p.options = Object.fromEntries(entries.map(([g, v]) => [g, g === group ? [...values].reverse() : v]))
    return true
  }
}

class MoveSku extends Edit {
  label = 'move a sku to another variant'
  constructor(readonly n: number, readonly from: number, readonly to: number, kill: number | null) {
    super(kill)
  }
  edit(m: Model) {
    const p = pick(m.products.filter((x) => x.variants.length > 1 && x.variants.some((v) => v.sku)), this.n)
    if (!p) return false
    const withSku = p.variants.filter((v) => v.sku)
    const a = withSku[this.from % withSku.length]!
    const others = p.variants.filter((v) => v !== a)
    const b = others[this.to % others.length]!
    ;[a.sku, b.sku] = [b.sku, a.sku]
    if (a.sku === undefined) delete a.sku
    if (b.sku === undefined) delete b.sku
    return true
  }
}

class SetImages extends Edit {
  label = 'change images'
  constructor(readonly n: number, readonly images: string[], kill: number | null) {
    super(kill)
  }
  edit(m: Model) {
    const p = pick(m.products, this.n)!
    p.images = this.images
    return true
  }
}

class NewOptions extends Edit {
  label = 'new option groups and variants (--prune)'
  override prune = true
  constructor(readonly n: number, readonly raw: RawProduct, kill: number | null) {
    super(kill)
  }
  edit(m: Model) {
    const p = pick(m.products, this.n)!
    p.options = optionsOf(this.raw)
    p.variants = variantsOf(p.key, this.raw, p.options, m, p.prices)
    m.removedVariants = m.removedVariants.filter((x) => x.product !== p.key)
    return true
  }
}

const edits = [
  fc.tuple(rawProduct, killArb).map(([raw, k]) => new AddProduct(raw, k)),
  fc.tuple(fc.nat(), killArb).map(([n, k]) => new RemoveProduct(n, k)),
  killArb.map((k) => new PutBackProduct(k)),
  fc.tuple(fc.nat(), fc.nat(), killArb).map(([n, v, k]) => new RemoveVariant(n, v, k)),
  killArb.map((k) => new PutBackVariant(k)),
  fc.tuple(fc.nat(), fc.nat(), fc.constantFrom(...AMOUNTS), killArb).map(([n, w, a, k]) => new ChangePrice(n, w, a, k)),
  fc.tuple(fc.nat(), fc.constantFrom('Tee', 'Mug', 'Cap', 'Hoodie'), killArb).map(([n, name, k]) => new Rename(n, name, k)),
  fc.tuple(fc.nat(), fc.nat(), fc.integer({min: 0, max: 50}), killArb).map(([n, v, q, k]) => new Restock(n, v, q, k)),
  fc.tuple(fc.nat(), fc.nat(), killArb).map(([n, g, k]) => new Reorder(n, g, k)),
  fc.tuple(fc.nat(), fc.nat(), fc.nat(), killArb).map(([n, a, b, k]) => new MoveSku(n, a, b, k)),
  fc.tuple(fc.nat(), fc.subarray(IMAGES), killArb).map(([n, i, k]) => new SetImages(n, i, k)),
  fc.tuple(fc.nat(), rawProduct, killArb).map(([n, raw, k]) => new NewOptions(n, raw, k)),
]

// ---------------------------------------------------------------- the property

const initial = fc.uniqueArray(fc.tuple(fc.constantFrom(...KEYS), rawProduct), {minLength: 1, maxLength: 3, selector: ([k]) => k})

function property(gw: () => TestGateway, maxCommands: number) {
  return fc.asyncProperty(initial, fc.commands(edits, {maxCommands}), async (products, cmds) => {
    stats.sequences++
    const acct = await gw().account()
    const dir = mkdtempSync(join(tmpdir(), 'payapp-catalog-model-'))
    writeFileSync(join(dir, 'img-a.png'), Buffer.from('89504e470d0a1a0a00a1', 'hex'))
    writeFileSync(join(dir, 'img-b.png'), Buffer.from('89504e470d0a1a0a00b2', 'hex'))
    const real: Real = {acct, env: {PAYAPP_TOKEN: acct.token, PAYAPP_BASE_URL: gw().url}, dir, file: join(dir, 'catalog.json'), home: tempHome()}
    const model: Model = {products: [], removedProducts: [], removedVariants: [], skuCounter: 0}
    model.products = products.map(([key, raw]) => buildProduct(key, raw, model))
    await applyAndCheck(model, real, false, null)
    await fc.asyncModelRun(() => ({model, real}), cmds)
  })
}

/**
 * Failures found by longer runs, replayed by `npm run test:long`: {seed, path} as fast-check printed them. Each
 * also has a test of its own that `npm test` runs, which takes a second where the replay takes twenty (CLI
 * processes and kills): the sku moved to a variant whose combination the store has is catalog-converge.test.ts's
 * "a sku moved to another variant".
 */
const REGRESSIONS: {seed: number; path: string; note: string}[] = [
  {seed: -440521333, path: '0:0:0:0:1:1:2:3:2:3:4:4:3:3:5:4:4', note: 'a sku moved to a variant whose combination the store has (variant_exists, exit 8)'},
]

const LONG = process.env.PAYAPP_CATALOG_MODEL === 'long'
const LONG_SECONDS = Number(process.env.PAYAPP_CATALOG_MODEL_SECONDS ?? 600)

describe('catalog apply converges: a model of generated catalogues and edits (CLI processes, kill -9)', function () {
  this.timeout(LONG ? (LONG_SECONDS + 120) * 1000 : 120_000)
  let gw: TestGateway
  before(async () => {
    gw = await TestGateway.start()
  })
  after(async () => {
    await gw.close()
    process.stderr.write(`  catalogue model: ${stats.sequences} sequences, ${stats.applies} applies (${stats.kills} killed with kill -9, ${stats.reruns} re-runs)\n`)
  })

  for (const r of LONG ? REGRESSIONS : []) {
    it(`regression: ${r.note}`, async () => {
      await fc.assert(property(() => gw, 6), {seed: r.seed, path: r.path, numRuns: 1, endOnFailure: true})
    })
  }

  it(LONG ? `holds for ${LONG_SECONDS} s of generated sequences` : 'holds for a short budget of generated sequences (npm run test:long runs more)', async () => {
    await fc.assert(
      property(() => gw, LONG ? 8 : 4),
      LONG ? {numRuns: 1_000_000, interruptAfterTimeLimit: LONG_SECONDS * 1000, markInterruptAsFailure: false} : {numRuns: 3},
    )
  })
})
