/**
 * Webhook fault rules (`POST /_admin/faults {scope: "webhooks", …}`): deliveries duplicated, held on the
 * gateway clock, reordered, failed for their first attempts, over real HTTP to a real local receiver,
 * each visible in the endpoint's delivery log, the same seed striking the same deliveries.
 */
import {expect} from 'chai'

import {verifyWebhook} from '@payapp/sdk/webhooks-node'
import {advanceClock, sale, sellable} from '../helpers/commerce.js'
import {expectError, TestGateway, type Account} from '../helpers/gateway.js'
import {receiverPool, sleep, until, type Receiver} from '../helpers/receiver.js'

describe('gateway: webhook fault rules', function () {
  this.timeout(60_000)
  let gw: TestGateway
  const receivers = receiverPool()

  before(async () => {
    gw = await TestGateway.start()
  })
  afterEach(async () => {
    await gw.admin('DELETE', '/faults')
    await receivers.closeAll()
  })
  after(() => gw.close())

  async function setUp(events = ['product.created'], status?: () => number): Promise<{acct: Account; rx: Receiver; we: any}> {
    const acct = await gw.account('test')
    const rx = await receivers.open(status)
    const res = await gw.admin('POST', '/webhook_endpoints', {merchant: acct.merchant.id, env: 'test', url: rx.url, events})
    expect(res.status, res.text).to.equal(201)
    return {acct, rx, we: res.body}
  }

  async function rule(body: Record<string, unknown>) {
    const res = await gw.admin('POST', '/faults', {scope: 'webhooks', ...body})
    expect(res.status, res.text).to.equal(201)
    return res.body
  }

  const product = (acct: Account, name: string) => acct.store('POST', '/products', {body: {name, price: {currency: 'eur', unit_amount: 900}}})
  const log = async (we: {id: string}) => (await gw.admin('GET', `/webhook_endpoints/${we.id}/deliveries`)).body.data as any[]

  it('duplicate: delivers each matching event twice, same body and id, both signed, the copy marked in the log', async () => {
    const {acct, rx, we} = await setUp()
    const r = await rule({merchant: acct.merchant.id, event_type: 'product.created', duplicate: true})
    expect(r).to.include({object: 'fault', scope: 'webhooks', event_type: 'product.created', duplicate: true, status: null, route: null})

    await product(acct, 'Twice Mug')
    await until(() => rx.got.length === 2, 'two deliveries')
    await sleep(200)
    expect(rx.got).to.have.length(2)
    expect(rx.got[0].body).to.equal(rx.got[1].body)
    for (const got of rx.got) verifyWebhook(got.body, got.signature, we.secret)

    const attempts = await log(we)
    expect(attempts.map((a) => [a.attempt, a.delivered, a.fault, a.injected])).to.deep.equal([
      [1, true, r.id, []],
      [1, true, r.id, ['duplicate']],
    ])
    expect(attempts[1].duplicate_of).to.equal(attempts[0].delivery)
    expect((await gw.admin('GET', `/faults/${r.id}`)).body).to.include({hits: 1})
  })

  it('delay_seconds: holds deliveries until the gateway clock has moved that far, then delivers them in time order', async () => {
    const {acct, rx, we} = await setUp()
    await rule({endpoint: we.id, delay_seconds: 3600})
    await product(acct, 'Late Mug 1')
    await product(acct, 'Late Mug 2')
    await sleep(400)
    expect(rx.got).to.have.length(0)

    await advanceClock(gw, 1800)
    await sleep(200)
    expect(rx.got).to.have.length(0)

    await advanceClock(gw, 1800)
    // The advance answers once everything due on the way was attempted and logged.
    expect(rx.got.map((g) => g.event.data.object.name)).to.deep.equal(['Late Mug 1', 'Late Mug 2'])
    const attempts = await log(we)
    expect(attempts.map((a) => a.injected)).to.deep.equal([['delayed'], ['delayed']])
    for (const a of attempts) {
      expect(a.held_until).to.be.a('number')
      expect(a.attempted).to.be.at.least(a.held_until)
    }
  })

  it('reorder: delivers the matching events of one request newest first', async () => {
    const {acct, rx, we} = await setUp(['*'])
    await rule({endpoint: we.id, reorder: true})
    await sale(gw, acct, await sellable(acct))
    const emitted = ((await gw.admin('GET', `/events?merchant=${acct.merchant.id}&limit=1000`)).body.data as any[]).map((e) => e.id).reverse()
    await until(() => rx.got.length === emitted.length, 'every event')
    const received = rx.got.map((g) => g.event.id as string)
    expect(new Set(received)).to.deep.equal(new Set(emitted))
    // Within each request's events the order is reversed: the payment's request (the last events) comes newest first.
    const sale_ = emitted.filter((id) => rx.got.find((g) => g.event.id === id)!.event.type.match(/^(checkout|payment|store|charge)/))
    const receivedSale = received.filter((id) => sale_.includes(id))
    expect(receivedSale).to.deep.equal([...sale_].reverse())
    expect(receivedSale.length).to.be.greaterThan(1)
    expect((await log(we)).every((a) => a.injected.includes('reordered'))).to.equal(true)
  })

  it('fail_attempts: the first N attempts fail as timeouts without reaching the receiver, then the retry on the clock delivers', async () => {
    const {acct, rx, we} = await setUp()
    const r = await rule({fail_attempts: 3, merchant: acct.merchant.id})
    await product(acct, 'Flaky Mug')
    await until(async () => (await log(we)).length === 1, 'the first attempt')
    const first = await log(we)
    expect(first[0]).to.include({attempt: 1, status: null, delivered: false, outcome: 'retrying', fault: r.id})
    expect(first[0].injected).to.deep.equal(['failed'])
    expect(first[0].error).to.match(/timeout/)
    expect(rx.got).to.have.length(0)

    await advanceClock(gw, 1)
    await advanceClock(gw, 5)
    expect(rx.got).to.have.length(0)
    await advanceClock(gw, 30)
    expect(rx.got).to.have.length(1)
    const attempts = await log(we)
    expect(attempts.map((a) => [a.attempt, a.status, a.injected, a.outcome])).to.deep.equal([
      [1, null, ['failed'], 'retrying'],
      [2, null, ['failed'], 'retrying'],
      [3, null, ['failed'], 'retrying'],
      [4, 200, [], 'delivered'],
    ])
  })

  it('fail_attempts 7: the delivery is given up after the seventh attempt on the clock and shows as failed', async () => {
    const {acct, rx, we} = await setUp()
    await rule({fail_attempts: 7, merchant: acct.merchant.id})
    await product(acct, 'Lost Mug')
    await until(async () => (await log(we)).length === 1, 'the first attempt')
    // One jump past the whole schedule (1 s + 5 s + 30 s + 2 min + 10 min + 30 min) makes every retry in time order.
    await advanceClock(gw, 3600)
    const attempts = await log(we)
    expect(attempts.map((a) => a.attempt)).to.deep.equal([1, 2, 3, 4, 5, 6, 7])
    const gaps = attempts.slice(1).map((a, i) => a.attempted - attempts[i].attempted)
    expect(gaps).to.deep.equal([1, 5, 30, 120, 600, 1800])
    expect(attempts[6]).to.include({outcome: 'failed', next_attempt: null, delivered: false})
    expect(attempts.slice(0, 6).every((a) => a.outcome === 'retrying')).to.equal(true)
    await sleep(200)
    expect(rx.got).to.have.length(0)
  })

  it('count and event_type limit what a rule strikes; an API request is never faulted by a webhooks rule', async () => {
    const {acct, rx, we} = await setUp(['product.*', 'price.*'])
    const r = await rule({event_type: 'product.*', duplicate: true, count: 1, merchant: acct.merchant.id})
    expect((await product(acct, 'One')).status).to.equal(201)
    expect((await product(acct, 'Two')).status).to.equal(201)
    const types = (await gw.admin('GET', `/events?merchant=${acct.merchant.id}&limit=1000`)).body.data.length as number
    await until(() => rx.got.length === types + 1, 'every event and one copy')
    const copies = (await log(we)).filter((a) => a.injected.includes('duplicate'))
    expect(copies).to.have.length(1)
    expect(copies[0].type).to.equal('product.created')
    expect((await gw.admin('GET', `/faults/${r.id}`)).body).to.include({hits: 1, remaining: 0})
  })

  it('the same seed strikes the same deliveries on another gateway', async () => {
    async function run(seed: number): Promise<string[]> {
      const other = await TestGateway.start()
      const rx = await receivers.open()
      try {
        const acct = await other.account('test')
        const we = (await other.admin('POST', '/webhook_endpoints', {merchant: acct.merchant.id, env: 'test', url: rx.url, events: ['product.created']})).body
        expect((await other.admin('POST', '/faults', {scope: 'webhooks', duplicate: true, probability: 0.5, seed})).status).to.equal(201)
        for (let i = 0; i < 12; i++) await acct.store('POST', '/products', {body: {name: `Seeded ${i}`, price: {currency: 'eur', unit_amount: 900}}})
        await until(async () => ((await other.admin('GET', `/webhook_endpoints/${we.id}/deliveries`)).body.data as any[]).length >= 12, 'every delivery')
        await sleep(300)
        const attempts = (await other.admin('GET', `/webhook_endpoints/${we.id}/deliveries`)).body.data as any[]
        const byEvent = new Map(attempts.map((a) => [a.event, a.type]))
        const names = new Map(rx.got.map((g) => [g.event.id, g.event.data.object.name as string]))
        expect(byEvent.size).to.equal(12)
        return attempts.filter((a) => a.injected.includes('duplicate')).map((a) => names.get(a.event)!).sort()
      } finally {
        await other.close()
      }
    }
    const first = await run(7)
    expect(first.length).to.be.within(1, 11)
    expect(await run(7)).to.deep.equal(first)
    expect(await run(8)).to.not.deep.equal(first)
  })

  it('refuses a rule that mixes scopes, does nothing, or names an unknown endpoint', async () => {
    expectError(await gw.admin('POST', '/faults', {scope: 'webhooks', duplicate: true, status: 500}), 400)
    const none = await gw.admin('POST', '/faults', {scope: 'webhooks', event_type: '*'})
    expectError(none, 400)
    expect(none.text).to.include('duplicate')
    expectError(await gw.admin('POST', '/faults', {duplicate: true}), 400)
    expectError(await gw.admin('POST', '/faults', {scope: 'webhooks', fail_attempts: 8}), 400)
    expect(expectError(await gw.admin('POST', '/faults', {scope: 'webhooks', duplicate: true, endpoint: 'we_nope'}), 404).param).to.equal('endpoint')
    expect((await gw.admin('GET', '/faults')).body.data).to.deep.equal([])
  })

  it('starts with webhook rules given to startGateway (gateway start --faults)', async () => {
    const started = await TestGateway.start({faults: [{scope: 'webhooks', duplicate: true, event_type: 'product.created'}]})
    const rx = await receivers.open()
    try {
      const acct = await started.account('test')
      await started.admin('POST', '/webhook_endpoints', {merchant: acct.merchant.id, env: 'test', url: rx.url, events: ['product.created']})
      await acct.store('POST', '/products', {body: {name: 'Filed Mug', price: {currency: 'eur', unit_amount: 900}}})
      await until(() => rx.got.length === 2, 'the event and its copy')
    } finally {
      await started.close()
    }
  })
})
