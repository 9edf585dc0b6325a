/** Webhook delivery over real HTTP to a local receiver: signing, scoping, filtering, retries, the outbox. */
import {createServer, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'

import {expect} from 'chai'

import {verifyWebhook} from '@payapp/sdk/webhooks-node'
import {advanceClock, checkout, pay, sale, sellable} from '../helpers/commerce.js'
import {TestGateway} from '../helpers/gateway.js'
import {receiver, sleep, until} from '../helpers/receiver.js'

describe('gateway: webhooks', () => {
  let gw: TestGateway
  before(async () => {
    gw = await TestGateway.start()
  })
  after(() => gw.close())

  /** The endpoints the running test made: a failed test prints their delivery logs (what was sent, when, and why not). */
  let made: string[] = []
  beforeEach(() => {
    made = []
  })
  afterEach(async function () {
    if (this.currentTest?.state !== 'failed') return
    for (const id of made) {
      const log = await gw.admin('GET', `/webhook_endpoints/${id}/deliveries`).catch((error: Error) => ({text: String(error)}))
      console.log(`    deliveries of ${id} at ${new Date().toISOString()}: ${log.text}`)
    }
  })

  async function endpoint(body: Record<string, unknown>) {
    const res = await gw.admin('POST', '/webhook_endpoints', body)
    expect(res.status, res.text).to.equal(201)
    made.push(res.body.id)
    return res.body
  }

  it('delivers a store sale to a subscribed endpoint, signed with its secret', async () => {
    const acct = await gw.account('test')
    const rx = await receiver()
    try {
      const we = await endpoint({merchant: acct.merchant.id, env: 'test', url: rx.url, events: ['checkout.session.completed', 'payment.succeeded']})
      expect(we).to.include({object: 'webhook_endpoint', merchant: acct.merchant.id, env: 'test', url: rx.url})
      expect(we.id).to.match(/^we_/)
      expect(we.secret).to.match(/^whsec_/)
      expect(we.events).to.deep.equal(['checkout.session.completed', 'payment.succeeded'])

      const {session, payment} = await sale(gw, acct, await sellable(acct))
      await until(() => rx.got.length >= 2, 'two deliveries')
      expect(rx.got.map((r) => r.event.type)).to.deep.equal(['checkout.session.completed', 'payment.succeeded'])
      for (const r of rx.got) {
        const event = verifyWebhook(r.body, r.signature, we.secret)
        expect(event).to.include({object: 'event', livemode: false})
        expect(event.id).to.match(/^evt_/)
        expect(r.userAgent).to.match(/^payapp-gateway\//)
        expect(() => verifyWebhook(r.body, r.signature, 'whsec_someoneelse')).to.throw(/signature/i)
      }
      expect(rx.got[0].event.data.object.id).to.equal(session.id)
      expect(rx.got[1].event.data.object.id).to.equal(payment.id)
      // The delivered event is the one in the merchant's event log.
      const logged = await gw.admin('GET', `/events?merchant=${acct.merchant.id}&type=checkout.session.completed`)
      expect(logged.body.data[0]).to.deep.equal(rx.got[0].event)

      // An attempt is logged once its answer came back: the receiver may have the second before the log has it.
      const log = await until(async () => {
        const read = await gw.admin('GET', `/webhook_endpoints/${we.id}/deliveries`)
        return read.status !== 200 || read.body.data.length >= 2 ? read : undefined
      }, 'both attempts logged')
      expect(log.status, log.text).to.equal(200)
      expect(log.body.data.map((a: any) => [a.type, a.attempt, a.status, a.delivered, a.next_attempt])).to.deep.equal([
        ['checkout.session.completed', 1, 200, true, null],
        ['payment.succeeded', 1, 200, true, null],
      ])
    } finally {
      await rx.close()
    }
  })

  it("selects events by type, prefix or *, and never sends another mode's or merchant's events", async () => {
    const acct = await gw.account('test')
    const other = await gw.account('test')
    const [all, prefix, refunds, live, foreign] = await Promise.all([receiver(), receiver(), receiver(), receiver(), receiver()])
    try {
      await endpoint({merchant: acct.merchant.id, env: 'test', url: all.url})
      await endpoint({merchant: acct.merchant.id, env: 'test', url: prefix.url, events: ['checkout.session.*']})
      await endpoint({merchant: acct.merchant.id, env: 'test', url: refunds.url, events: ['charge.refunded']})
      await endpoint({merchant: acct.merchant.id, env: 'live', url: live.url})
      await endpoint({merchant: other.merchant.id, env: 'test', url: foreign.url})

      const item = await sellable(acct)
      const co = await checkout(acct, {product_id: item.product.id, variant_id: item.variant.id, quantity: 1})
      expect((await pay(gw, co.session_id, {outcome: 'paid'})).status).to.equal(200)

      const logged = await gw.admin('GET', `/events?merchant=${acct.merchant.id}&limit=1000`)
      const types = (logged.body.data as any[]).map((e) => e.type).reverse()
      await until(() => all.got.length >= types.length, 'every event at the * endpoint')
      await sleep(300)
      expect(all.got.map((r) => r.event.type)).to.deep.equal(types)
      expect(prefix.got.map((r) => r.event.type)).to.deep.equal(['checkout.session.completed'])
      expect(refunds.got).to.have.length(0)
      expect(live.got).to.have.length(0)
      expect(foreign.got).to.have.length(0)
    } finally {
      await Promise.all([all, prefix, refunds, live, foreign].map((r) => r.close()))
    }
  })

  it('retries a failing receiver on the gateway clock, logs each attempt, and gives up after seven', async () => {
    const acct = await gw.account('test')
    let answer = 500
    const rx = await receiver(() => answer)
    try {
      const we = await endpoint({merchant: acct.merchant.id, env: 'test', url: rx.url, events: ['product.created'], secret: 'whsec_chosen_by_the_test'})
      expect(we.secret).to.equal('whsec_chosen_by_the_test')
      const created = await acct.store('POST', '/products', {body: {name: 'Retry Mug', price: {currency: 'eur', unit_amount: 900}}})
      expect(created.status, created.text).to.equal(201)

      // At least: the second attempt is due 1 s later on the gateway clock, which runs with the wall clock too.
      await until(() => rx.got.length >= 1, 'the first attempt')
      const deliveries = async () => (await gw.admin('GET', `/webhook_endpoints/${we.id}/deliveries`)).body.data as any[]
      const first = (await deliveries()).find((a) => a.attempt === 1)
      expect(first).to.include({type: 'product.created', attempt: 1, status: 500, delivered: false})
      expect(first.next_attempt).to.equal(first.attempted + 1)

      // Attempts 2–7 come due as the clock passes each backoff (1 s, 5 s, 30 s, 2 min, 10 min, 30 min).
      for (const [n, wait] of [[2, 1], [3, 5], [4, 30], [5, 120], [6, 600], [7, 1800]]) {
        await advanceClock(gw, wait)
        await until(() => rx.got.length === n, `attempt ${n}`)
      }
      const log = await deliveries()
      expect(log.map((a) => a.attempt)).to.deep.equal([1, 2, 3, 4, 5, 6, 7])
      expect(log.every((a) => a.status === 500 && a.event === rx.got[0].event.id)).to.equal(true)
      expect(log[6].next_attempt).to.equal(null)
      // The same event and body each time, each signed afresh.
      expect(new Set(rx.got.map((r) => r.body)).size).to.equal(1)
      for (const r of rx.got) verifyWebhook(r.body, r.signature, we.secret)

      answer = 200
      await advanceClock(gw, 24 * 3600)
      await sleep(500)
      expect(rx.got).to.have.length(7)
    } finally {
      await rx.close()
    }
  })

  it('delivers a retried event once the receiver recovers, and not again', async () => {
    const acct = await gw.account('test')
    // The first attempt fails and every later one is answered 204. The retry is due 1 s later on the gateway clock
    // (BACKOFF_SECONDS), which runs with the wall clock too: it may come on its own before the advance below.
    let attempts = 0
    const rx = await receiver(() => (++attempts === 1 ? 503 : 204))
    try {
      const we = await endpoint({merchant: acct.merchant.id, env: 'test', url: rx.url, events: ['product.*']})
      await acct.store('POST', '/products', {body: {name: 'Flaky Mug', price: {currency: 'eur', unit_amount: 900}}})
      await until(() => rx.got.length >= 1, 'the first attempt')
      await advanceClock(gw, 1)
      await until(() => rx.got.length === 2, 'the retry')
      await advanceClock(gw, 3600)
      await sleep(400)
      expect(rx.got).to.have.length(2)
      const log = (await gw.admin('GET', `/webhook_endpoints/${we.id}/deliveries`)).body.data
      expect(log.map((a: any) => [a.attempt, a.status, a.delivered])).to.deep.equal([
        [1, 503, false],
        [2, 204, true],
      ])
    } finally {
      await rx.close()
    }
  })

  it('records an unreachable endpoint as an error and schedules a retry', async () => {
    const acct = await gw.account('test')
    const rx = await receiver()
    await rx.close()
    const we = await endpoint({merchant: acct.merchant.id, env: 'test', url: rx.url, events: ['product.created']})
    await acct.store('POST', '/products', {body: {name: 'Lost Mug', price: {currency: 'eur', unit_amount: 900}}})
    let attempts: any[] = []
    const deadline = Date.now() + 3000
    while (attempts.length === 0 && Date.now() < deadline) {
      attempts = (await gw.admin('GET', `/webhook_endpoints/${we.id}/deliveries`)).body.data
      await sleep(30)
    }
    // The first retry is due one second of the gateway clock later (the start of the next second): a slow poll
    // may see it made too.
    expect(attempts.length).to.be.within(1, 2)
    expect(attempts[0]).to.include({attempt: 1, status: null, delivered: false, error: 'ECONNREFUSED'})
    expect(attempts[0].next_attempt).to.equal(attempts[0].attempted + 1)
    if (attempts[1]) {
      expect(attempts[1]).to.include({attempt: 2, error: 'ECONNREFUSED'})
      expect(attempts[1].attempted).to.be.at.least(attempts[0].next_attempt)
    }
  })

  it('delivers nothing for a request that was rolled back', async () => {
    const acct = await gw.account('test')
    const rx = await receiver()
    try {
      await endpoint({merchant: acct.merchant.id, env: 'test', url: rx.url})
      const item = await sellable(acct, {stock: 1})
      await until(() => rx.got.length > 0, 'the catalogue events')
      await sleep(300)
      const before = rx.got.length
      // A checkout for more than the stock is refused: its transaction rolls back, events and all.
      const refused = await acct.store('POST', '/checkouts', {body: {product_id: item.product.id, variant_id: item.variant.id, quantity: 5}})
      expect(refused.status).to.be.within(400, 499)
      // A paid session paid twice: the second completion is refused and delivers nothing.
      const {session} = await sale(gw, acct, item)
      await until(() => rx.got.some((r) => r.event.type === 'checkout.session.completed'), 'the sale')
      await sleep(300)
      const afterSale = rx.got.length
      const again = await pay(gw, session.id)
      expect(again.status).to.be.within(400, 499)
      await sleep(400)
      expect(rx.got.length).to.equal(afterSale)
      expect(rx.got.slice(before).filter((r) => r.event.type.startsWith('checkout.session.')).map((r) => r.event.type)).to.deep.equal(['checkout.session.completed'])

      // The outbox row lives in the emitting transaction: a throw after the emit takes the delivery with it.
      const platform = gw.gw.platform
      const scope = {merchant: acct.merchant.id, env: 'test' as const}
      const failed = await platform
        .write(async (tx) => {
          await tx.emit(scope, 'product.updated', {id: 'prod_rolled_back'})
          throw new Error('handler failed after emitting')
        })
        .catch((error: Error) => error)
      expect(failed).to.be.instanceOf(Error).with.property('message', 'handler failed after emitting')
      await platform.write((tx) => tx.emit(scope, 'product.updated', {id: 'prod_committed'}))
      await until(() => rx.got.some((r) => r.event.data.object.id === 'prod_committed'), 'the committed event')
      await sleep(300)
      expect(rx.got.filter((r) => r.event.data.object.id === 'prod_rolled_back')).to.have.length(0)
    } finally {
      await rx.close()
    }
  })

  it("delivers to one endpoint while another's backlog waits on a receiver that does not answer", async () => {
    const acct = await gw.account('test')
    // A receiver that takes every request and never answers: its endpoint's chain waits on the first.
    const hung: ServerResponse[] = []
    const stuck = createServer((_req, res) => void hung.push(res))
    await new Promise<void>((resolve) => stuck.listen(0, '127.0.0.1', resolve))
    const fast = await receiver()
    try {
      const stuckUrl = `http://127.0.0.1:${(stuck.address() as AddressInfo).port}/hooks`
      await endpoint({merchant: acct.merchant.id, env: 'test', url: stuckUrl, events: ['product.created']})
      // More waiting deliveries than the worker reads at once (100), all queued before the other endpoint's.
      for (let i = 0; i < 110; i++) await acct.store('POST', '/products', {body: {name: `Backlog ${i}`}})
      await until(() => hung.length === 1, 'the stuck endpoint holding its first delivery')
      await endpoint({merchant: acct.merchant.id, env: 'test', url: fast.url, events: ['product.created']})
      await acct.store('POST', '/products', {body: {name: 'Not held up'}})
      await until(() => fast.got.length === 1, 'the other endpoint delivered at once', 2000)
      expect(fast.got[0].event.data.object.name).to.equal('Not held up')
    } finally {
      stuck.closeAllConnections()
      await new Promise<void>((resolve) => stuck.close(() => resolve()))
      await fast.close()
    }
  })

  it('lists endpoints with masked secrets, deletes them, and validates the body', async () => {
    const acct = await gw.account('test')
    const rx = await receiver()
    try {
      const we = await endpoint({merchant: acct.merchant.id, env: 'test', url: rx.url})
      expect(we.events).to.deep.equal(['*'])
      const list = await gw.admin('GET', `/webhook_endpoints?merchant=${acct.merchant.id}`)
      expect(list.status, list.text).to.equal(200)
      expect(list.body.data).to.have.length(1)
      expect(list.body.data[0]).to.include({id: we.id, url: rx.url})
      expect(list.body.data[0].secret).to.equal(`whsec_…${we.secret.slice(-4)}`)
      expect(list.text).not.to.include(we.secret)

      const deleted = await gw.admin('DELETE', `/webhook_endpoints/${we.id}`)
      expect(deleted.body).to.deep.equal({id: we.id, object: 'webhook_endpoint', deleted: true})
      expect((await gw.admin('DELETE', `/webhook_endpoints/${we.id}`)).status).to.equal(404)
      expect((await gw.admin('GET', `/webhook_endpoints/${we.id}/deliveries`)).status).to.equal(404)
      await acct.store('POST', '/products', {body: {name: 'Unheard Mug', price: {currency: 'eur', unit_amount: 900}}})
      await sleep(300)
      expect(rx.got).to.have.length(0)

      const bad = await gw.admin('POST', '/webhook_endpoints', {merchant: acct.merchant.id, env: 'test', url: 'ftp://example.com'})
      expect(bad.status).to.equal(400)
      expect(bad.body.error.param).to.equal('url')
      expect((await gw.admin('POST', '/webhook_endpoints', {merchant: 'mch_missing', env: 'test', url: rx.url})).status).to.equal(404)
      expect((await gw.admin('GET', '/webhook_endpoints')).status).to.equal(400)
    } finally {
      await rx.close()
    }
  })
})
