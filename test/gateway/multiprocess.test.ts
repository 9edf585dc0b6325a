/**
 * Several `gateway start` processes on one SQLite file behave as one gateway, through real HTTP: a rate
 * limit is counted once for all of them; a revoked credential, a new fault rule and a catalogue change
 * made through one process are what the next request to another sees; a webhook delivery whose process
 * is killed mid-attempt (`kill -9`) is made by another after its lease; a clock advance sent to one
 * process while the others run their ticks runs each due job once and delivers each event once.
 * Needs `npm run build` (the processes run the built CLI).
 */
import {createHash} from 'node:crypto'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {expect} from 'chai'
import fc from 'fast-check'
import pg from 'pg'

import {checkout, pay, sellable} from '../helpers/commerce.js'
import {expectError, type Account, type HttpResult} from '../helpers/gateway.js'
import {startCluster, via, type Cluster} from '../helpers/processes.js'
import {receiver, sleep, until, type Receiver} from '../helpers/receiver.js'
import {onPostgres} from '../helpers/test-db.js'

const DAY = 86_400

/**
 * What a clock walk has to do, through `p`'s merchant: a `*` endpoint to `rx`, `sessions` open checkouts (each
 * through `through(account, i)`) and a paid subscription whose first invoice.paid has arrived.
 */
async function walkScene(p: Cluster['procs'][number], rx: Receiver, sessions: number, through = (acct: Account, _i: number) => acct): Promise<Account> {
  const acct = await p.gw.account()
  expect((await p.gw.admin('POST', '/webhook_endpoints', {merchant: acct.merchant.id, env: 'test', url: rx.url, events: ['*']})).status).to.equal(201)
  const item = await sellable(acct, {stock: sessions})
  for (let i = 0; i < sessions; i++) await checkout(through(acct, i), {product_id: item.product.id, quantity: 1})
  const plan = await sellable(acct, {recurring: true, name: 'Plan'})
  const sub = await acct.api('POST', '/v1/subscriptions', {body: {price_id: plan.price, customer_name: 'Ada', customer_email: 'ada@example.com'}})
  expect((await p.gw.admin('POST', `/subscriptions/${sub.body.id}/confirm`, {outcome: 'paid'})).status).to.equal(200)
  await until(() => rx.types().includes('invoice.paid'), 'the first invoice.paid', 10_000)
  return acct
}

/** The clock process `p` reads: the merchant's, or the shared one. */
const clockOf = async (p: Cluster['procs'][number], merchant?: string) => (await p.gw.admin('GET', merchant ? `/clock?merchant=${merchant}` : '/clock')).body.now as number

