/**
 * The same behaviour on SQLite and on PostgreSQL (README, "Where it is going"): generated sequences of
 * requests (a catalogue's products, prices, option groups, values and variants, their stock, checkouts,
 * payments and refunds; subscriptions, their confirmations and cancellations, the merchant's clock moved
 * over trials, renewals and dunning, and the events all of it emitted; valid and not, with names that
 * differ only by case, ASCII or not) sent to a gateway on each engine, one after the other, must be
 * answered alike: status, error code and param, and every field of every body, lists in the same order.
 * What differs by nature is named before comparing: ids by their order of first appearance on each
 * gateway, times, secrets, request ids, the merchant's slug, the gateway's own origin, and a clock's lead
 * on the wall clock (an advance that crosses a wall-clock second leads by one less, on either engine).
 * Runs with `npm run test:pg` (a SQLite gateway beside the PostgreSQL one), PAYAPP_ENGINES_RUNS sequences
 * (40); skipped on SQLite. It found PostgreSQL's unique index refusing the option value 'İ' beside 'i'
 * (test/gateway/option-case.test.ts).
 */
import {isDeepStrictEqual} from 'node:util'

import {expect} from 'chai'
import fc from 'fast-check'

import {TestGateway, type Account, type HttpGateway} from '../helpers/gateway.js'
import {startCluster, via, type Cluster} from '../helpers/processes.js'
import {onPostgres} from '../helpers/test-db.js'

/** What a generated step refers to: the `n`th (mod how many there are) of its kind on each gateway. */
type Kind = 'product' | 'price' | 'option_group' | 'option_value' | 'variant' | 'session' | 'payment' | 'order' | 'subscription' | 'invoice' | 'refund' | 'event'
type Ref = {kind: Kind; n: number}
/** A step: a request whose path and body may name earlier objects by `Ref`. */
type Step = {door: 'store' | 'app' | 'v1' | 'admin'; method: string; path: Array<string | Ref | typeof MERCHANT>; body?: unknown; key?: string}
/** The run's merchant on each gateway (its clock, its events). */
const MERCHANT = '<merchant>'

/** One gateway's side of a run: its account and the ids it answered, by kind, in order of appearance. */
class Side {
  readonly ids = new Map<Kind, string[]>()
  /** Every id seen, to its name (`product#0`): how the two sides' answers are compared. */
  readonly names = new Map<string, string>()
  private readonly acct: Account
  /**
   * `targets`: the gateway, or each process of several on one database, with the account (the same one on
   * each: `via`); `send` sends a step to the one its number picks.
   */
  constructor(private readonly targets: Array<{gw: HttpGateway; acct: Account}>) {
    this.acct = targets[0]!.acct
    // The merchant's own names: its ids and its store's slug (made of its id).
    const merchant = this.acct.merchant as {id: string; store: {id: string; slug?: string}}
    for (const [id, name] of [[merchant.id, '<merchant>'], [merchant.store.id, '<store>'], [merchant.store.slug, '<slug>']] as const) if (id) this.names.set(id, name)
  }

