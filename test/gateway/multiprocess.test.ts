/**
 * Several `gateway start` processes on one SQLite file behave as one gateway, through real HTTP: a rate
 * limit is counted once for all of them; a revoked credential, a new fault rule and a catalogue change
 * made through one process are what the next request to another sees; a webhook delivery whose process
 * is killed mid-attempt (`kill -9`) is made by another after its lease; a clock advance sent to one
 * process while the others run their ticks runs each due job once and delivers each event once.
 * Needs `npm run build` (the processes run the built CLI).
 */
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {expect} from 'chai'

import {checkout, sellable} from '../helpers/commerce.js'
import {expectError, type Account} from '../helpers/gateway.js'
import {startCluster, via, type Cluster} from '../helpers/processes.js'
import {receiver, sleep, until, type Receiver} from '../helpers/receiver.js'

const DAY = 86_400

describe('gateway: several processes on one database', function () {
  this.timeout(120_000)
  const receivers: Receiver[] = []
  after(async () => {
    await Promise.all(receivers.map((r) => r.close()))
  })

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
    // Within one window (a minute of wall-clock time) from the first request to the last.
    if (Date.now() % 60_000 > 45_000) await sleep(60_000 - (Date.now() % 60_000) + 200)
    const cluster = await startCluster(1, {args: ['--rate-limit', 'reads=10,writes=10']})
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
    const cluster = await startCluster(2, {env: {PAYAPP_GATEWAY_LEASE_MS: '1500'}})
    try {
      const [p1, p2] = cluster.procs
      // A slow receiver, so the walk is still delivering when p1 dies.
      const rx = await receiver(() => 200, 80)
      receivers.push(rx)
      const acct = await p1.gw.account()
      expect((await p1.gw.admin('POST', '/webhook_endpoints', {merchant: acct.merchant.id, env: 'test', url: rx.url, events: ['*']})).status).to.equal(201)
      const sessions = 10
      const item = await sellable(acct, {stock: sessions})
      for (let i = 0; i < sessions; i++) await checkout(acct, {product_id: item.product.id, quantity: 1})
      const plan = await sellable(acct, {recurring: true, name: 'Plan'})
      const sub = await acct.api('POST', '/v1/subscriptions', {body: {price_id: plan.price, customer_name: 'Ada', customer_email: 'ada@example.com'}})
      expect((await p1.gw.admin('POST', `/subscriptions/${sub.body.id}/confirm`, {outcome: 'paid'})).status).to.equal(200)
      await until(() => rx.types().includes('invoice.paid'), 'the first invoice.paid', 10_000)
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
    } finally {
      await cluster.close()
    }
  })

  it('runs each due job once and delivers each event once when a clock advance through one process meets the ticks of others', async () => {
    const cluster = await startCluster(3)
    try {
      const [p1, p2, p3] = cluster.procs
      // A receiver slow enough that the walk lasts several of the other processes' ticks.
      const rx = await receiver(() => 200, 60)
      receivers.push(rx)
      const acct = await p1.gw.account()
      expect((await p1.gw.admin('POST', '/webhook_endpoints', {merchant: acct.merchant.id, env: 'test', url: rx.url, events: ['*']})).status).to.equal(201)
      const sessions = 12
      const item = await sellable(acct, {stock: sessions})
      for (let i = 0; i < sessions; i++) await checkout(i % 2 ? via(p2.gw, acct) : acct, {product_id: item.product.id, quantity: 1})
      const plan = await sellable(acct, {recurring: true, name: 'Plan'})
      const sub = await acct.api('POST', '/v1/subscriptions', {body: {price_id: plan.price, customer_name: 'Ada', customer_email: 'ada@example.com'}})
      expect((await p1.gw.admin('POST', `/subscriptions/${sub.body.id}/confirm`, {outcome: 'paid'})).status).to.equal(200)
      await until(() => rx.types().includes('invoice.paid'), 'the first invoice.paid', 10_000)
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
