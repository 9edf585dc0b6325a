/**
 * One test clock per merchant, over real HTTP: `POST /_admin/clock {merchant}` moves that merchant's
 * sessions, renewals and webhook attempts and nobody else's; without `merchant` every clock moves.
 */
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'

import {expect} from 'chai'

import {checkout, readVariant, sellable} from '../helpers/commerce.js'
import {expectError, TestGateway, type Account} from '../helpers/gateway.js'
import {receiver, sleep, until, type Receiver} from '../helpers/receiver.js'

const DAY = 86_400

describe('gateway: one test clock per merchant', function () {
  this.timeout(60_000)
  let gw: TestGateway
  const receivers: Receiver[] = []
  before(async () => (gw = await TestGateway.start()))
  after(async () => {
    await Promise.all(receivers.map((r) => r.close()))
    await gw.close()
  })

  /** A merchant with an open checkout holding all its stock, a paid monthly subscription and a webhook receiver. */
  async function merchantWithWork(status = () => 200) {
    const acct = await gw.account()
    const rx = await receiver(status)
    receivers.push(rx)
    await gw.admin('POST', '/webhook_endpoints', {merchant: acct.merchant.id, env: 'test', url: rx.url, events: ['*']})
    const item = await sellable(acct, {stock: 2})
    const session = await checkout(acct, {product_id: item.product.id, quantity: 2})
    const plan = await sellable(acct, {recurring: true, name: 'Plan'})
    const sub = await acct.api('POST', '/v1/subscriptions', {body: {price_id: plan.price, customer_name: 'Ada', customer_email: 'ada@example.com'}})
    expect((await gw.admin('POST', `/subscriptions/${sub.body.id}/confirm`, {outcome: 'paid'})).status).to.equal(200)
    await until(() => rx.types().includes('invoice.paid'), 'the first invoice.paid')
    return {acct, rx, item, session, sub: sub.body}
  }

  const clockOf = async (merchant?: string) => (await gw.admin('GET', merchant ? `/clock?merchant=${merchant}` : '/clock')).body
  const reserved = async (m: {acct: Account; item: {product: any; variant: any}}) => (await readVariant(m.acct, m.item.product.id, m.item.variant.id)).stock_reserved
  // Distinct events: a failing receiver (C's) gets each one again on its wall-clock retries.
  const invoicesPaid = (rx: Receiver) => new Set(rx.got.filter((r) => r.event.type === 'invoice.paid').map((r) => r.event.id)).size

  it("two merchants' clocks advance at once, each moving only its own sessions, renewals and webhook deliveries", async () => {
    const [a, b] = [await merchantWithWork(), await merchantWithWork()]
    // C's receiver fails, so its deliveries have retries pending on C's clock.
    const c = await merchantWithWork(() => 500)
    const attemptsOfC = async () =>
      (await gw.admin('GET', `/webhook_endpoints/${(await gw.admin('GET', `/webhook_endpoints?merchant=${c.acct.merchant.id}`)).body.data[0].id}/deliveries`)).body
        .data as {attempt: number; next_attempt: number | null}[]
    const furthestAttemptOfC = async () => Math.max(...(await attemptsOfC()).map((a) => a.attempt))
    const [startA, startB, startC, shared] = [await clockOf(a.acct.merchant.id), await clockOf(b.acct.merchant.id), await clockOf(c.acct.merchant.id), await clockOf()]

    const [movedA, movedB] = await Promise.all([
      gw.admin('POST', '/clock', {merchant: a.acct.merchant.id, advance_seconds: 31 * 60}),
      gw.admin('POST', '/clock', {merchant: b.acct.merchant.id, advance_seconds: 32 * DAY}),
    ])
    expect(movedA.status, movedA.text).to.equal(200)
    expect(movedB.status, movedB.text).to.equal(200)
    expect(movedA.body).to.include({object: 'clock', merchant: a.acct.merchant.id})
    expect(movedA.body.now - startA.now).to.be.within(31 * 60, 31 * 60 + 2)
    expect(movedB.body.now - startB.now).to.be.within(32 * DAY, 32 * DAY + 2)

    // A: its session expired, its subscription did not renew (B's month-long jump is not A's).
    expect(await reserved(a)).to.equal(0)
    expect(invoicesPaid(a.rx)).to.equal(1)
    expect(a.rx.types()).to.include('checkout.session.expired')
    // B: expired and renewed, the renewal stamped with B's time and delivered to B alone.
    expect(await reserved(b)).to.equal(0)
    expect(invoicesPaid(b.rx)).to.equal(2)
    const renewal = b.rx.got.filter((r) => r.event.type === 'invoice.paid')[1].event
    expect(renewal.created).to.be.within(startB.now + 28 * DAY, movedB.body.now)
    // C: nothing moved: its session holds its stock, no renewal, no retry of its failing deliveries.
    expect(await reserved(c)).to.equal(2)
    expect(invoicesPaid(c.rx)).to.equal(1)
    expect(c.rx.types()).not.to.include('checkout.session.expired')
    // Real time still runs C's retries (1, 6 and 36 s after a first attempt); B's 32-day walk, had it run C's, would
    // have made all seven attempts and given up.
    expect(await furthestAttemptOfC()).to.be.at.most(4)
    expect((await attemptsOfC()).filter((a) => a.next_attempt === null)).to.deep.equal([])
    expect((await clockOf(c.acct.merchant.id)).now - startC.now).to.be.within(0, 2)
    expect((await clockOf()).now - shared.now).to.be.within(0, 2)

    // Without a merchant every clock moves together: C's session expires, A's clock moves on from where A put it.
    const all = await gw.admin('POST', '/clock', {advance_seconds: 31 * 60})
    expect(all.status, all.text).to.equal(200)
    expect(all.body).to.include({object: 'clock', merchant: null})
    expect(all.body.now - shared.now).to.be.within(31 * 60, 31 * 60 + 4)
    expect(await reserved(c)).to.equal(0)
    // 31 minutes on C's clock: the attempts due 1, 6, 36, 156 and 756 s after each first one have run.
    expect(await furthestAttemptOfC()).to.be.at.least(6)
    const readA = await clockOf(a.acct.merchant.id)
    expect(readA.merchant).to.equal(a.acct.merchant.id)
    expect(readA.now - startA.now).to.be.within(62 * 60, 62 * 60 + 4)
    expect(readA.offset_seconds).to.be.within(62 * 60 - 2, 62 * 60 + 2)
    expect(invoicesPaid(a.rx)).to.equal(1)
  })

  it("objects carry their merchant's time; a moved clock is refused going back, and an unknown merchant's is a 404", async () => {
    const a = await gw.account()
    const b = await gw.account()
    await gw.admin('POST', '/clock', {merchant: a.merchant.id, advance_to: (await clockOf(a.merchant.id)).now + 10 * DAY})
    const madeA = (await a.store('POST', '/products', {body: {name: 'Later'}})).body
    const madeB = (await b.store('POST', '/products', {body: {name: 'Now'}})).body
    expect(madeA.created - madeB.created).to.be.within(10 * DAY - 2, 10 * DAY + 2)
    expectError(await gw.admin('POST', '/clock', {merchant: a.merchant.id, advance_to: (await clockOf()).now}), 400, 'clock_in_past')
    expectError(await gw.admin('GET', '/clock?merchant=mch_missing'), 404)
    expectError(await gw.admin('POST', '/clock', {merchant: 'mch_missing', advance_seconds: 1}), 404)
  })

  it('an advance of every clock walks each merchant to the same instant, however long the merchants before it took', async () => {
    // A receiver that takes 1.5 s for each event it takes: each merchant's walk lasts longer than a second.
    const slow = createServer((req, res) => {
      req.resume()
      setTimeout(() => res.writeHead(200).end(), 1500)
    })
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve))
    const own = await TestGateway.start()
    try {
      const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/`
      const merchants = await Promise.all(
        [1, 2].map(async () => {
          const acct = await own.account()
          await own.admin('POST', '/webhook_endpoints', {merchant: acct.merchant.id, env: 'test', url, events: ['checkout.session.expired']})
          return {acct, item: await sellable(acct, {stock: 5})}
        }),
      )
      // When each session expires, in clock seconds (the store API writes it as an ISO date).
      const made: number[] = []
      const open = async ({acct, item}: (typeof merchants)[number]) => {
        const expires = Date.parse((await checkout(acct, {product_id: item.product.id, quantity: 1})).expires_at) / 1000
        made.push(expires)
        return expires
      }
      // Each merchant: a session that expires in the jump (its slow delivery), and one that expires one second after it.
      await Promise.all(merchants.map(open))
      await sleep(1100)
      let later = await Promise.all(merchants.map(open))
      while (later[0] !== later[1]) later = await Promise.all(merchants.map(open))
      const t = later[0]! - 1
      const moved = await own.admin('POST', '/clock', {advance_to: t})
      expect(moved.status, moved.text).to.equal(200)
      // Only the sessions due by t expired in the jump, never the two due at t + 1: a merchant walked after the other's
      // 1.5 s reached them when its clock was read again for its own walk.
      expect(moved.body.jobs_run).to.equal(made.filter((expires) => expires <= t).length)
    } finally {
      await own.close()
      slow.closeAllConnections()
      await new Promise((resolve) => slow.close(resolve))
    }
  })

  it('a second gateway on the same database sees a merchant\'s clock move (within its 1 s tick), and a restart keeps it', async () => {
    const db = TestGateway.tempDbFile()
    const first = await TestGateway.start({db, adminKey: 'adm_shared_clock_test_key_0123456789'})
    const second = await TestGateway.start({db, adminKey: 'adm_shared_clock_test_key_0123456789'})
    try {
      const merchant = (await first.merchant()).id
      const read = async (g: TestGateway) => (await g.admin('GET', `/clock?merchant=${merchant}`)).body.offset_seconds as number
      expect(await read(second)).to.be.within(-1, 1)
      expect((await first.admin('POST', '/clock', {merchant, advance_seconds: 5 * DAY})).status).to.equal(200)
      await until(async () => (await read(second)) >= 5 * DAY - 2, 'the second gateway to read the moved clock', 3000)
      expect((await second.admin('GET', '/clock')).body.offset_seconds).to.be.within(-1, 1)
      await second.close()
      const third = await TestGateway.start({db, adminKey: 'adm_shared_clock_test_key_0123456789'})
      try {
        expect(await read(third)).to.be.within(5 * DAY - 2, 5 * DAY + 2)
      } finally {
        await third.close()
      }
    } finally {
      await first.close()
      await second.close().catch(() => {})
    }
  })
})