  resolve(value: unknown): unknown {
    if (value === MERCHANT) return this.acct.merchant.id
    if (isRef(value)) {
      const ids = this.ids.get(value.kind) ?? []
      // Nothing of the kind yet: an id of its shape that names nothing (a 404 on both).
      return ids.length === 0 ? `${PREFIX[value.kind]}_nothing` : ids[value.n % ids.length]
    }
    if (Array.isArray(value)) return value.map((v) => this.resolve(v))
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.resolve(v)]))
    return value
  }

  /** Records the ids an answer shows, in the order a depth-first walk meets them. */
  learn(node: unknown) {
    if (typeof node === 'string') return this.other(node)
    if (Array.isArray(node)) return node.forEach((n) => this.learn(n))
    if (!node || typeof node !== 'object') return
    const o = node as Record<string, unknown>
    const kind = KINDS[o.object as string]
    if (kind && typeof o.id === 'string') this.see(kind, o.id)
    if (typeof o.session_id === 'string') this.see('session', o.session_id)
    // A product's default price, which its create made: named by the product, not shown whole.
    if (typeof o.default_price === 'string') this.see('price', o.default_price)
    for (const v of Object.values(o)) this.learn(v)
  }

  /** Ids of what no step names (customers, charges): named by their prefix and order of appearance. */
  private readonly others = new Map<string, number>()
  private other(text: string) {
    const prefix = /^([a-z]+)_[A-Za-z0-9]{10,}$/.exec(text)?.[1]
    if (!prefix || this.names.has(text)) return
    const n = this.others.get(prefix) ?? 0
    this.others.set(prefix, n + 1)
    this.names.set(text, `<${prefix}~${n}>`)
  }

  private see(kind: Kind, id: string) {
    if (this.names.has(id)) return
    const list = this.ids.get(kind) ?? []
    this.ids.set(kind, [...list, id])
    this.names.set(id, `<${kind}#${list.length}>`)
  }

  /** The answer with what differs by nature named: ids, times, secrets, request ids, the origin. */
  normal(status: number, text: string): unknown {
    // Client secrets, also inside the URLs that carry them.
    let named = this.targets.reduce((t, {gw}) => t.replaceAll(gw.url, '<origin>'), text).replace(/\b\w+_secret_[A-Za-z0-9]+/g, '<secret>')
    // Longest first: no id is a prefix of another's replacement.
    for (const id of [...this.names.keys()].sort((a, b) => b.length - a.length)) named = named.replaceAll(id, this.names.get(id)!)
    const body = named ? JSON.parse(named) : undefined
    return {status, body: scrub(body)}
  }

  async send(step: Step, target = 0): Promise<{status: number; text: string; body: unknown}> {
    const {gw, acct} = this.targets[target % this.targets.length]!
    const path = step.path.map((p) => (typeof p === 'string' && p !== MERCHANT ? p : encodeURIComponent(String(this.resolve(p))))).join('')
    const opts = {body: this.resolve(step.body), ...(step.key ? {idempotencyKey: step.key} : {})}
    const res = step.door === 'admin' ? await gw.admin(step.method, path, opts.body) : await acct[step.door](step.method, path, opts)
    this.learn(res.body)
    return res
  }
}

const PREFIX: Record<Kind, string> = {product: 'prod', price: 'price', option_group: 'optgrp', option_value: 'optval', variant: 'var', session: 'cs', payment: 'py', order: 'ord', subscription: 'sub', invoice: 'in', refund: 're', event: 'evt'}
const KINDS: Record<string, Kind> = {product: 'product', price: 'price', option_group: 'option_group', option_value: 'option_value', variant: 'variant', 'checkout.session': 'session', payment: 'payment', order: 'order', subscription: 'subscription', invoice: 'invoice', refund: 'refund', event: 'event'}
const isRef = (v: unknown): v is Ref => !!v && typeof v === 'object' && 'kind' in v && 'n' in v && Object.keys(v).length === 2

/** Times (the two gateways' clocks read at different moments), secrets and request ids: named by kind. */
function scrub(node: unknown, key = ''): unknown {
  if (Array.isArray(node)) return node.map((n) => scrub(n))
  if (node && typeof node === 'object') {
    return Object.fromEntries(Object.entries(node).filter(([k]) => k !== 'request_id').map(([k, v]) => [k, scrub(v, k)]))
  }
  // Unix seconds of these years, and ISO times: wherever they are (periods, trials, due dates, expiries).
  if ((typeof node === 'number' && node >= 1e9 && node < 1e10) || (typeof node === 'string' && /^\d{4}-\d\d-\d\dT/.test(node))) return '<time>'
  if (/^(created|updated)$|_at$/.test(key) && node !== null) return '<time>'
  // A clock's lead on the wall clock: an advance that crosses a wall-clock second leads by one second less.
  if (key === 'offset_seconds') return '<offset>'
  if (/secret|token/.test(key) && typeof node === 'string') return '<secret>'
  return node
}

