/**
 * Generated concurrent traffic through three gateway processes on one database (a SQLite file in `npm test`,
 * PostgreSQL in `npm run test:pg`): batches of sales, refunds, disputes, fraud warnings, order evidence, subscriptions and
 * catalogue changes, each batch sent at once, each request to any process. After every batch the books must
 * balance as every process reads them: each acknowledged write stored once, refunds summing to what the
 * payment says, states that follow from one another (a refunded or disputed payment has no open warning, a
 * refunded one a refunded order and its stock back), stock never below what was sold, one successful charge per
 * paid invoice, every event delivered to the merchant's webhook endpoint, and no 5xx or 429.
 * Whatever order the requests of a batch ran in, these hold (a serial order explains the outcome).
 * Now and then a batch also kills one process (`kill -9`, after 0–40 ms; half the time the one its clock advance went to,
 * to cut a walk off) and starts a new one in its place.
 * Writes go as the SDK sends them, with an Idempotency-Key, and again to the next process when the connection
 * dropped; the admin API's too, a clock advance among them (its resend finishes the jump its first request planned). So each
 * write's outcome is known and the same books must balance: a write the killed process committed is stored
 * once, one it did not is run afresh, its claims (due work, deliveries) pass to another process after their
 * lease. (Sent again under a new key instead, the property finds the duplicates.)
 */
import {expect} from 'chai'
import fc from 'fast-check'

import {events, sellable} from '../helpers/commerce.js'
import {type Account, type HttpResult} from '../helpers/gateway.js'
import {startCluster, via, type Cluster} from '../helpers/processes.js'
import {receiver, sleep, until, type Receiver} from '../helpers/receiver.js'

const UNIT = 1000

type Op =
  | {op: 'buy'; via: number; quantity: number}
  | {op: 'refund'; via: number; pick: number; amount: number | null}
  | {op: 'dispute'; via: number; pick: number}
  | {op: 'warn'; via: number; pick: number}
  | {op: 'note'; via: number; pick: number}
  | {op: 'meta'; via: number}
  | {op: 'retitle'; via: number}
  | {op: 'open'; via: number; quantity: number}
  | {op: 'settle'; via: number; pick: number; outcome: 'paid' | 'declined'}
  | {op: 'advance'; via: number; seconds: number; all: boolean}
  | {op: 'create'; via: number}
  | {op: 'subscribe'; via: number}
  | {op: 'confirm'; via: number; pick: number; outcome: 'paid' | 'declined'}
  | {op: 'cancel'; via: number; pick: number; atPeriodEnd: boolean}
  | {op: 'card'; via: number; pick: number; outcome: 'succeed' | 'fail'}
  | {op: 'kill'; victim: number; after: number; amid: boolean}

const viaArb = fc.nat({max: 2})
const pick = fc.nat({max: 7})
const ops: fc.Arbitrary<Op>[] = [
  fc.record({op: fc.constant('buy' as const), via: viaArb, quantity: fc.integer({min: 1, max: 3})}),
  fc.record({op: fc.constant('refund' as const), via: viaArb, pick, amount: fc.option(fc.integer({min: 1, max: 1500}), {nil: null})}),
  fc.record({op: fc.constant('refund' as const), via: viaArb, pick, amount: fc.constant(null)}),
  fc.record({op: fc.constant('dispute' as const), via: viaArb, pick}),
  fc.record({op: fc.constant('warn' as const), via: viaArb, pick}),
  fc.record({op: fc.constant('note' as const), via: viaArb, pick}),
  fc.record({op: fc.constant('meta' as const), via: viaArb}),
  fc.record({op: fc.constant('retitle' as const), via: viaArb}),
  fc.record({op: fc.constant('open' as const), via: viaArb, quantity: fc.integer({min: 1, max: 3})}),
  fc.record({op: fc.constant('settle' as const), via: viaArb, pick, outcome: fc.constantFrom('paid' as const, 'declined' as const)}),
  // Past a store session's 30 minutes, or not; or past a monthly renewal and a dunning retry.
  fc.record({op: fc.constant('advance' as const), via: viaArb, seconds: fc.constantFrom(600, 1900, 32 * 86_400), all: fc.constant(false)}),
  // Every clock (every run's merchant walked): short jumps, so earlier runs' subscriptions seldom renew.
  fc.record({op: fc.constant('advance' as const), via: viaArb, seconds: fc.constantFrom(600, 1900), all: fc.constant(true)}),
  // Another product, against the plan's product_limit.
  fc.record({op: fc.constant('create' as const), via: viaArb}),
  fc.record({op: fc.constant('subscribe' as const), via: viaArb}),
  fc.record({op: fc.constant('confirm' as const), via: viaArb, pick, outcome: fc.constantFrom('paid' as const, 'declined' as const)}),
  fc.record({op: fc.constant('cancel' as const), via: viaArb, pick, atPeriodEnd: fc.boolean()}),
  // Later renewals and dunning retries succeed or fail.
  fc.record({op: fc.constant('card' as const), via: viaArb, pick, outcome: fc.constantFrom('succeed' as const, 'fail' as const)}),
]
/**
 * Mostly requests; now and then `kill -9` of a process amid its batch, after 0–40 ms, and a new one in its place:
 * with `amid`, the process the batch's first clock advance was sent to, if it has one (a walk cut off).
 */
