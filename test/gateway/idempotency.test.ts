import {expect} from 'chai'

import {checkout, sellable} from '../helpers/commerce.js'
import {expectError, TestGateway} from '../helpers/gateway.js'

const monthly = {amount: 1900, currency: 'eur', interval: 'month'}
const DAY = 86_400

describe('gateway idempotency keys', () => {
  let gw: TestGateway
  before(async () => {
    gw = await TestGateway.start()
  })
  after(() => gw.close())
  /** The merchant's clock, or the shared one. */
  const clockOf = async (merchant?: string) => (await gw.admin('GET', merchant ? `/clock?merchant=${merchant}` : '/clock')).body.now as number

  let n = 0
  const freshKey = () => `key-${Date.now()}-${++n}`
  const linkCount = async (acct: Awaited<ReturnType<TestGateway['account']>>) => (await acct.app('GET', '/subscription_links?limit=100')).body.data.length

  it('takes 1 to 255 printable ASCII characters; a 256-character key is 400 idempotency_key_invalid and runs nothing', async () => {
    const acct = await gw.account('live')
    const err = expectError(await acct.app('POST', '/subscription_links', {body: monthly, idempotencyKey: 'k'.repeat(256)}), 400, 'idempotency_key_invalid')
    expect(err.param).to.equal('Idempotency-Key')
    expect(await linkCount(acct)).to.equal(0)
    expect((await acct.app('POST', '/subscription_links', {body: monthly, idempotencyKey: 'k'.repeat(255)})).status).to.equal(201)
  })

  it('replays the first response for 24 hours, marked idempotent-replayed, without running the write again', async () => {
    const acct = await gw.account('live')
    const key = freshKey()
    const first = await acct.app('POST', '/subscription_links', {body: monthly, idempotencyKey: key})
    expect(first.status).to.equal(201)
    expect(first.headers.get('idempotent-replayed')).to.equal(null)

    await gw.admin('POST', '/clock', {advance_seconds: DAY - 10})
    const replay = await acct.app('POST', '/subscription_links', {body: monthly, idempotencyKey: key})
    expect(replay.status).to.equal(201)
    expect(replay.headers.get('idempotent-replayed')).to.equal('true')
    expect(replay.text).to.equal(first.text)
    expect(await linkCount(acct)).to.equal(1)
    const created = await gw.admin('GET', `/events?merchant=${acct.merchant.id}&env=live&type=subscription_link.created`)
    expect(created.body.data).to.have.length(1)

    await gw.admin('POST', '/clock', {advance_seconds: 11})
    const anew = await acct.app('POST', '/subscription_links', {body: monthly, idempotencyKey: key})
    expect(anew.status).to.equal(201)
    expect(anew.headers.get('idempotent-replayed')).to.equal(null)
    expect(anew.body.id).to.not.equal(first.body.id)
    expect(await linkCount(acct)).to.equal(2)
  })

  it('answers the same key with another body or another path with 409 idempotency_key_reused', async () => {
    const acct = await gw.account('live')
    const key = freshKey()
    const link = (await acct.app('POST', '/subscription_links', {body: monthly, idempotencyKey: key})).body
    const otherBody = expectError(await acct.app('POST', '/subscription_links', {body: {...monthly, amount: 2900}, idempotencyKey: key}), 409, 'idempotency_key_reused')
    expect(otherBody.type).to.equal('idempotency_error')
    expectError(await acct.app('POST', `/subscription_links/${link.id}/archive`, {idempotencyKey: key}), 409, 'idempotency_key_reused')
    expect((await acct.app('GET', `/subscription_links/${link.id}`)).body.active).to.equal(true)
    expect(await linkCount(acct)).to.equal(1)
  })

  it('keeps keys per credential: another installation may use the same key', async () => {
    const acct = await gw.account('live')
    const other = await gw.account('live')
    const key = freshKey()
    const mine = await acct.app('POST', '/subscription_links', {body: monthly, idempotencyKey: key})
    const theirs = await other.app('POST', '/subscription_links', {body: monthly, idempotencyKey: key})
    expect(theirs.status).to.equal(201)
    expect(theirs.headers.get('idempotent-replayed')).to.equal(null)
    expect(theirs.body.id).to.not.equal(mine.body.id)
  })

  it('ignores the header on GET and DELETE', async () => {
    const acct = await gw.account('live')
    const key = freshKey()
    await acct.app('POST', '/subscription_links', {body: monthly, idempotencyKey: key})

    for (const k of [key, 'k'.repeat(256)]) {
      const list = await acct.app('GET', '/subscription_links', {idempotencyKey: k})
      expect(list.status).to.equal(200)
      expect(list.body.object).to.equal('list')
      expect(list.headers.get('idempotent-replayed')).to.equal(null)
    }

    const deletes = [
      await acct.app('DELETE', '/products/prod_missing', {idempotencyKey: 'k'.repeat(256)}),
      await acct.app('DELETE', '/products/prod_missing', {idempotencyKey: key}),
      await acct.app('DELETE', '/products/prod_missing', {idempotencyKey: key}),
    ]
    for (const res of deletes) {
      expect(res.body.error.code).to.not.be.oneOf(['idempotency_key_invalid', 'idempotency_key_reused'])
      expect(res.headers.get('idempotent-replayed')).to.equal(null)
    }
    expect(deletes[2].body.error.request_id).to.not.equal(deletes[1].body.error.request_id)
  })

  it('replays a request the route rejected: the same 400, and the same 404', async () => {
    const acct = await gw.account('live')
    const key = freshKey()
    // Both an inline price and its synonym: a rejection by the route itself, after the key was claimed.
    const price = {currency: 'eur', unit_amount: 1000}
    const body = {name: 'Mug', price, default_price: price}
    const rejected = await acct.app('POST', '/products', {body, idempotencyKey: key})
    expectError(rejected, 400, 'parameters_exclusive')
    const replay = await acct.app('POST', '/products', {body, idempotencyKey: key})
    expect(replay.status).to.equal(400)
    expect(replay.headers.get('idempotent-replayed')).to.equal('true')
    expect(replay.text).to.equal(rejected.text)

    const archiveKey = freshKey()
    const missing = await acct.app('POST', '/subscription_links/sublink_missing/archive', {idempotencyKey: archiveKey})
    expectError(missing, 404, 'resource_missing')
    const again = await acct.app('POST', '/subscription_links/sublink_missing/archive', {idempotencyKey: archiveKey})
    expect(again.headers.get('idempotent-replayed')).to.equal('true')
    expect(again.text).to.equal(missing.text)
  })

  it('holds on the admin API too: a repeated POST replays its answer, another body is 409', async () => {
    const key = freshKey()
    const first = await gw.admin('POST', '/merchants', {company: 'Keyed GmbH'}, key)
    expect(first.status, first.text).to.equal(201)
    const replay = await gw.admin('POST', '/merchants', {company: 'Keyed GmbH'}, key)
    expect(replay.headers.get('idempotent-replayed')).to.equal('true')
    expect(replay.text).to.equal(first.text)
    expectError(await gw.admin('POST', '/merchants', {company: 'Other GmbH'}, key), 409, 'idempotency_key_reused')
    // A key of the admin API is not a credential's: the same key on the public API is its own.
    const acct = await gw.account('live')
    expect((await acct.app('POST', '/subscription_links', {body: monthly, idempotencyKey: key})).status).to.equal(201)

    // A session paid once: its retry replays the payment instead of answering session_already_completed.
    const sale = await acct.store('POST', '/products', {body: {name: 'Mug', price: {currency: 'eur', unit_amount: 1200}}})
    const opened = await acct.store('POST', '/checkouts', {body: {product_id: sale.body.id}})
    expect(opened.status, opened.text).to.equal(201)
    const payKey = freshKey()
    const paid = await gw.admin('POST', `/checkouts/${opened.body.session_id}/complete`, {outcome: 'paid'}, payKey)
    expect(paid.status, paid.text).to.equal(200)
    const again = await gw.admin('POST', `/checkouts/${opened.body.session_id}/complete`, {outcome: 'paid'}, payKey)
    expect(again.text).to.equal(paid.text)
    expectError(await gw.admin('POST', `/checkouts/${opened.body.session_id}/complete`, {outcome: 'paid'}), 422, 'session_already_completed')

  })

  it('makes a keyed clock jump once: the same key replays its answer and moves nothing, another body is 409', async () => {
    const acct = await gw.account('test')
    const jump = {merchant: acct.merchant.id, advance_seconds: 3600}
    const key = freshKey()
    const first = await gw.admin('POST', '/clock', jump, key)
    expect(first.status, first.text).to.equal(200)
    const again = await gw.admin('POST', '/clock', jump, key)
    expect(again.headers.get('idempotent-replayed')).to.equal('true')
    expect(again.text).to.equal(first.text)
    // Moved once: an hour ahead of the shared clock (a second jump would make it two; the reads may straddle a second).
    expect((await clockOf(acct.merchant.id)) - (await clockOf())).to.be.within(3599, 3600)
    expectError(await gw.admin('POST', '/clock', {...jump, advance_seconds: 60}, key), 409, 'idempotency_key_reused')

    // advance_to: the replay is the answer, not 400 clock_in_past for a moment the jump itself passed.
    const to = (await clockOf(acct.merchant.id)) + 600
    const toKey = freshKey()
    const moved = await gw.admin('POST', '/clock', {merchant: acct.merchant.id, advance_to: to}, toKey)
    expect(moved.body.now).to.equal(to)
    expect((await gw.admin('POST', '/clock', {merchant: acct.merchant.id, advance_seconds: 600})).status).to.equal(200)
    expectError(await gw.admin('POST', '/clock', {merchant: acct.merchant.id, advance_to: to}), 400, 'clock_in_past')
    expect((await gw.admin('POST', '/clock', {merchant: acct.merchant.id, advance_to: to}, toKey)).text).to.equal(moved.text)

    // Every clock: once per key too, each merchant keeping its lead.
    const allKey = freshKey()
    const shared = await clockOf()
    expect((await gw.admin('POST', '/clock', {advance_seconds: 86_400}, allKey)).status).to.equal(200)
    expect((await gw.admin('POST', '/clock', {advance_seconds: 86_400}, allKey)).headers.get('idempotent-replayed')).to.equal('true')
    expect((await clockOf()) - shared).to.be.within(86_400, 86_401)
    expect((await clockOf(acct.merchant.id)) - (await clockOf())).to.be.within(4799, 4800)

    // A refusal moved nothing and is replayed as it was.
    const unknownKey = freshKey()
    const unknown = await gw.admin('POST', '/clock', {merchant: 'mch_missing', advance_seconds: 60}, unknownKey)
    expectError(unknown, 404)
    expect((await gw.admin('POST', '/clock', {merchant: 'mch_missing', advance_seconds: 60}, unknownKey)).text).to.equal(unknown.text)
  })

  it('makes a keyed clock jump once when the same key comes again while the first still walks', async () => {
    const acct = await gw.account('test')
    for (const merchant of [acct.merchant.id, undefined]) {
      const jump = {...(merchant ? {merchant} : {}), advance_seconds: 3600}
      const key = freshKey()
      const shared = await clockOf()
      const lead = (await clockOf(acct.merchant.id)) - shared
      // Sent twice at once, as a client that gave up waiting sends it again: one jump, whichever answers first.
      const answers = await Promise.all([gw.admin('POST', '/clock', jump, key), gw.admin('POST', '/clock', jump, key)])
      for (const answer of answers) expect(answer.status, answer.text).to.equal(200)
      if (merchant) expect((await clockOf(merchant)) - (await clockOf()) - lead, "the merchant's jump").to.be.within(3599, 3600)
      else expect((await clockOf()) - shared, 'the shared jump').to.be.within(3600, 3602)
    }
  })

  it('gives every request with one clock advance key the same answer, however many come at once', async () => {
    const acct = await gw.account('test')
    const item = await sellable(acct, {stock: 20})
    for (const merchant of [acct.merchant.id, undefined]) {
      for (let round = 0; round < 4; round++) {
        // A session that expires in the jump: its answer says one job ran (a late request's own answer would say none).
        await checkout(acct, {product_id: item.product.id, quantity: 1})
        const jump = {...(merchant ? {merchant} : {}), advance_seconds: 2 * DAY}
        const key = freshKey()
        // Later ones join the jump, or come between its end and its answer: each must give the answer stored, not the clock as it then reads.
        const answers = await Promise.all(Array.from({length: 6}, () => gw.admin('POST', '/clock', jump, key)))
        const replay = await gw.admin('POST', '/clock', jump, key)
        for (const answer of answers) expect(answer.text, `round ${round}${merchant ? '' : ', every clock'}`).to.equal(replay.text)
      }
    }
  })
})