// ---------------------------------------------------------------- generated steps

const ref = (kind: Kind): fc.Arbitrary<Ref> => fc.nat({max: 7}).map((n) => ({kind, n}))
/** Texts that are one name to a case-insensitive check in one engine and not in another, and plain ones. */
const text = fc.oneof(
  fc.constantFrom('Size', 'size', 'SIZE', ' Size ', 'Größe', 'GRÖSSE', 'größe', 'Σ', 'σ', 'ς', 'İ', 'i', 'ǅ', 'ǆ', 'Ǆ', 'ﬀ', 'FF', '🙂', 'a'.repeat(100), 'a'.repeat(101), '', ' '),
  fc.string({unit: 'grapheme', minLength: 1, maxLength: 8}),
)
const currency = fc.constantFrom('eur', 'usd', 'EUR', 'xxx')
const amount = fc.oneof(fc.constantFrom(0, 249, 250, 1250, 99_999_999), fc.integer({min: 250, max: 100_000}))
const lookupKey = fc.constantFrom('basic', 'Basic', 'pro', 'ß')
const sku = fc.constantFrom('SKU-1', 'sku-1', 'SKU-2', 'ẞ', null)
const sortOrder = fc.oneof(fc.integer({min: -3, max: 3}), fc.constantFrom(1_000_000, -1_000_000, 1_000_001, 0.5))
const stock = fc.record({track_inventory: fc.boolean(), stock_qty: fc.integer({min: 0, max: 5})}, {requiredKeys: []})

const store = (method: string, path: Step['path'], body?: unknown, key?: string): Step => ({door: 'store', method, path, body, ...(key ? {key} : {})})
const price = fc.record({currency, unit_amount: amount})
const recurring = fc.record({interval: fc.constantFrom('day', 'week', 'month'), trial_period_days: fc.integer({min: 1, max: 3})}, {requiredKeys: ['interval']})
const validPrice = fc.record({currency: fc.constantFrom('eur', 'usd'), unit_amount: fc.integer({min: 250, max: 5000})})

/** What each run starts with, so that most later steps find something: 1 to 3 products, each with a price, maybe a recurring one, and 0 to 2 option groups. */
const prelude: fc.Arbitrary<Step[]> = fc
  .array(fc.tuple(fc.constantFrom('Shirt', 'Mug', 'Größe'), validPrice, fc.boolean(), fc.subarray(['Size', 'Color']), fc.subarray(['S', 'M', 'L'], {minLength: 1})), {minLength: 1, maxLength: 3})
  .map((products) =>
    products.flatMap(([name, p, monthly, groups, values], i) => [
      store('POST', ['/products'], {name, price: p}),
      ...(monthly ? [store('POST', ['/products/', {kind: 'product', n: i}, '/prices'], {...p, recurring: {interval: 'month'}})] : []),
      ...groups.map((group) => store('POST', ['/products/', {kind: 'product', n: i}, '/options'], {name: group, values})),
    ]),
  )

