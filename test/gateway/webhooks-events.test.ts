/**
 * The admin event log by type, time (gateway clock) and delivery state, and a resend of every event a
 * filter selects (`POST /_admin/events/resend`), over real HTTP with a real local receiver.
 */
import {expect} from 'chai'

import {advanceClock} from '../helpers/commerce.js'
import {expectError, TestGateway} from '../helpers/gateway.js'
import {receiverPool, until} from '../helpers/receiver.js'

describe('gateway: the event log by type, time and delivery state; resending many', function () {
  this.timeout(30_000)
  let gw: TestGateway
  const receivers = receiverPool()
  before(async () => {
    gw = await TestGateway.start()
  })
  after(async () => {
    await receivers.closeAll()
    await gw.close()
  })

  it('filters by delivery state, type and time, and resends the failed ones oldest first', async () => {
    const acct = await gw.account('test')
    const merchant = acct.merchant.id
    let answer = 200
    const rx = await receivers.open(() => answer)
    const we = (await gw.admin('POST', '/webhook_endpoints', {merchant, env: 'test', url: rx.url, events: ['product.created']})).body
    const product = async (name: string) => (await acct.store('POST', '/products', {body: {name, price: {currency: 'eur', unit_amount: 900}}})).body
    const ids = async (query: string) => ((await gw.admin('GET', `/events?merchant=${merchant}&${query}`)).body.data as any[]).map((e) => e.data.object.name ?? e.type)

    await product('Delivered')
    await until(() => rx.got.length === 1, 'the first delivery')
    answer = 500
    await product('Failing 1')
    await product('Failing 2')
    // At least: a failed delivery is retried 1 s later (BACKOFF_SECONDS), which a slow run may see first.
    await until(() => rx.got.length >= 3, 'two failed attempts')
    await until(async () => ((await gw.admin('GET', `/webhook_endpoints/${we.id}/deliveries`)).body.data as any[]).length >= 3, 'three logged attempts')
    await gw.admin('POST', '/faults', {scope: 'webhooks', endpoint: we.id, delay_seconds: 600})
    await product('Held')
    await gw.admin('DELETE', '/faults')

    expect(await ids('delivery=delivered&type=product.created')).to.deep.equal(['Delivered'])
    expect(await ids('delivery=failed')).to.deep.equal(['Failing 2', 'Failing 1'])
    expect(await ids('delivery=failed&order=asc')).to.deep.equal(['Failing 1', 'Failing 2'])
    expect(await ids('delivery=pending')).to.deep.equal(['Held'])
    expect(new Set(await ids('delivery=none'))).to.deep.equal(new Set(['price.created']))
    expectError(await gw.admin('GET', `/events?merchant=${merchant}&delivery=lost`), 400)

    // Time on the gateway clock, and an event id as a starting point.
    const all = (await gw.admin('GET', `/events?merchant=${merchant}&type=product.created&order=asc`)).body.data as any[]
    await advanceClock(gw, 3 * 3600)
    await product('Later')
    const later = all.at(-1).created + 3 * 3600
    expect(await ids(`type=product.created&since=${later}`)).to.deep.equal(['Later'])
    expect(await ids(`type=product.created&since=${new Date(later * 1000).toISOString()}`)).to.deep.equal(['Later'])
    expect(await ids(`type=product.created&until=${later - 1}`)).to.deep.equal(['Held', 'Failing 2', 'Failing 1', 'Delivered'])
    expect(await ids(`type=product.created&since=${all[2].id}&order=asc`)).to.deep.equal(['Held', 'Later'])
    expect(expectError(await gw.admin('GET', `/events?merchant=${merchant}&since=evt_nope`), 404).param).to.equal('since')
    expect(expectError(await gw.admin('GET', `/events?merchant=${merchant}&since=yesterday`), 400).param).to.equal('since')

    // Resend every failed event to a second endpoint: oldest first, once each.
    const rx2 = await receivers.open()
    const we2 = (await gw.admin('POST', '/webhook_endpoints', {merchant, env: 'test', url: rx2.url, events: ['product.created']})).body
    const resent = await gw.admin('POST', '/events/resend', {merchant, delivery: 'failed', endpoint: we2.id})
    expect(resent.status, resent.text).to.equal(200)
    const failed = (await gw.admin('GET', `/events?merchant=${merchant}&delivery=failed&order=asc`)).body.data as any[]
    expect(failed.map((e) => e.data.object.name)).to.deep.equal(['Failing 1', 'Failing 2', 'Held', 'Later'])
    expect(resent.body).to.deep.include({object: 'event_resend_batch', events: 4, queued_deliveries: 4, first: failed[0].id, last: failed[3].id})
    await until(() => rx2.got.length === 4, 'the four resent events')
    expect(rx2.got.map((g) => g.event.data.object.name)).to.deep.equal(['Failing 1', 'Failing 2', 'Held', 'Later'])
    // The first endpoint has still not got them (three were given up on the way): a resend there ends that.
    expect(await ids('delivery=failed&order=asc')).to.deep.equal(['Failing 1', 'Failing 2', 'Held', 'Later'])
    answer = 200
    expect((await gw.admin('POST', '/events/resend', {merchant, delivery: 'failed', endpoint: we.id})).body).to.deep.include({events: 4})
    await until(async () => (await ids('delivery=failed')).length === 0, 'no failed event left')
    expect(await ids('delivery=delivered&order=asc')).to.deep.equal(['Delivered', 'Failing 1', 'Failing 2', 'Held', 'Later'])

    const none = await gw.admin('POST', '/events/resend', {merchant, type: 'refund.*'})
    expect(none.body).to.deep.include({events: 0, queued_deliveries: 0, first: null, last: null})
    expectError(await gw.admin('POST', '/events/resend', {merchant, endpoint: 'we_nope'}), 404)
    expectError(await gw.admin('POST', '/events/resend', {merchant: 'mch_nope'}), 404)
  })
})