const opArb: fc.Arbitrary<Op> = fc.oneof(
  ...ops.map((arbitrary) => ({arbitrary, weight: 8})),
  {arbitrary: fc.record({op: fc.constant('kill' as const), victim: viaArb, after: fc.nat({max: 40}), amid: fc.boolean()}), weight: 4},
)

interface Sale {
  payment: string
  order: string
  amount: number
  quantity: number
  refunds: Map<string, number>
  disputed: boolean
  warnings: Set<string>
  notes: Set<string>
}

/** The codes a request may be refused with when another request of its batch changed what it acts on. */
const REFUSALS: Record<Op['op'], string[]> = {
  buy: ['out_of_stock'],
  refund: ['already_refunded', 'amount_too_large', 'charge_disputed'],
  dispute: ['charge_disputed'],
  warn: [],
  note: [],
  meta: [],
  retitle: [],
  open: ['out_of_stock'],
  settle: ['session_expired', 'session_already_completed'],
  advance: [],
  create: ['product_limit_reached'],
  subscribe: [],
  confirm: ['subscription_not_incomplete'],
  cancel: ['subscription_already_canceled'],
  card: [],
  kill: [],
}

describe('the books balance across processes, for generated concurrent traffic', function () {
  const RUNS = Number(process.env.PAYAPP_LEDGER_RUNS ?? 15)
  // 200 runs on PostgreSQL take 3–4 minutes, later runs' advances of every clock walking the earlier runs' merchants too.
  const TIMEOUT = Math.max(300_000, RUNS * 3000)
  this.timeout(TIMEOUT)
  let cluster: Cluster
  let rx: Receiver
  /** The shared clock when the runs began, on the wall clock then, and the seconds of every acknowledged advance of every clock since. */
  let sharedAt: {now: number; wall: number; advanced: number}
  /** How many kills the runs made, and how many of them struck a process while a clock advance sent to it was unanswered. */
  const kills = {all: 0, amidAdvance: 0}
  before(async () => {
    // A killed process's claims (due work, deliveries) pass to another after their lease: 3 s here instead of 30.
    cluster = await startCluster(3, {args: ['--rate-limit', 'off'], env: {PAYAPP_GATEWAY_LEASE_MS: '3000'}})
    rx = await receiver()
    sharedAt = {now: (await cluster.procs[0]!.gw.admin('GET', '/clock')).body.now, wall: Date.now(), advanced: 0}
  })
  after(async () => {
    console.log(`      kills: ${kills.all}, ${kills.amidAdvance} of them while a clock advance sent to the killed process was unanswered`)
    await cluster?.close()
    await rx?.close()
  })

  it('stores each acknowledged write once, and payments, refunds, orders, warnings and stock agree', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({min: 4, max: 20}),
        fc.integer({min: 1, max: 4}),
        fc.nat({max: 3}),
        fc.array(fc.array(opArb, {minLength: 1, maxLength: 10}), {minLength: 1, maxLength: 6}),
        async (stock, productLimit, before, batches) => {
        const procs = cluster.procs
        const gw = procs[0]!.gw
        const acct = await gw.account('test', {plan: {product_limit: productLimit}})
        const endpoint = await gw.admin('POST', '/webhook_endpoints', {merchant: acct.merchant.id, env: 'test', url: rx.url, events: ['*']})
        expect(endpoint.status, endpoint.text).to.equal(201)
        /** The process a batch kills (its `kill` op), if it does. */
        let victim: number | undefined
        /** Clock advances sent to each process and not answered yet. */
        const advancing = procs.map(() => 0)
        const on = (i: number): Account => via(procs[i % procs.length]!.gw, acct)
        /**
         * A write as the SDK sends it, with an Idempotency-Key: when the batch's victim dropped its connection, or a
         * killed unit still holds the key, it goes again to the next process with the same key, so its outcome is
         * known (stored once, or refused) whatever the kill interrupted. `call(to, key)` sends it to process `to`.
         */
        const keyed = async (i: number, what: string, call: (to: number, idempotencyKey: string) => Promise<HttpResult>): Promise<HttpResult> => {
          // The run's merchant in it: the admin API's keys are the admin key's, shared by every run.
          const idempotencyKey = `ledger-${acct.merchant.id}-${++n}`
          for (let attempt = 0; ; attempt++) {
            const to = (i + attempt) % procs.length
            const res = await call(to, idempotencyKey).catch((error: Error) => {
              if (to !== victim) throw error
              return undefined
            })
            const held = victim !== undefined && res?.status === 409 && res.body?.error?.code === 'idempotency_in_flight'
            if (res && !held) return res
            expect(attempt, `${what}: no answer`).to.be.below(20)
            await sleep(50 * (attempt + 1))
          }
        }
        const write = (i: number, door: 'store' | 'v1' | 'app', method: string, path: string, body: Record<string, unknown>) =>
          keyed(i, `${method} ${path}`, (to, idempotencyKey) => on(to)[door](method, path, {body, idempotencyKey}))
        /**
         * A POST to the admin API of process `i` (a test helper: pay a session, confirm, dispute, move the clock),
         * keyed as `write`: a clock advance sent again walks the jump its first request planned, to its end.
         */
        const admin = (i: number, path: string, body: Record<string, unknown>) =>
          keyed(i, `POST /_admin${path}`, (to, idempotencyKey) => procs[to]!.gw.admin('POST', path, body, idempotencyKey))
        const item = await sellable(acct, {stock, unit_amount: UNIT})
        const product = item.product.id as string
        const sales: Sale[] = []
        const keys = new Set<string>()
        const titles = new Set<string>()
        let products = 1
        /** Seconds of the merchant's acknowledged clock advances, and when the run began (a walk's clock stands still meanwhile). */
        let advanced = 0
        const began = Date.now()
        /** Subscriptions created, to a monthly plan made before the traffic (it counts against the product limit). */
        const subscriptions: string[] = []
        let plan: string | undefined
        if (productLimit > 1) {
          const made = await acct.store('POST', '/products', {body: {name: 'Pro', price: {currency: 'eur', unit_amount: 900, recurring: {interval: 'month'}}}})
          expect(made.status, made.text).to.equal(201)
          plan = made.body.default_price
          products++
        }
        /** Store sessions opened and left to be paid, declined or expired. */
        const sessions: Array<{id: string; quantity: number; paid: boolean}> = []
        let sold = 0
        let restored = 0
        let n = 0

        /** `o` sent; it acts on a sale of those made before its batch (`known`). */
        const send = async (o: Op, known: Sale[], open: typeof sessions, subs: string[], killer?: Op): Promise<void> => {
          const id = ++n
          const sale = known.length ? known[('pick' in o ? o.pick : 0) % known.length] : undefined
          const sub = subs.length ? subs[('pick' in o ? o.pick : 0) % subs.length] : undefined
          let res: HttpResult
          switch (o.op) {
            case 'buy': {
              const opened = await write(o.via, 'store', 'POST', '/checkouts', {product_id: product, variant_id: item.variant.id, quantity: o.quantity})
              res = opened
              if (opened.status !== 201) break
              const paid = await admin(o.via + 1, `/checkouts/${opened.body.session_id}/complete`, {outcome: 'paid'})
              if (paid.status !== 200) {
                // A clock moved past its 30 minutes in between: expired, its units free again.
                expect(paid.body.error?.code, paid.text).to.equal('session_expired')
                sessions.push({id: opened.body.session_id, quantity: o.quantity, paid: false})
                return
              }
              sold += o.quantity
              sales.push({payment: paid.body.payment.id, order: paid.body.order.id, amount: o.quantity * UNIT, quantity: o.quantity, refunds: new Map(), disputed: false, warnings: new Set(), notes: new Set()})
              return
            }
            case 'open':
              res = await write(o.via, 'store', 'POST', '/checkouts', {product_id: product, variant_id: item.variant.id, quantity: o.quantity})
              if (res.status === 201) sessions.push({id: res.body.session_id, quantity: o.quantity, paid: false})
              break
            case 'settle': {
              const session = open.length ? open[o.pick % open.length]! : undefined
              if (!session) return
              res = await admin(o.via, `/checkouts/${session.id}/complete`, {outcome: o.outcome})
              if (res.status < 300 && o.outcome === 'paid') {
                session.paid = true
                sold += session.quantity
                sales.push({payment: res.body.payment.id, order: res.body.order.id, amount: session.quantity * UNIT, quantity: session.quantity, refunds: new Map(), disputed: false, warnings: new Set(), notes: new Set()})
              }
              break
            }
            case 'create':
              res = await write(o.via, 'v1', 'POST', '/products', {name: `Product ${id}`})
              if (res.status === 201) products++
              break
            case 'subscribe':
              if (!plan) return
              res = await write(o.via, 'v1', 'POST', '/subscriptions', {price_id: plan, customer_name: 'Ada Buyer', customer_email: 'ada@example.com'})
              if (res.status === 201) subscriptions.push(res.body.id)
              break
            case 'confirm':
              if (!sub) return
              res = await admin(o.via, `/subscriptions/${sub}/confirm`, {outcome: o.outcome})
              break
            case 'cancel':
              if (!sub) return
              res = await write(o.via, 'v1', 'POST', `/subscriptions/${sub}/cancel`, {at_period_end: o.atPeriodEnd})
              break
            case 'card':
              if (!sub) return
              res = await admin(o.via, `/subscriptions/${sub}/renewals`, {outcome: o.outcome})
              break
            case 'kill':
              // One process a batch: the batch's first kill.
              if (o !== killer) return
              await sleep(o.after)
              kills.all++
              if (advancing[victim!]! > 0) kills.amidAdvance++
              await cluster.restart(victim!)
              return
            case 'advance':
              advancing[o.via]!++
              res = await admin(o.via, '/clock', o.all ? {advance_seconds: o.seconds} : {merchant: acct.merchant.id, advance_seconds: o.seconds}).finally(() => advancing[o.via]!--)
              // Every clock moving keeps the merchant's lead on the shared clock.
              if (res.status === 200 && !o.all) advanced += o.seconds
              if (res.status === 200 && o.all) sharedAt.advanced += o.seconds
              break
            case 'refund':
              if (!sale) return
              res = await write(o.via, 'v1', 'POST', '/refunds', {payment: sale.payment, ...(o.amount === null ? {} : {amount: o.amount})})
              if (res.status === 201) {
                sale.refunds.set(res.body.id, res.body.amount)
                if ([...sale.refunds.values()].reduce((a, b) => a + b, 0) === sale.amount) restored += sale.quantity
              }
              break
            case 'dispute':
              if (!sale) return
              res = await admin(o.via, `/payments/${sale.payment}/dispute`, {})
              if (res.status < 300) sale.disputed = true
              break
            case 'warn':
              if (!sale) return
              res = await write(o.via, 'v1', 'POST', '/test_helpers/fraud_warnings', {charge_id: sale.payment})
              if (res.status < 300) sale.warnings.add(res.body.id)
              break
            case 'note':
              if (!sale) return
              res = await write(o.via, 'app', 'POST', `/orders/${sale.order}/evidence`, {note: `note ${id}`})
              if (res.status < 300) sale.notes.add(`note ${id}`)
              break
            case 'meta':
              res = await write(o.via, 'store', 'PATCH', `/products/${product}`, {metadata: {[`k${id}`]: 'set'}})
              if (res.status === 200) keys.add(`k${id}`)
              break
            case 'retitle':
              res = await write(o.via, 'store', 'PATCH', `/variants/${item.variant.id}`, {title: `Title ${id}`})
              if (res.status === 200) titles.add(`Title ${id}`)
              break
          }
          if (res.status < 300) return
          // Refused only for what another request changed, in the platform's envelope: never a 5xx, never busy.
          expect(res.status, `${o.op}: ${res.text}`).to.be.within(400, 499)
          expect(res.status, `${o.op}: ${res.text}`).not.to.equal(429)
          expect(REFUSALS[o.op], `${o.op}: ${res.text}`).to.include(res.body.error.code)
        }

        // A few sales first, one at a time, for the first batch to act on.
        for (let i = 0; i < before; i++) await send({op: 'buy', via: i, quantity: 1}, [], [], [])
        for (const batch of batches) {
          const known = [...sales]
          const open = sessions.filter((x) => !x.paid)
          const subs = [...subscriptions]
          const killer = batch.find((o) => o.op === 'kill')
          const advance = batch.find((o) => o.op === 'advance')
          victim = killer?.op === 'kill' ? (killer.amid && advance?.op === 'advance' ? advance.via : killer.victim) : undefined
          await Promise.all(batch.map((o) => send(o, known, open, subs, killer)))
          victim = undefined
          // A full refund restores the stock; a refused buy wanted more than was left.
          for (const p of procs) {
            const reader = via(p.gw, acct)
            // Each acknowledged advance moved the merchant's clock once, a resent one too (a second walk is 600 s or more),
            // and one of every clock did not lose it (nor a merchant's advance meanwhile).
            const shared = (await p.gw.admin('GET', '/clock')).body.now as number
            const lead = (await p.gw.admin('GET', `/clock?merchant=${acct.merchant.id}`)).body.now - shared
            expect(lead, 'seconds the merchant clock leads the shared one').to.be.within(advanced - Math.ceil((Date.now() - began) / 1000) - 2, advanced + 1)
            // The shared clock runs with the wall clock, and moved by each acknowledged advance of every clock once, a
            // resent one too, and one sent while another's first request lay dead.
            const ran = (Date.now() - sharedAt.wall) / 1000
            expect(shared - sharedAt.now - ran, 'seconds every clock was moved').to.be.within(sharedAt.advanced - 2, sharedAt.advanced + 2)
            const listed = (await reader.v1('GET', '/products?limit=100')).body.data as unknown[]
            expect(listed, 'products, at most the plan allows').to.have.length(products)
            expect(products).to.be.at.most(productLimit)
            const stored = (await reader.store('GET', `/products/${product}`)).body
            expect(Object.keys(stored.metadata ?? {}).sort(), 'metadata keys').to.deep.equal([...keys].sort())
            const variant = stored.variants.find((v: {id: string}) => v.id === item.variant.id)
            // Held by the sessions still open; the paid ones each complete, and paid once.
            let held = 0
            for (const session of sessions) {
              const read = (await reader.v1('GET', `/checkout/sessions/${session.id}`)).body
              if (read.status === 'open') held += session.quantity
              expect(read.status === 'complete', `session ${session.id} is ${read.status}`).to.equal(session.paid)
            }
            expect(variant, 'stock').to.include({stock_qty: stock - sold + restored, stock_reserved: held, stock_available: stock - sold + restored - held})
            if (titles.size) expect([...titles], 'title').to.include(variant.title)
            // Each invoice charged at most once with success, and paid exactly when so; one invoice per period.
            if (subscriptions.length) {
              const invoices = (await reader.v1('GET', '/invoices?limit=100')).body.data as Array<{id: string; subscription: string; status: string; period_start: number}>
              const payments = (await reader.v1('GET', '/payments?limit=100')).body.data as Array<{invoice_id?: string | null; status: string}>
              for (const sub of subscriptions) {
                const mine = invoices.filter((i) => i.subscription === sub)
                expect(new Set(mine.map((i) => i.period_start)).size, `one invoice per period of ${sub}`).to.equal(mine.length)
                for (const invoice of mine) {
                  const succeeded = payments.filter((p) => p.invoice_id === invoice.id && p.status === 'succeeded').length
                  expect(succeeded, `successful charges of ${invoice.id} (${invoice.status})`).to.equal(invoice.status === 'paid' ? 1 : 0)
                }
                const read = (await reader.v1('GET', `/subscriptions/${sub}`)).body
                const latest = mine.find((i) => i.id === (read.latest_invoice?.id ?? read.latest_invoice))
                if (read.status === 'active') expect(latest?.status, `latest invoice of active ${sub}`).to.equal('paid')
              }
            }
            const warnings = (await reader.v1('GET', '/fraud_warnings?limit=100')).body.data as Array<{id: string; charge_id: string; status: string}>
            for (const sale of sales) {
              const payment = (await reader.v1('GET', `/payments/${sale.payment}`)).body
              const refunded = [...sale.refunds.values()].reduce((a, b) => a + b, 0)
              expect(payment.amount_refunded, 'amount refunded').to.equal(refunded)
              const status = sale.disputed ? 'disputed' : refunded === sale.amount ? 'refunded' : refunded > 0 ? 'partially_refunded' : 'succeeded'
              expect(payment.status, 'payment status').to.equal(status)
              const listed = (await reader.v1('GET', `/refunds?payment_intent=${sale.payment}&limit=100`)).body.data as Array<{id: string}>
              expect(listed.map((r) => r.id).sort(), 'refunds').to.deep.equal([...sale.refunds.keys()].sort())
              const mine = warnings.filter((w) => sale.warnings.has(w.id))
              expect(mine, 'warnings stored').to.have.length(sale.warnings.size)
              if (payment.status === 'refunded' || payment.status === 'disputed') {
                expect(mine.filter((w) => w.status === 'open'), `open warnings on a ${payment.status} payment`).to.deep.equal([])
              }
              const order = (await reader.app('GET', `/orders/${sale.order}`)).body
              expect(order.evidence.map((e: {note: string}) => e.note).sort(), 'evidence').to.deep.equal([...sale.notes].sort())
              if (refunded === sale.amount) expect(order.status, 'order of a refunded payment').to.equal('refunded')
            }
          }
        }
        // Each acknowledged refund and warning announced once (read from process 0 as it is now: a kill may have replaced it).
        const last = procs[0]!.gw
        const refundEvents = (await events(last, acct.merchant.id, 'test', 'refund.created')).map((e) => e.data.object.id).sort()
        expect(refundEvents, 'refund.created').to.deep.equal(sales.flatMap((s) => [...s.refunds.keys()]).sort())
        const subscriptionEvents = (await events(last, acct.merchant.id, 'test', 'subscription.created')).map((e) => e.data.object.id).sort()
        expect(subscriptionEvents, 'subscription.created').to.deep.equal([...subscriptions].sort())
        const warningEvents = (await events(last, acct.merchant.id, 'test', 'fraud_warning.created')).map((e) => e.data.object.id).sort()
        expect(warningEvents, 'fraud_warning.created').to.deep.equal(sales.flatMap((s) => [...s.warnings]).sort())
        // Every event delivered to the merchant's endpoint, whichever process emitted and sent it (at least once).
        const all = (await last.admin('GET', `/events?merchant=${acct.merchant.id}&env=test&limit=1000`)).body.data as Array<{id: string}>
        await until(() => {
          const got = new Set(rx.got.map((r) => r.event.id as string))
          return all.every((e) => got.has(e.id))
        }, `the merchant's ${all.length} events delivered`, 15_000)
      }),
      // A failure whose shrinking outlasts the timeout still reports its counterexample (the smallest found by
      // then); a run that never ends is left to mocha's timeout, so the two are told apart.
      {numRuns: RUNS, interruptAfterTimeLimit: TIMEOUT - 60_000, markInterruptAsFailure: true},
    )
  })
})