/** The steps after the prelude, weighted towards what makes and sells things. */
const step: fc.Arbitrary<Step> = fc.oneof(
  // The catalogue.
  {weight: 3, arbitrary: fc.record({name: text, price: fc.option(price, {nil: undefined})}, {requiredKeys: ['name']}).map((body) => store('POST', ['/products'], body))},
  fc.tuple(ref('product'), fc.record({name: text, description: fc.option(text), tags: fc.array(text, {maxLength: 3})}, {requiredKeys: []})).map(([p, body]) => store('PATCH', ['/products/', p], body)),
  ref('product').map((p) => store('DELETE', ['/products/', p])),
  ref('product').map((p) => store('GET', ['/products/', p])),
  fc
    .tuple(fc.integer({min: 1, max: 4}), fc.option(ref('product'), {nil: undefined}), fc.constantFrom('', '&expand=data.variants', '&expand=data.prices&expand=data.option_groups'))
    .map(([limit, after, expand]) => store('GET', after ? [`/products?limit=${limit}${expand}&starting_after=`, after] : [`/products?limit=${limit}${expand}`])),
  {
    weight: 2,
    arbitrary: fc
      .tuple(ref('product'), fc.record({currency, unit_amount: amount, recurring, lookup_key: lookupKey, transfer_lookup_key: fc.boolean(), set_as_default: fc.boolean(), active: fc.boolean()}, {requiredKeys: ['currency', 'unit_amount']}))
      .map(([p, body]) => store('POST', ['/products/', p, '/prices'], body)),
  },
  fc
    .tuple(ref('product'), ref('price'), fc.record({active: fc.boolean(), lookup_key: fc.option(lookupKey), nickname: fc.option(text)}, {requiredKeys: []}))
    .map(([p, pr, body]) => store('PATCH', ['/products/', p, '/prices/', pr], body)),
  ref('product').map((p) => store('GET', ['/products/', p, '/prices?limit=5'])),
  // Options and values.
  {weight: 2, arbitrary: fc.tuple(ref('product'), text, fc.array(text, {minLength: 1, maxLength: 4})).map(([p, name, values]) => store('POST', ['/products/', p, '/options'], {name, values}))},
  fc.tuple(ref('option_group'), text).map(([g, name]) => store('PATCH', ['/options/', g], {name})),
  ref('option_group').map((g) => store('DELETE', ['/options/', g])),
  {weight: 2, arbitrary: fc.tuple(ref('option_group'), text, fc.option(fc.integer({min: -2, max: 5}), {nil: undefined})).map(([g, value, sort_order]) => store('POST', ['/options/', g, '/values'], {value, sort_order}))},
  ref('option_value').map((v) => store('DELETE', ['/values/', v])),
  ref('product').map((p) => store('GET', ['/products/', p, '/options'])),
  // Variants and their stock.
  {
    weight: 4,
    arbitrary: fc
      .tuple(ref('product'), fc.array(fc.record({group: ref('option_group'), value: ref('option_value')}), {minLength: 1, maxLength: 2}), fc.record({sku, sort_order: sortOrder, price: ref('price')}, {requiredKeys: []}), stock)
      .map(([p, options, extra, inventory]) => store('POST', ['/products/', p, '/variants'], {options, ...extra, ...inventory})),
  },
  {weight: 2, arbitrary: fc.tuple(ref('variant'), fc.record({sku, sort_order: sortOrder, title: fc.option(text)}, {requiredKeys: []}), stock).map(([v, body, inventory]) => store('PATCH', ['/variants/', v], {...body, ...inventory}))},
  ref('variant').map((v) => store('DELETE', ['/variants/', v])),
  fc
    .tuple(ref('product'), fc.integer({min: 1, max: 5}), fc.option(ref('variant'), {nil: undefined}))
    .map(([p, limit, after]) => store('GET', after ? ['/products/', p, `/variants?limit=${limit}&starting_after=`, after] : ['/products/', p, `/variants?limit=${limit}`])),
  // Checkouts: stock held, sold, released; payments and orders.
  {
    weight: 3,
    arbitrary: fc
      .tuple(ref('product'), fc.option(ref('variant'), {nil: undefined}), fc.integer({min: 1, max: 4}), fc.option(fc.constantFrom('k1', 'k2'), {nil: undefined}))
      .map(([p, v, quantity, key]) => store('POST', ['/checkouts'], {product_id: p, variant_id: v, quantity}, key)),
  },
  {weight: 2, arbitrary: fc.tuple(ref('session'), fc.constantFrom('paid', 'declined', 'processing')).map(([s, outcome]): Step => ({door: 'admin', method: 'POST', path: ['/checkouts/', s, '/complete'], body: {outcome}}))},
  fc.constant(store('GET', ['/orders?limit=10'])),
  fc.tuple(ref('payment'), fc.option(fc.integer({min: 1, max: 3000}), {nil: undefined})).map(([py, amount]): Step => ({door: 'admin', method: 'POST', path: ['/payments/', py, '/refund'], body: {amount}})),
  // The merchant API's sessions: variants' stock held and released by updates and expiries, raw amounts, subscription mode.
  {
    weight: 3,
    arbitrary: fc
      .oneof(
        fc.array(fc.record({variant: ref('variant'), quantity: fc.integer({min: 1, max: 3})}), {minLength: 1, maxLength: 3}).map((line_items) => ({line_items})),
        fc.record({amount, currency, customer_name: fc.constant('Ada Lovelace'), customer_email: fc.constant('ada@example.com')}),
        ref('price').map((price_id) => ({mode: 'subscription', line_items: [{price_id}]})),
      )
      .map((body): Step => ({door: 'v1', method: 'POST', path: ['/checkout/sessions'], body})),
  },
  fc
    .tuple(ref('session'), fc.array(fc.record({variant: ref('variant'), quantity: fc.integer({min: 1, max: 3})}), {minLength: 1, maxLength: 2}), fc.option(fc.nat({max: 2}), {nil: undefined}))
    .map(([cs, line_items, revision]): Step => ({door: 'v1', method: 'PATCH', path: ['/checkout/sessions/', cs], body: {line_items, revision}})),
  ref('session').map((cs): Step => ({door: 'v1', method: 'POST', path: ['/checkout/sessions/', cs, '/expire']})),
  ref('session').map((cs): Step => ({door: 'v1', method: 'GET', path: ['/checkout/sessions/', cs]})),
  fc.constantFrom('', '&status=open', '&status=expired').map((q): Step => ({door: 'v1', method: 'GET', path: [`/checkout/sessions?limit=10${q}`]})),
  fc.tuple(ref('payment'), fc.option(fc.integer({min: 1, max: 3000}), {nil: undefined})).map(([payment, amount]): Step => ({door: 'v1', method: 'POST', path: ['/refunds'], body: {payment, amount}})),
  // Subscriptions on the clock: trials, renewals, dunning, cancellations, and the events they emit.
  {
    weight: 3,
    arbitrary: fc
      .tuple(ref('price'), fc.option(fc.integer({min: 1, max: 3}), {nil: undefined}))
      .map(([pr, trial_days]): Step => ({door: 'v1', method: 'POST', path: ['/subscriptions'], body: {price_id: pr, customer_name: 'Ada Lovelace', customer_email: 'ada@example.com', trial_days}})),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(ref('subscription'), fc.constantFrom('paid', 'declined'), fc.constantFrom('succeed', 'fail', undefined))
      .map(([sub, outcome, renewals]): Step => ({door: 'admin', method: 'POST', path: ['/subscriptions/', sub, '/confirm'], body: {outcome, renewals}})),
  },
  fc.tuple(ref('subscription'), fc.constantFrom('succeed', 'fail')).map(([sub, outcome]): Step => ({door: 'admin', method: 'POST', path: ['/subscriptions/', sub, '/renewals'], body: {outcome}})),
  fc.tuple(ref('subscription'), fc.boolean()).map(([sub, at_period_end]): Step => ({door: 'v1', method: 'POST', path: ['/subscriptions/', sub, '/cancel'], body: {at_period_end}})),
  ref('subscription').map((sub): Step => ({door: 'admin', method: 'GET', path: ['/subscriptions/', sub, '/schedule']})),
  {
    weight: 3,
    arbitrary: fc
      .constantFrom(60, 31 * 60, 86_400, 3 * 86_400, 8 * 86_400, 32 * 86_400)
      .map((advance_seconds): Step => ({door: 'admin', method: 'POST', path: ['/clock'], body: {merchant: MERCHANT, advance_seconds}})),
  },
  fc.constant<Step>({door: 'v1', method: 'GET', path: ['/subscriptions?limit=10']}),
  fc.constant<Step>({door: 'v1', method: 'GET', path: ['/invoices?limit=10']}),
  fc.constant<Step>({door: 'admin', method: 'GET', path: ['/events?limit=30&merchant=', MERCHANT]}),
  fc.constant<Step>({door: 'app', method: 'GET', path: ['/payments?limit=10']}),
)