describe('gateway: several processes on one database', function () {
  this.timeout(120_000)
  const receivers: Receiver[] = []
  after(async () => {
    await Promise.all(receivers.map((r) => r.close()))
  })

  /**
   * Two processes whose clock leases run out 1.5 s after a `kill -9`, and a merchant on the first per entry of
   * `sessions` (walkScene with that many), each with its receiver, slow enough (80 ms a request) that a walk is
   * still delivering when its process dies; the processes close once `fn` is done.
   */
  const walkScenes = async (
    sessions: number[],
    fn: (scene: {p1: Cluster['procs'][number]; p2: Cluster['procs'][number]; accts: Account[]; rxs: Receiver[]; db: string}) => Promise<void>,
  ) => {
    const cluster = await startCluster(2, {env: {PAYAPP_GATEWAY_LEASE_MS: '1500'}})
    try {
      const [p1, p2] = cluster.procs as [Cluster['procs'][number], Cluster['procs'][number]]
      const rxs: Receiver[] = []
      const accts: Account[] = []
      for (const n of sessions) {
        const rx = await receiver(() => 200, 80)
        receivers.push(rx)
        rxs.push(rx)
        accts.push(await walkScene(p1, rx, n))
      }
      await fn({p1, p2, accts, rxs, db: cluster.db})
    } finally {
      await cluster.close()
    }
  }

  describe('per-process state made shared', () => {
    let cluster: Cluster
    before(async () => (cluster = await startCluster(2, {args: ['--rate-limit', 'reads=10']})))
    after(async () => cluster?.close())

    it('counts a rate limit once for the whole gateway, whichever process a request reaches', async () => {
      const [p1, p2] = cluster.procs
      const acct = await p1.gw.account()
      const on2 = via(p2.gw, acct)
      const first = await acct.store('GET', '/products')
      expect(first.status, first.text).to.equal(200)
      const second = await on2.store('GET', '/products')
      expect(second.status, second.text).to.equal(200)
      // One window, one count: the second process's request is the bucket's second.
      expect(Number(first.headers.get('x-ratelimit-remaining'))).to.equal(9)
      expect(Number(second.headers.get('x-ratelimit-remaining'))).to.equal(8)
      const statuses: number[] = []
      for (let i = 0; i < 10; i++) statuses.push((await (i % 2 ? acct : on2).store('GET', '/products')).status)
      // 10 allowed in all: 2 above plus 8 here, then 429s on both processes.
      expect(statuses.filter((s) => s === 200)).to.have.length(8)
      expectError(await acct.store('GET', '/products'), 429, 'rate_limited')
      expectError(await on2.store('GET', '/products'), 429, 'rate_limited')
    })

    it("refuses a credential revoked through another process on that process's very next request", async () => {
      const [p1, p2] = cluster.procs
      const acct = await p1.gw.account()
      const key = await p1.gw.secretKey(acct.merchant.id)
      const read = () => p2.gw.request('GET', '/v1/store/orders', {token: key.secret_key})
      // p2 has authenticated (and cached) the key.
      expect((await read()).status).to.equal(200)
      expect((await p1.gw.admin('DELETE', `/keys/${key.id}`)).status).to.equal(200)
      expectError(await read(), 401, 'invalid_api_key')
    })

    it("strikes with a fault rule added through another process on that process's very next request, until removed there", async () => {
      const [p1, p2] = cluster.procs
      const acct = await p1.gw.account()
      const on2 = via(p2.gw, acct)
      expect((await on2.store('GET', '/orders')).status).to.equal(200)
      const rule = await p1.gw.admin('POST', '/faults', {route: 'GET /orders', status: 503, merchant: acct.merchant.id})
      expect(rule.status, rule.text).to.equal(201)
      expectError(await on2.store('GET', '/orders'), 503)
      // The rule's hits are one count for the gateway: p1 lists the hit p2 made.
      expect((await p1.gw.admin('GET', `/faults/${rule.body.id}`)).body.hits).to.equal(1)
      expect((await p2.gw.admin('DELETE', `/faults/${rule.body.id}`)).status).to.equal(200)
      expect((await acct.store('GET', '/orders')).status).to.equal(200)
    })

    it("reads a merchant's clock moved through another process on that process's very next request", async () => {
      const [p1, p2] = cluster.procs
      const acct = await p1.gw.account()
      expect((await p2.gw.admin('GET', `/clock?merchant=${acct.merchant.id}`)).status).to.equal(200)
      const moved = await p1.gw.admin('POST', '/clock', {merchant: acct.merchant.id, advance_seconds: 7 * DAY})
      expect(moved.status, moved.text).to.equal(200)
      const seen = (await p2.gw.admin('GET', `/clock?merchant=${acct.merchant.id}`)).body.now
      expect(seen - moved.body.now).to.be.within(0, 1)
    })

    it('shows a catalogue change made through one process on the next read of another', async () => {
      const [p1, p2] = cluster.procs
      const acct = await p1.gw.account()
      const on2 = via(p2.gw, acct)
      // p2 computes (and caches) the list, then p1 writes.
      expect((await on2.app('GET', '/products')).body.data).to.have.length(0)
      expect((await acct.store('POST', '/products', {body: {name: 'Mug', price: {currency: 'eur', unit_amount: 900}}})).status).to.equal(201)
      expect((await on2.app('GET', '/products')).body.data.map((p: {name: string}) => p.name)).to.deep.equal(['Mug'])
    })
  })

  it("counts a rate limit once when a process joins one that ran alone: the first one's requests of the window still count", async () => {
    // Within one window from the first request to the last: an hour's (window=3600), so the test waits for the
    // next one only in the last 15 s of an hour, not of every minute (up to 15 s in a quarter of the runs).
    if (Date.now() % 3_600_000 > 3_585_000) await sleep(3_600_000 - (Date.now() % 3_600_000) + 200)
    const cluster = await startCluster(1, {args: ['--rate-limit', 'reads=10,writes=10,window=3600']})
    try {
      const [p1] = cluster.procs
      const acct = await p1!.gw.account()
      // Alone on the database: 4 reads and 3 writes of the window's 10 each.
      for (let i = 0; i < 4; i++) expect((await acct.store('GET', '/products')).status).to.equal(200)
      for (let i = 0; i < 3; i++) expect((await acct.store('POST', '/products', {body: {name: `Mug ${i}`}})).status).to.equal(201)
      const p2 = await cluster.add()
      const on2 = via(p2.gw, acct)
      const first = await on2.store('GET', '/products')
      expect(first.status, first.text).to.equal(200)
      // The joining process's first read is the bucket's fifth.
      expect(Number(first.headers.get('x-ratelimit-remaining'))).to.equal(5)
      const reads: number[] = []
      const writes: number[] = []
      for (let i = 0; i < 8; i++) {
        const on = i % 2 ? acct : on2
        reads.push((await on.store('GET', '/products')).status)
        writes.push((await on.store('POST', '/products', {body: {name: `Cup ${i}`}})).status)
      }
      // 10 of each in all, whichever process served them: 5 more reads and 7 more writes, then 429s on both.
      expect(reads.filter((s) => s === 200)).to.have.length(5)
      expect(writes.filter((s) => s === 201)).to.have.length(7)
      expectError(await acct.store('GET', '/products'), 429, 'rate_limited')
      expectError(await on2.store('POST', '/products', {body: {name: 'Late'}}), 429, 'rate_limited')
    } finally {
      await cluster.close()
    }
  })

  it("sees on the very next request what a process that joined it changed, though it ran alone and compared nothing before (rate limits off)", async () => {
    const cluster = await startCluster(1, {args: ['--rate-limit', 'off']})
    try {
      const [p1] = cluster.procs
      const acct = await p1!.gw.account()
      const key = await p1!.gw.secretKey(acct.merchant.id)
      const orders = () => p1!.gw.request('GET', '/v1/store/orders', {token: key.secret_key})
      // Alone, p1 caches the key and the product list.
      expect((await orders()).status).to.equal(200)
      expect((await acct.app('GET', '/products')).body.data).to.have.length(0)
      const p2 = await cluster.add()
      // Through the process that joined: a product, then the key revoked; each seen by p1's next request.
      expect((await via(p2.gw, acct).store('POST', '/products', {body: {name: 'Mug'}})).status).to.equal(201)
      expect((await acct.app('GET', '/products')).body.data.map((p: {name: string}) => p.name)).to.deep.equal(['Mug'])
      expect((await p2.gw.admin('DELETE', `/keys/${key.id}`)).status).to.equal(200)
      expectError(await orders(), 401, 'invalid_api_key')
    } finally {
      await cluster.close()
    }
  })

  describe('catalogue uniqueness under concurrent writes through both processes', () => {
    let cluster: Cluster
    // No rate limit: its shared count would space the requests out.
    before(async () => (cluster = await startCluster(2, {args: ['--rate-limit', 'off']})))
    after(async () => cluster?.close())

    const N = 24
    /** `N` requests at once, alternating between the two processes. */
    const race = (acct: Account, send: (on: Account, i: number) => Promise<HttpResult>) => {
      const [p1, p2] = cluster.procs
      const accounts = [via(p1!.gw, acct), via(p2!.gw, acct)]
      return Promise.all(Array.from({length: N}, (_, i) => send(accounts[i % 2]!, i)))
    }
    /** Exactly one request won; every other got the domain's 409 with its code and param. */
    const oneWins = (answers: HttpResult[], won: number, code: string, param: string) => {
      const winners = answers.filter((r) => r.status === won)
      expect(winners, answers.filter((r) => r.status !== 409).map((r) => r.text).join('\n') || answers.map((r) => r.status).join(',')).to.have.length(1)
      for (const r of answers.filter((a) => a.status !== won)) expect(expectError(r, 409, code).param).to.equal(param)
      return winners[0]!
    }
    /** A product with one option group of `N` values (one combination per request). */
    const product = async (acct: Account) => {
      const made = await acct.store('POST', '/products', {body: {name: 'Tee', price: {currency: 'eur', unit_amount: 2500}}})
      expect(made.status, made.text).to.equal(201)
      const group = await acct.store('POST', `/products/${made.body.id}/options`, {body: {name: 'Size', values: Array.from({length: N}, (_, i) => `S${i}`)}})
      expect(group.status, group.text).to.equal(201)
      return {id: made.body.id as string, group: group.body.id as string, values: group.body.values.map((v: {id: string}) => v.id) as string[]}
    }

    /** The ids of the product's stored variants that `which` picks. */
    const variantIds = async (acct: Account, product: string, which: (v: {sku: string | null; is_default: boolean}) => boolean) =>
      ((await acct.store('GET', `/products/${product}/variants?limit=100`)).body.data as Array<{id: string; sku: string | null; is_default: boolean}>).filter(which).map((v) => v.id)

    it('one SKU per merchant environment: of concurrent variant creates with one SKU, one is stored', async () => {
      const acct = await cluster.procs[0]!.gw.account()
      const p = await product(acct)
      const answers = await race(acct, (on, i) => on.store('POST', `/products/${p.id}/variants`, {body: {options: [{group: p.group, value: p.values[i]}], sku: 'RACE-1'}}))
      const won = oneWins(answers, 201, 'sku_exists', 'sku')
      expect(await variantIds(acct, p.id, (v) => v.sku === 'RACE-1')).to.deep.equal([won.body.id])
    })

    it('one SKU per merchant environment: of concurrent updates giving variants one SKU, one is stored', async () => {
      const acct = await cluster.procs[0]!.gw.account()
      const p = await product(acct)
      const ids: string[] = []
      for (const value of p.values) {
        const made = await acct.store('POST', `/products/${p.id}/variants`, {body: {options: [{group: p.group, value}]}})
        expect(made.status, made.text).to.equal(201)
        ids.push(made.body.id)
      }
      const answers = await race(acct, (on, i) => on.store('PATCH', `/variants/${ids[i]}`, {body: {sku: 'RACE-2'}}))
      const won = oneWins(answers, 200, 'sku_exists', 'sku')
      expect(await variantIds(acct, p.id, (v) => v.sku === 'RACE-2')).to.deep.equal([won.body.id])
    })

    it('one variant per option combination: of concurrent creates of one combination, one is stored', async () => {
      const acct = await cluster.procs[0]!.gw.account()
      const p = await product(acct)
      const answers = await race(acct, (on) => on.store('POST', `/products/${p.id}/variants`, {body: {options: [{group: p.group, value: p.values[0]}]}}))
      const won = oneWins(answers, 201, 'variant_exists', 'options')
      expect(await variantIds(acct, p.id, (v) => !v.is_default)).to.deep.equal([won.body.id])
    })

    it('one option group per name (any case) in a product: of concurrent creates and renames, one holds the name', async () => {
      const acct = await cluster.procs[0]!.gw.account()
      const made = await acct.store('POST', '/products', {body: {name: 'Mug', price: {currency: 'eur', unit_amount: 900}}})
      expect(made.status, made.text).to.equal(201)
      const pid = made.body.id as string
      const created = await race(acct, (on, i) => on.store('POST', `/products/${pid}/options`, {body: {name: i % 3 ? 'Color' : 'COLOR', values: ['Red']}}))
      oneWins(created, 201, 'option_exists', 'name')
      const groups = (await acct.store('GET', `/products/${pid}/options?limit=100`)).body.data.map((g: {name: string}) => g.name.toLowerCase())
      expect(groups.filter((n: string) => n === 'color')).to.have.length(1)
      // Renames of other groups to one name race the same way (at most ten groups: nine others), in cases that
      // differ beyond ASCII too: one name to the domain's check, two to the unique index (ASCII case only).
      const [p1, p2] = cluster.procs
      for (const [a, b] of [['Size', 'SIZE'], ['Ärmel', 'ärmel'], ['Été', 'été'], ['Ñu', 'ñu']]) {
        const next = await acct.store('POST', '/products', {body: {name: 'Mug', price: {currency: 'eur', unit_amount: 900}}})
        const others: string[] = []
        for (let i = 0; i < 9; i++) others.push((await acct.store('POST', `/products/${next.body.id}/options`, {body: {name: `G${i}`, values: ['x']}})).body.id)
        const renamed = await Promise.all(others.map((id, i) => via((i % 2 ? p2 : p1)!.gw, acct).store('PATCH', `/options/${id}`, {body: {name: i % 2 ? a : b}})))
        oneWins(renamed, 200, 'option_exists', 'name')
        const names = (await acct.store('GET', `/products/${next.body.id}/options?limit=100`)).body.data.map((g: {name: string}) => g.name.toLowerCase())
        expect(names.filter((n: string) => n === a!.toLowerCase())).to.have.length(1)
      }
    })

    it('one value per text (any case) in an option group: of concurrent adds, one is stored', async () => {
      const acct = await cluster.procs[0]!.gw.account()
      const p = await product(acct)
      const answers = await race(acct, (on, i) => on.store('POST', `/options/${p.group}/values`, {body: {value: i % 2 ? 'XL' : 'xl'}}))
      oneWins(answers, 201, 'value_exists', 'value')
      // Cases that differ beyond ASCII: one text to the domain's check, two to the unique index.
      const others = [['Été', 'été'], ['Ölig', 'ölig'], ['Ñu', 'ñu']]
      for (const [a, b] of others) oneWins(await race(acct, (on, i) => on.store('POST', `/options/${p.group}/values`, {body: {value: i % 2 ? a : b}})), 201, 'value_exists', 'value')
      const group = (await acct.store('GET', `/products/${p.id}/options`)).body.data.find((g: {id: string}) => g.id === p.group)
      for (const text of ['xl', ...others.map(([, b]) => b!)]) expect(group.values.filter((v: {value: string}) => v.value.toLowerCase() === text)).to.have.length(1)
    })

    it("no lost update of a product: concurrent changes through both processes (metadata merges, prices reactivated) each land, and it keeps one active default", async () => {
      const acct = await cluster.procs[0]!.gw.account()
      const made = await acct.store('POST', '/products', {body: {name: 'Cap', price: {currency: 'eur', unit_amount: 1500}}})
      expect(made.status, made.text).to.equal(201)
      const id = made.body.id as string
      const answers = await race(acct, (on, i) => on.store('PATCH', `/products/${id}`, {body: {metadata: {[`k${i}`]: 'set'}}}))
      expect(answers.map((r) => r.status)).to.deep.equal(Array(N).fill(200))
      const product = (await acct.store('GET', `/products/${id}`)).body
      expect(Object.keys(product.metadata).sort()).to.deep.equal(Array.from({length: N}, (_, i) => `k${i}`).sort())
      // Archived with its prices, back, and its prices reactivated at once: one of them is the active default.
      const prices: string[] = [product.default_price]
      for (const amount of [1600, 1700, 1800]) prices.push((await acct.store('POST', `/products/${id}/prices`, {body: {currency: 'eur', unit_amount: amount}})).body.id)
      expect((await acct.store('DELETE', `/products/${id}`)).status).to.equal(200)
      expect((await acct.store('PATCH', `/products/${id}`, {body: {active: true}})).status).to.equal(200)
      const [p1, p2] = cluster.procs
      const back = await Promise.all(
        prices.flatMap((price, i) => [
          via((i % 2 ? p2 : p1)!.gw, acct).store('PATCH', `/products/${id}/prices/${price}`, {body: {active: true}}),
          via((i % 2 ? p1 : p2)!.gw, acct).store('PATCH', `/products/${id}`, {body: {metadata: {[`back${i}`]: 'set'}}}),
        ]),
      )
      expect(back.map((r) => r.status)).to.deep.equal(Array(back.length).fill(200))
      const after = (await acct.store('GET', `/products/${id}`)).body
      expect(Object.keys(after.metadata)).to.include.members(prices.map((_, i) => `back${i}`))
      expect(after.prices.filter((p: {active: boolean}) => p.active)).to.have.length(prices.length)
      expect(prices).to.include(after.default_price)
    })

    it("no lost stock: a variant's updates through one process never overwrite the units checkouts through the other reserved meanwhile", async () => {
      const acct = await cluster.procs[0]!.gw.account()
      const made = await acct.store('POST', '/products', {body: {name: 'Cap', price: {currency: 'eur', unit_amount: 1500}}})
      const variant = made.body.variants[0].id as string
      expect((await acct.store('PATCH', `/variants/${variant}`, {body: {track_inventory: true, stock_qty: 1000}})).status).to.equal(200)
      const [p1, p2] = cluster.procs
      const answers = await Promise.all(
        Array.from({length: N}, (_, i) =>
          i % 2
            ? via(p1!.gw, acct).store('PATCH', `/variants/${variant}`, {body: {title: `Cap ${i}`}})
            : via(p2!.gw, acct).store('POST', '/checkouts', {body: {product_id: made.body.id, quantity: 2}}),
        ),
      )
      expect(answers.map((r) => r.status).sort()).to.deep.equal([...Array(N / 2).fill(200), ...Array(N / 2).fill(201)])
      const stored = (await acct.store('GET', `/products/${made.body.id}`)).body.variants[0]
      expect(stored).to.include({stock_qty: 1000, stock_reserved: N})
    })

    it("concurrent changes of one document take turns, none refused as busy: evidence on one order, partial refunds of one payment", async () => {
      const acct = await cluster.procs[0]!.gw.account()
      const item = await sellable(acct, {unit_amount: 1000})
      const order = await acct.app('POST', '/orders', {body: {product_id: item.product.id}})
      expect(order.status, order.text).to.equal(201)
      const notes = await race(acct, (on, i) => on.app('POST', `/orders/${order.body.id}/evidence`, {body: {note: `n${i}`}}))
      expect(notes.map((r) => r.status), notes.find((r) => r.status !== 200)?.text).to.deep.equal(Array(N).fill(200))
      const stored = (await acct.app('GET', `/orders/${order.body.id}`)).body.evidence.map((e: {note: string}) => e.note)
      expect(stored.sort()).to.deep.equal(Array.from({length: N}, (_, i) => `n${i}`).sort())
      // 20 refunds of 50 fit in the payment's 1000; the other 4 find it refunded in full, none is refused as busy.
      const paid = await pay(cluster.procs[0]!.gw, (await checkout(acct, {product_id: item.product.id, variant_id: item.variant.id})).session_id)
      expect(paid.status, paid.text).to.equal(200)
      const payment = paid.body.payment.id as string
      const refunds = await race(acct, (on) => on.v1('POST', '/refunds', {body: {payment, amount: 50}}))
      expect(refunds.filter((r) => r.status === 201), refunds.find((r) => r.status !== 201 && r.status !== 422)?.text).to.have.length(20)
      for (const r of refunds.filter((a) => a.status !== 201)) expectError(r, 422, 'already_refunded')
      expect((await acct.v1('GET', `/payments/${payment}`)).body).to.include({amount_refunded: 1000, status: 'refunded'})
    })

    it("a plan's limits hold across processes: of 24 concurrent product creates and 24 checkout session creates, 3 of each are stored", async () => {
      const [p1, p2] = cluster.procs
      const small = await p1!.gw.merchant({plan: {product_limit: 3, checkout_limit: 3}})
      const key = (await p1!.gw.secretKey(small.id)).secret_key
      const send = (path: string, body: Record<string, unknown>) =>
        Promise.all(Array.from({length: N}, (_, i) => (i % 2 ? p2 : p1)!.gw.request('POST', path, {token: key, body})))
      const products = await send('/v1/products', {name: 'Cap'})
      expect(products.filter((r) => r.status === 201), products.find((r) => r.status !== 201 && r.status !== 402)?.text).to.have.length(3)
      for (const r of products.filter((a) => a.status !== 201)) expectError(r, 402, 'product_limit_reached')
      expect((await p2!.gw.request('GET', '/v1/products?limit=100', {token: key})).body.data).to.have.length(3)
      const sessions = await send('/v1/checkout/sessions', {amount: 1999, currency: 'eur', customer_name: 'Ada Buyer', customer_email: 'ada@example.com'})
      expect(sessions.filter((r) => r.status === 201), sessions.find((r) => r.status !== 201 && r.status !== 402)?.text).to.have.length(3)
      for (const r of sessions.filter((a) => a.status !== 201)) expectError(r, 402, 'checkout_limit_reached')
    })

    it('a fraud warning raced with its payment\'s full refund ends refunded, never left open on a refunded payment', async () => {
      const acct = await cluster.procs[0]!.gw.account()
      const [p1, p2] = cluster.procs
      const item = await sellable(acct, {unit_amount: 1000})
      for (let round = 0; round < 10; round++) {
        const paid = await pay(p1!.gw, (await checkout(acct, {product_id: item.product.id, variant_id: item.variant.id})).session_id)
        expect(paid.status, paid.text).to.equal(200)
        const payment = paid.body.payment.id as string
        const answers = await Promise.all([
          ...Array.from({length: 6}, (_, i) => via((i % 2 ? p2 : p1)!.gw, acct).api('POST', '/v1/test_helpers/fraud_warnings', {body: {charge_id: payment}})),
          via(p2!.gw, acct).v1('POST', '/refunds', {body: {payment: paid.body.payment.id}}),
        ])
        expect(answers.map((r) => r.status)).to.deep.equal([...Array(6).fill(201), 201])
        const all = (await acct.v1('GET', '/fraud_warnings?limit=100')).body.data as Array<{charge_id: string; status: string}>
        const charge = answers[0]!.body.charge_id as string
        expect(all.filter((w) => w.charge_id === charge).map((w) => w.status)).to.deep.equal(Array(6).fill('refunded'))
      }
    })

    it('at most 10 option groups per product: of 15 concurrent creates, 10 are stored and the rest refused', async () => {
      const acct = await cluster.procs[0]!.gw.account()
      const made = await acct.store('POST', '/products', {body: {name: 'Cap', price: {currency: 'eur', unit_amount: 1500}}})
      expect(made.status, made.text).to.equal(201)
      const [p1, p2] = cluster.procs
      const answers = await Promise.all(
        Array.from({length: 15}, (_, i) => via((i % 2 ? p2 : p1)!.gw, acct).store('POST', `/products/${made.body.id}/options`, {body: {name: `G${i}`, values: ['x']}})),
      )
      const stored = (await acct.store('GET', `/products/${made.body.id}/options?limit=100`)).body.data as Array<{id: string}>
      expect(stored).to.have.length(10)
      expect(answers.filter((r) => r.status === 201).map((r) => r.body.id).sort()).to.deep.equal(stored.map((g) => g.id).sort())
      for (const r of answers.filter((a) => a.status !== 201)) expectError(r, 400, 'too_many_option_groups')
    })

    /** The product's live groups with their live values, and its stored variants besides the default. */
    const structure = async (acct: Account, product: string) => {
      const groups = (await acct.store('GET', `/products/${product}/options?limit=100`)).body.data as Array<{id: string; values: Array<{id: string}>}>
      const variants = (await acct.store('GET', `/products/${product}/variants?limit=100`)).body.data as Array<{id: string; is_default: boolean; options: Array<{group: string; value: string}>}>
      return {groups, variants: variants.filter((v) => !v.is_default)}
    }
    /** Every stored variant names exactly one live value of each live group of its product. */
    const everyVariantWhole = async (acct: Account, product: string) => {
      const {groups, variants} = await structure(acct, product)
      for (const v of variants) {
        expect(v.options.map((o) => o.group).sort(), `variant ${v.id}'s groups`).to.deep.equal(groups.map((g) => g.id).sort())
        for (const o of v.options) expect(groups.find((g) => g.id === o.group)!.values.map((x) => x.id), `variant ${v.id}'s value of ${o.group}`).to.include(o.value)
      }
      return variants
    }
    /** Each answer is a success or one of the domain's 4xx codes, never a 5xx. */
    const answeredAs = (answers: HttpResult[], codes: string[]) => {
      for (const r of answers) if (r.status >= 300) expect(codes, `${r.status} ${r.text}`).to.include(expectError(r, r.status).code)
    }
    const ROUNDS = 3

    it('a variant names a value of every group: option groups added and deleted while variants are being created leave none missing or dangling', async () => {
      const acct = await cluster.procs[0]!.gw.account()
      for (let round = 0; round < ROUNDS; round++) {
        const p = await product(acct)
        const extra = await acct.store('POST', `/products/${p.id}/options`, {body: {name: 'Fit', values: ['Regular']}})
        expect(extra.status, extra.text).to.equal(201)
        const fit = {group: extra.body.id as string, value: extra.body.values[0].id as string}
        // Variant creates naming both groups, with the Fit group's delete and three new groups' creates among them.
        const answers = await race(acct, (on, i) =>
          i === N / 2
            ? on.store('DELETE', `/options/${fit.group}`)
            : i % 6 === 3
              ? on.store('POST', `/products/${p.id}/options`, {body: {name: `Color ${i}`, values: ['Red']}})
              : on.store('POST', `/products/${p.id}/variants`, {body: {options: [{group: p.group, value: p.values[i]}, fit]}}),
        )
        answeredAs(answers, ['variants_exist', 'invalid_options'])
        await everyVariantWhole(acct, p.id)
      }
    })

    it('a variant names live values: option values deleted while variants naming them are being created leave none dangling', async () => {
      const acct = await cluster.procs[0]!.gw.account()
      for (let round = 0; round < ROUNDS; round++) {
        const p = await product(acct)
        // For each of the first N/2 values: one variant create naming it and one delete of it, on different processes.
        const answers = await race(acct, (on, i) =>
          i % 2 ? on.store('DELETE', `/values/${p.values[(i - 1) / 2]}`) : on.store('POST', `/products/${p.id}/variants`, {body: {options: [{group: p.group, value: p.values[i / 2]}]}}),
        )
        answeredAs(answers, ['value_in_use', 'invalid_options', 'resource_missing'])
        await everyVariantWhole(acct, p.id)
      }
    })
  })

  describe('no oversell across processes, for generated stock levels and concurrent purchases', () => {
    let cluster: Cluster
    before(async () => (cluster = await startCluster(3, {args: ['--rate-limit', 'off']})))
    after(async () => cluster?.close())

    // `npm test` / `npm run test:pg`: a few runs; `npm run test:long`: PAYAPP_OVERSELL_SECONDS of them.
    const LONG_SECONDS = Number(process.env.PAYAPP_OVERSELL_SECONDS ?? 0)

    it('sells at most the stock, refuses only what is no longer there, and keeps every acknowledged purchase', async function () {
      if (LONG_SECONDS) this.timeout((LONG_SECONDS + 60) * 1000)
      const purchase = fc.record({quantity: fc.integer({min: 1, max: 4}), via: fc.nat({max: 2}), paidVia: fc.nat({max: 2})})
      await fc.assert(
        fc.asyncProperty(fc.integer({min: 0, max: 12}), fc.array(purchase, {minLength: 1, maxLength: 16}), async (stock, purchases) => {
          const procs = cluster.procs
          const acct = await procs[0]!.gw.account()
          const item = await sellable(acct, {stock})
          // Every purchase at once, each a checkout on one process paid through another's admin API.
          const outcomes = await Promise.all(
            purchases.map(async (p) => {
              const opened = await via(procs[p.via]!.gw, acct).store('POST', '/checkouts', {body: {product_id: item.product.id, variant_id: item.variant.id, quantity: p.quantity}})
              if (opened.status !== 201) return {...p, opened, paid: undefined as HttpResult | undefined}
              return {...p, opened, paid: await procs[p.paidVia]!.gw.admin('POST', `/checkouts/${opened.body.session_id}/complete`, {outcome: 'paid'})}
            }),
          )
          for (const o of outcomes) if (o.opened.status !== 201) expectError(o.opened, 409, 'out_of_stock')
          const sold = outcomes.filter((o) => o.paid)
          for (const o of sold) expect(o.paid!.status, o.paid!.text).to.equal(200)
          const units = sold.reduce((n, o) => n + o.quantity, 0)
          expect(units, 'units sold').to.be.at.most(stock)
          // Stock only went down while they ran, so a refused checkout wanted more than is left even now.
          for (const o of outcomes.filter((x) => !x.paid)) expect(o.quantity, 'a refused quantity').to.be.above(stock - units)
          // Every acknowledged purchase is stored, as every process reads it.
          for (const proc of procs) {
            const on = via(proc.gw, acct)
            const payments = (await on.v1('GET', '/payments?limit=100')).body.data as Array<{id: string; status: string}>
            expect(payments.filter((p) => p.status === 'succeeded').map((p) => p.id).sort()).to.deep.equal(sold.map((o) => o.paid!.body.payment.id).sort())
            const variant = (await on.store('GET', `/products/${item.product.id}`)).body.variants.find((v: {id: string}) => v.id === item.variant.id)
            expect(variant).to.include({stock_reserved: 0, stock_available: stock - units})
          }
        }),
        LONG_SECONDS ? {numRuns: 1_000_000, interruptAfterTimeLimit: LONG_SECONDS * 1000, markInterruptAsFailure: false} : {numRuns: 10},
      )
    })
  })

  it('strikes with the --faults rules of processes started together once for the gateway, and afresh after a restart of all', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'payapp-faults-')), 'faults.json')
    writeFileSync(file, JSON.stringify([{route: 'GET /orders', status: 503, count: 2}]))
    const statuses = async (cluster: Cluster, acct: Account) => {
      const out: number[] = []
      for (let i = 0; i < 6; i++) out.push((await via(cluster.procs[i % cluster.procs.length]!.gw, acct).store('GET', '/orders')).status)
      return out.filter((s) => s === 503).length
    }
    const first = await startCluster(2, {args: ['--faults', file]})
    let acct: Account
    try {
      acct = await first.procs[0]!.gw.account()
      expect(await statuses(first, acct)).to.equal(2)
    } finally {
      await first.close()
    }
    // All stopped, then started again on the same file: the rules start over (not left from the earlier run).
    const again = await startCluster(2, {args: ['--faults', file], db: first.db})
    try {
      expect(await statuses(again, acct)).to.equal(2)
    } finally {
      await again.close()
    }
  })

  it('leaves a delivery in flight to its process while the lease holds, and delivers it from another after the lease when that process is killed (same event id)', async () => {
    const env = {PAYAPP_GATEWAY_LEASE_MS: '3000'}
    const cluster = await startCluster(1, {env})
    try {
      const [p1] = cluster.procs
      let calls = 0
      let hung: (() => void) | undefined
      const acct = await p1.gw.account()
      const {createServer} = await import('node:http')
      const seen: Array<{event: string; delivery: string | undefined}> = []
      // The first attempt hangs (p1 holds the delivery when it dies); later ones succeed.
      const server = createServer((req, res) => {
        let body = ''
        req.on('data', (d) => (body += d))
        req.on('end', () => {
          seen.push({event: JSON.parse(body).id, delivery: req.headers['service-delivery-id'] as string | undefined})
          calls += 1
          if (calls === 1) hung = () => res.destroy()
          else res.writeHead(200).end()
        })
      })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      const url = `http://127.0.0.1:${(server.address() as {port: number}).port}/hooks`
      try {
        expect((await p1.gw.admin('POST', '/webhook_endpoints', {merchant: acct.merchant.id, env: 'test', url, events: ['product.created']})).status).to.equal(201)
        expect((await acct.store('POST', '/products', {body: {name: 'Mug', price: {currency: 'eur', unit_amount: 900}}})).status).to.equal(201)
        await until(() => calls === 1, 'the first attempt', 5000)
        // p2 starts only now, so the attempt in flight is p1's; then p1 dies holding it.
        const p2 = await cluster.add()
        // While p1's lease holds, p2 leaves the delivery alone (its worker polls every 200 ms).
        await sleep(1200)
        expect(calls, 'sent again while its lease held').to.equal(1)
        await p1.kill()
        hung?.()
        await until(() => calls >= 2, 'the delivery from the surviving process', 15_000)
        await sleep(500)
        expect(seen).to.have.length(2)
        expect(seen[1]!.event).to.equal(seen[0]!.event)
        expect(seen[1]!.delivery).to.equal(seen[0]!.delivery)
        const endpoint = (await p2.gw.admin('GET', `/webhook_endpoints?merchant=${acct.merchant.id}`)).body.data[0]
        const log = (await p2.gw.admin('GET', `/webhook_endpoints/${endpoint.id}/deliveries`)).body.data
        expect(log.filter((a: {status: number | null}) => a.status === 200)).to.have.length(1)
      } finally {
        server.closeAllConnections()
        server.close()
      }
    } finally {
      await cluster.close()
    }
  })

  it('sends a backlog that outlasts the lease to one endpoint from one process at a time: each event once, in order, never two at once', async () => {
    const cluster = await startCluster(2, {env: {PAYAPP_GATEWAY_LEASE_MS: '1000'}})
    try {
      const [p1] = cluster.procs
      const acct = await p1.gw.account()
      const names = Array.from({length: 20}, (_, i) => `Product ${i + 1}`)
      for (const name of names) expect((await acct.store('POST', '/products', {body: {name, price: {currency: 'eur', unit_amount: 900}}})).status).to.equal(201)
      // A receiver taking 120 ms per request: 20 of them outlast the 1 s lease.
      const rx = await receiver(() => 200, 120)
      receivers.push(rx)
      const we = (await p1.gw.admin('POST', '/webhook_endpoints', {merchant: acct.merchant.id, env: 'test', url: rx.url, events: ['product.created']})).body
      // The whole backlog due at once, whichever process's worker finds it first.
      const resent = await p1.gw.admin('POST', '/events/resend', {merchant: acct.merchant.id, type: 'product.created', endpoint: we.id})
      expect(resent.body).to.deep.include({events: names.length})
      await until(() => rx.got.length >= names.length, 'the backlog', 20_000)
      await sleep(1500)
      expect(rx.got.map((r) => r.event.data.object.name)).to.deep.equal(names)
      expect(rx.mostInFlight(), 'requests in flight at once').to.equal(1)
    } finally {
      await cluster.close()
    }
  })

  it('finishes a clock advance whose process was killed mid-walk from another after the lease: each job once, each event delivered', async () => {
    const sessions = 10
    await walkScenes([sessions], async ({p1, p2, accts: [acct], rxs: [rx]}) => {
      const start = (await p1.gw.admin('GET', `/clock?merchant=${acct.merchant.id}`)).body.now
      const before = rx.got.length

      const target = start + 95 * DAY
      void p1.gw.admin('POST', '/clock', {merchant: acct.merchant.id, advance_to: target}).catch(() => {})
      await until(() => rx.got.length > before + 2, 'the walk under way', 10_000)
      await p1.kill()
      // p2 waits for the dead walk's lease to run out, then walks the rest of the jump.
      const finished = await p2.gw.admin('POST', '/clock', {merchant: acct.merchant.id, advance_to: target})
      expect(finished.status, finished.text).to.equal(200)
      expect(finished.body.now).to.be.at.least(target)
      const after = rx.got.slice(before)
      const byType = (type: string) => new Set(after.filter((r) => r.event.type === type).map((r) => r.event.id as string))
      // Each job ran once (one event each), and every event was delivered (a retry of p1's last one may repeat it).
      expect(byType('checkout.session.expired').size).to.equal(sessions)
      expect(byType('invoice.paid').size).to.equal(3)
      expect(after.filter((r) => r.event.type === 'invoice.paid').length).to.be.within(3, 4)
    })
  })

  it("walks a keyed clock advance once when its process dies mid-walk and the request goes again with its key to another process", async () => {
    await walkScenes([10], async ({p1, p2, accts: [acct], rxs: [rx]}) => {
      const start = (await p1.gw.admin('GET', `/clock?merchant=${acct.merchant.id}`)).body.now as number
      const before = rx.got.length
      const jump = {merchant: acct.merchant.id, advance_seconds: 95 * DAY}
      const key = `advance-${acct.merchant.id}`

      void p1.gw.admin('POST', '/clock', jump, key).catch(() => {})
      await until(() => rx.got.length > before + 2, 'the walk under way', 10_000)
      await p1.kill()
      const resent = Date.now()
      // What a client (the SDK, the balancer) does when the connection drops: the same request, the same key, to another process.
      const finished = await p2.gw.admin('POST', '/clock', jump, key)
      expect(finished.status, finished.text).to.equal(200)
      // One jump of 95 days from where the first request began, not another 95 days from where its walk stood.
      const slack = Math.ceil((Date.now() - resent) / 1000) + 2
      expect(finished.body.now - start, 'seconds the clock moved').to.be.within(95 * DAY, 95 * DAY + slack)
      const paid = new Set(rx.got.slice(before).filter((r) => r.event.type === 'invoice.paid').map((r) => r.event.id as string))
      expect(paid.size, 'renewals in 95 days').to.equal(3)
      // Answered now: the key replays that answer, and moves nothing.
      const replay = await p2.gw.admin('POST', '/clock', jump, key)
      expect(replay.headers.get('idempotent-replayed')).to.equal('true')
      expect(replay.text).to.equal(finished.text)
      expect((await p2.gw.admin('GET', `/clock?merchant=${acct.merchant.id}`)).body.now - start).to.be.below(95 * DAY + slack + 2)
    })
  })

  it("walks a keyed advance of every clock once when its process dies mid-walk: each merchant keeps its own lead, each renewal runs once", async () => {
    await walkScenes([6, 6], async ({p1, p2, accts: [ahead, level], rxs: [rxAhead, rxLevel]}) => {
      // One merchant's clock runs a day ahead of the others: it keeps that lead through the jump.
      expect((await p1.gw.admin('POST', '/clock', {merchant: ahead.merchant.id, advance_seconds: DAY})).status).to.equal(200)
      const start = await clockOf(p1)
      const began = Date.now()
      const before = [rxAhead.got.length, rxLevel.got.length] as const
      const key = `advance-all-${ahead.merchant.id}`

      void p1.gw.admin('POST', '/clock', {advance_seconds: 95 * DAY}, key).catch(() => {})
      await until(() => rxAhead.got.length + rxLevel.got.length > before[0] + before[1] + 8, 'the walk under way', 10_000)
      await p1.kill()
      const finished = await p2.gw.admin('POST', '/clock', {advance_seconds: 95 * DAY}, key)
      expect(finished.status, finished.text).to.equal(200)
      // The shared clock runs on with the wall clock: 95 days and the seconds since `start`, not twice 95 days.
      const slack = Math.ceil((Date.now() - began) / 1000) + 2
      const shared = await clockOf(p2)
      expect(shared - start, 'seconds the shared clock moved').to.be.within(95 * DAY, 95 * DAY + slack)
      expect((await clockOf(p2, ahead.merchant.id)) - shared, 'the merchant a day ahead').to.be.within(DAY - 1, DAY + 1)
      expect((await clockOf(p2, level.merchant.id)) - shared, 'the merchant on the shared clock').to.be.within(-1, 1)
      for (const [i, rx] of [rxAhead, rxLevel].entries()) {
        const paid = new Set(rx.got.slice(before[i]).filter((r) => r.event.type === 'invoice.paid').map((r) => r.event.id as string))
        expect(paid.size, `renewals in 95 days (${i ? 'level' : 'ahead'})`).to.equal(3)
      }
    })
  })

  it('walks a keyed advance once when its key reaches a second process while the first walks', async () => {
    await walkScenes([10], async ({p1, p2, accts: [acct], rxs: [rx]}) => {
      const before = rx.got.length
      const lead = async () => (await clockOf(p2, acct.merchant.id)) - (await clockOf(p2))
      const from = await lead()
      const jump = {merchant: acct.merchant.id, advance_seconds: 95 * DAY}
      const key = `advance-twice-${acct.merchant.id}`
      const first = p1.gw.admin('POST', '/clock', jump, key)
      await until(() => rx.got.length > before + 2, 'the walk under way', 10_000)
      // A client that gave up waiting sends it again, and the balancer picks another process: it waits for the clock.
      const [one, two] = await Promise.all([first, p2.gw.admin('POST', '/clock', jump, key)])
      expect(one.status, one.text).to.equal(200)
      expect(two.status, two.text).to.equal(200)
      // The first answer, replayed (also when the second found the jump ended just before that answer was stored: it waits for it).
      expect(two.text).to.equal(one.text)
      expect((await lead()) - from, 'seconds the merchant moved').to.be.within(95 * DAY - 5, 95 * DAY)
    })
  })

  // PostgreSQL: the test holds the first process between its jump's end and its answer by posing as another process's
  // change watch (pg-watch.ts): a process that commits a change waits for every watch's acknowledgement before it goes on.
  ;(onPostgres ? it : it.skip)('gives every request with a keyed advance its one stored answer when the first stalls between the end of its jump and its answer (PostgreSQL)', async () => {
    await walkScenes([3, 3], async ({p1, p2, accts, db}) => {
      const watch = new pg.Client({connectionString: db})
      const look = new pg.Client({connectionString: db})
      await Promise.all([watch.connect(), look.connect()])
      try {
        const {rows} = await look.query<{schema: string}>('SELECT current_schema() AS schema')
        const name = createHash('sha256').update(rows[0]!.schema).digest('hex').slice(0, 16)
        let held: {key: string; stopped: boolean; resumeOnChange: boolean} | undefined
        // Each change p1 commits waits for this acknowledgement: the one that stored the jump's end finds p1 stopped first.
        // Taken in one at a time (a client runs one query at a time).
        let taking = Promise.resolve()
        watch.on('notification', (n) => {
          taking = taking.then(async () => {
            if (held && !held.stopped) {
              const {rows: record} = await look.query<{state: string; body: string | null}>('SELECT state, body FROM idempotency WHERE key = $1', [held.key])
              if (record[0]?.state === 'advancing' && record[0].body?.includes('"ended":true')) {
                p1.child.kill('SIGSTOP')
                held.stopped = true
              }
            } else if (held?.stopped && held.resumeOnChange) {
              // A change while p1 is stopped is p2's: it gave the clock back and now waits for p1's answer.
              p1.child.kill('SIGCONT')
              held.resumeOnChange = false
            }
            await watch.query('SELECT pg_notify($1, $2)', [`payapp_version_ack_${name}`, n.payload ?? ''])
          }).catch(() => {})
        })
        await watch.query(`LISTEN payapp_version_${name}`)
        await watch.query(`SET application_name = 'payapp-watch-${name}'`)

        // p1 silent until p2 answered (as if it had died), then p1 stalled only while p2 waits for its answer.
        for (const [i, silent] of [
          [0, true],
          [1, false],
        ] as const) {
          const jump = {merchant: accts[i]!.merchant.id, advance_seconds: 2 * DAY}
          const key = `advance-stalled-${accts[i]!.merchant.id}`
          held = {key, stopped: false, resumeOnChange: !silent}
          const first = p1.gw.admin('POST', '/clock', jump, key)
          await until(() => held!.stopped, "the first request's jump ended", 30_000)
          // Sent again to the other process, which takes the clock once the first one's lease ran out: it finds the jump ended, not yet answered.
          const second = await p2.gw.admin('POST', '/clock', jump, key)
          p1.child.kill('SIGCONT')
          const one = await first
          const what = silent ? 'p1 silent' : 'p1 stalled'
          expect(second.status, second.text).to.equal(200)
          expect(one.status, one.text).to.equal(200)
          expect(second.body.jobs_run, `${what}: the jobs the jump ran (the sessions expired)`).to.be.at.least(3)
          expect(one.text, `${what}: the first request's answer`).to.equal(second.text)
          // The answer stored first is given to the other: p2's when p1 was silent, p1's when p2 waited for it.
          expect((silent ? one : second).headers.get('idempotent-replayed'), what).to.equal('true')
          expect((await p2.gw.admin('POST', '/clock', jump, key)).text, `${what}: a replay`).to.equal(second.text)
        }
      } finally {
        p1.child.kill('SIGCONT')
        await Promise.all([watch.end(), look.end()])
      }
    })
  })

  it("keeps a merchant's own advance made between the death of another of its advances and that one's resend", async () => {
    await walkScenes([10], async ({p1, p2, accts: [acct], rxs: [rx]}) => {
      const lead = async () => (await clockOf(p2, acct.merchant.id)) - (await clockOf(p2))
      const began = Date.now()
      const before = rx.got.length
      const jump = {merchant: acct.merchant.id, advance_seconds: 95 * DAY}
      const key = `advance-between-${acct.merchant.id}`

      void p1.gw.admin('POST', '/clock', jump, key).catch(() => {})
      await until(() => rx.got.length > before + 2, 'the walk under way', 10_000)
      await p1.kill()
      // A day more, acknowledged once the dead walk's lease ran out, then the first request sent again.
      const day = await p2.gw.admin('POST', '/clock', {merchant: acct.merchant.id, advance_seconds: DAY}, `${key}-day`)
      expect(day.status, day.text).to.equal(200)
      const finished = await p2.gw.admin('POST', '/clock', jump, key)
      expect(finished.status, finished.text).to.equal(200)
      const slack = Math.ceil((Date.now() - began) / 1000) + 2
      // 96 days less the seconds its walks stood still, at most.
      expect(await lead(), 'seconds the merchant leads the shared clock').to.be.within(96 * DAY - slack, 96 * DAY + 1)
      const paid = new Set(rx.got.slice(before).filter((r) => r.event.type === 'invoice.paid').map((r) => r.event.id as string))
      expect(paid.size, 'renewals in 96 days').to.equal(3)
    })
  })

  it("keeps the advances made between the death of an advance of every clock and its resend: a merchant's own, and every clock's", async () => {
    await walkScenes([6, 6], async ({p1, p2, accts, rxs}) => {
      const start = await clockOf(p2)
      const began = Date.now()
      const before = rxs[0]!.got.length + rxs[1]!.got.length
      const key = `advance-all-between-${accts[0]!.merchant.id}`

      void p1.gw.admin('POST', '/clock', {advance_seconds: 95 * DAY}, key).catch(() => {})
      await until(() => rxs[0]!.got.length + rxs[1]!.got.length > before + 8, 'the walk under way', 10_000)
      await p1.kill()
      // Each merchant's own day, acknowledged once the dead walk's leases ran out: one merchant the walk had begun, maybe the
      // other too; then a day of every clock, with another key.
      for (const acct of accts) {
        const own = await p2.gw.admin('POST', '/clock', {merchant: acct.merchant.id, advance_seconds: DAY})
        expect(own.status, own.text).to.equal(200)
      }
      const day = await p2.gw.admin('POST', '/clock', {advance_seconds: DAY}, `${key}-day`)
      expect(day.status, day.text).to.equal(200)
      const finished = await p2.gw.admin('POST', '/clock', {advance_seconds: 95 * DAY}, key)
      expect(finished.status, finished.text).to.equal(200)
      const slack = Math.ceil((Date.now() - began) / 1000) + 2
      const shared = await clockOf(p2)
      expect(shared - start, 'seconds the shared clock moved: 95 days and 1').to.be.within(96 * DAY, 96 * DAY + slack)
      for (const [i, acct] of accts.entries()) {
        // Its day less the seconds its own walk stood still, at most.
        expect((await clockOf(p2, acct.merchant.id)) - shared, `merchant ${i + 1}'s own day`).to.be.within(DAY - slack, DAY + 1)
      }
    })
  })

  it("keeps both when one merchant's clock is moved through one process while every clock moves through another", async () => {
    await walkScenes([6, 6], async ({p1, p2, accts: [moved, other], rxs}) => {
      const start = await clockOf(p2)
      const before = rxs[0]!.got.length + rxs[1]!.got.length

      const all = p1.gw.admin('POST', '/clock', {advance_seconds: 95 * DAY})
      await until(() => rxs[0]!.got.length + rxs[1]!.got.length > before + 2, 'the walk under way', 10_000)
      // Whichever merchant the walk is at, this jump and that one happen one after the other, and both count.
      const one = await p2.gw.admin('POST', '/clock', {merchant: moved.merchant.id, advance_seconds: DAY})
      expect(one.status, one.text).to.equal(200)
      expect((await all).status).to.equal(200)
      const shared = await clockOf(p2)
      expect(shared - start, 'seconds the shared clock moved').to.be.at.least(95 * DAY)
      expect((await clockOf(p2, moved.merchant.id)) - shared, 'the merchant moved alone leads by its day').to.be.within(DAY - 2, DAY)
      expect((await clockOf(p2, other.merchant.id)) - shared, 'the other merchant').to.be.within(-1, 1)
    })
  })

  it('runs each due job once and delivers each event once when a clock advance through one process meets the ticks of others', async () => {
    const cluster = await startCluster(3)
    try {
      const [p1, p2, p3] = cluster.procs
      // A receiver slow enough that the walk lasts several of the other processes' ticks.
      const rx = await receiver(() => 200, 60)
      receivers.push(rx)
      const sessions = 12
      const acct = await walkScene(p1, rx, sessions, (a, i) => (i % 2 ? via(p2.gw, a) : a))
      const before = rx.got.length

      // Meanwhile p2 and p3 answer requests (each reads the clock) and tick.
      let busy = true
      const traffic = Promise.all(
        [p2, p3].map(async (p) => {
          while (busy) {
            await via(p.gw, acct).store('GET', '/orders')
            await sleep(25)
          }
        }),
      )
      const moved = await p1.gw.admin('POST', '/clock', {merchant: acct.merchant.id, advance_seconds: 95 * DAY})
      busy = false
      await traffic
      expect(moved.status, moved.text).to.equal(200)
      // Everything due happened before the answer: every session expired, three renewals, each delivered once.
      const after = rx.got.slice(before)
      const types = after.map((r) => r.event.type as string)
      expect(types.filter((t) => t === 'checkout.session.expired')).to.have.length(sessions)
      expect(types.filter((t) => t === 'invoice.paid')).to.have.length(3)
      const ids = after.map((r) => r.event.id as string)
      expect(new Set(ids).size, 'each event delivered once').to.equal(ids.length)
      await sleep(1500)
      expect(rx.got.length, 'nothing more arrives after the answer').to.equal(before + after.length)
    } finally {
      await cluster.close()
    }
  })
})