/** A generated run: the prelude, then steps each sent to the process its number picks (of several on one database). */
const run = fc.tuple(prelude, fc.array(fc.tuple(step, fc.nat({max: 2})), {minLength: 1, maxLength: 30, size: 'max'}))

/** Sends each step to both sides, one after the other, and fails on the first answer that differs. */
async function alike(sides: readonly [Side, Side], first: Step[], then: Array<[Step, number]>, names: readonly [string, string]) {
  const steps: Array<[Step, number]> = [...first.map((s): [Step, number] => [s, 0]), ...then]
  for (const [i, [s, proc]] of steps.entries()) {
    const [ra, rb] = [await sides[0].send(s), await sides[1].send(s, proc)]
    // Alike is not enough: a 5xx on both sides is a failure too.
    expect(ra.status, `step ${i}: no 5xx on ${names[0]}: ${ra.text}`).to.be.below(500)
    expect(rb.status, `step ${i}: no 5xx on ${names[1]}: ${rb.text}`).to.be.below(500)
    const [na, nb] = [sides[0].normal(ra.status, ra.text), sides[1].normal(rb.status, rb.text)]
    // Both answers in full on a difference (chai's message would cut them short).
    if (!isDeepStrictEqual(na, nb)) {
      const path = s.path.map((p) => (typeof p === 'string' ? p : `<${p.kind}#${p.n}>`)).join('')
      throw new Error(`step ${i} (${s.method} ${path}, process ${proc}) answered differently:\n${names[0]}: ${JSON.stringify(na)}\n${names[1]}: ${JSON.stringify(nb)}`)
    }
  }
}

const RUNS = Number(process.env.PAYAPP_ENGINES_RUNS ?? 40)

describe('SQLite and PostgreSQL answer alike', function () {
  // Each run makes a merchant on both gateways and sends each up to 42 requests (a prelude of up to 12, then up to 30).
  this.timeout(240_000)
  let sqlite: TestGateway
  let postgres: TestGateway
  before(async function () {
    if (!onPostgres) return this.skip()
    ;[sqlite, postgres] = await Promise.all([TestGateway.start({db: ':memory:'}), TestGateway.start()])
  })
  after(async () => {
    await Promise.all([sqlite?.close(), postgres?.close()])
  })

  it('generated request sequences of the catalogue, stock, checkouts, subscriptions and the clock: every answer the same, step by step', async () => {
    await fc.assert(
      fc.asyncProperty(run, async ([first, then]) => {
        const [a, b] = await Promise.all([sqlite.account(), postgres.account()])
        await alike([new Side([{gw: sqlite, acct: a}]), new Side([{gw: postgres, acct: b}])], first, then, ['SQLite:    ', 'PostgreSQL:'])
      }),
      {numRuns: RUNS},
    )
  })
})

describe('three gateway processes on one database answer as one gateway', function () {
  // Each run as above; the processes are `gateway start` processes of the build (dist/).
  this.timeout(240_000)
  let one: TestGateway
  let cluster: Cluster
  before(async () => {
    ;[one, cluster] = await Promise.all([TestGateway.start({db: ':memory:'}), startCluster(3, {args: ['--rate-limit', 'off']})])
  })
  after(async () => {
    await Promise.all([one?.close(), cluster?.close()])
  })

  it(`generated request sequences, each request to any of three processes (${onPostgres ? 'PostgreSQL' : 'one SQLite file'}): every answer as one in-memory gateway's`, async () => {
    await fc.assert(
      fc.asyncProperty(run, async ([first, then]) => {
        const [a, b] = await Promise.all([one.account(), cluster.procs[0]!.gw.account()])
        const procs = cluster.procs.map((p) => ({gw: p.gw, acct: via(p.gw, b)}))
        await alike([new Side([{gw: one, acct: a}]), new Side(procs)], first, then, ['one gateway:', '3 processes:'])
      }),
      {numRuns: RUNS},
    )
  })
})
