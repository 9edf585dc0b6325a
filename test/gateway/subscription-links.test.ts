import {expect} from 'chai'

import {SUBSCRIPTION_LINK_IMMUTABLE_FIELDS} from '@payapp/sdk/schemas/commerce'
import {expectError, TestGateway} from '../helpers/gateway.js'

const monthly = {amount: 1900, currency: 'eur', interval: 'month'}

describe('gateway subscription links', () => {
  let gw: TestGateway
  before(async () => {
    gw = await TestGateway.start()
  })
  after(() => gw.close())

  const events = async (merchant: string, type: string) =>
    (await gw.admin('GET', `/events?merchant=${merchant}&env=live&type=${type}`)).body.data as Array<{livemode: boolean; data: {object: {id: string}}}>

  it('are for live installations only: a test installation gets 400 livemode_required', async () => {
    const acct = await gw.account('test')
    expectError(await acct.app('GET', '/subscription_links'), 400, 'livemode_required')
    expectError(await acct.app('GET', '/subscription_links/sublink_x'), 400, 'livemode_required')
    expectError(await acct.app('POST', '/subscription_links', {body: monthly}), 400, 'livemode_required')
    expectError(await acct.app('POST', '/subscription_links/sublink_x', {body: {name: 'x'}}), 400, 'livemode_required')
    expectError(await acct.app('POST', '/subscription_links/sublink_x/archive'), 400, 'livemode_required')
  })

  it('creates a link with a URL, defaults filled, and subscription_link.created', async () => {
    const acct = await gw.account('live')
    const res = await acct.app('POST', '/subscription_links', {body: {...monthly, interval_count: 3, name: 'Coffee club', trial_period_days: 14, metadata: {plan: 'gold'}}})
    expect(res.status).to.equal(201)
    const link = res.body
    expect(link.id).to.match(/^sublink_/)
    expect(link).to.deep.include({
      object: 'subscription_link',
      livemode: true,
      name: 'Coffee club',
      description: null,
      amount: 1900,
      currency: 'eur',
      interval: 'month',
      interval_count: 3,
      trial_period_days: 14,
      url: `${gw.url}/l/${link.id}`,
      active: true,
      archived_at: null,
      metadata: {plan: 'gold'},
    })
    expect(link.updated).to.equal(link.created)
    expect((await acct.app('GET', `/subscription_links/${link.id}`)).body).to.deep.equal(link)

    const plain = (await acct.app('POST', '/subscription_links', {body: monthly})).body
    expect(plain).to.include({name: 'Subscription', interval_count: 1, trial_period_days: null})
    expect((await events(acct.merchant.id, 'subscription_link.created')).map((e) => e.data.object.id)).to.deep.equal([plain.id, link.id])
  })

  it('validates the create body: minimum amount, currency, interval, period length', async () => {
    const acct = await gw.account('live')
    expectError(await acct.app('POST', '/subscription_links', {body: {...monthly, amount: 249}}), 400, 'amount_too_small')
    expectError(await acct.app('POST', '/subscription_links', {body: {...monthly, currency: 'EUR'}}), 400)
    expectError(await acct.app('POST', '/subscription_links', {body: {...monthly, interval: 'fortnight'}}), 400, 'parameter_invalid_enum')
    expect(expectError(await acct.app('POST', '/subscription_links', {body: {...monthly, interval_count: 13}}), 400).param).to.equal('interval_count')
    expect(expectError(await acct.app('POST', '/subscription_links', {body: {currency: 'eur', interval: 'month'}}), 400, 'parameter_missing').param).to.equal('amount')
    expect((await acct.app('GET', '/subscription_links')).body.data).to.deep.equal([])
  })

  it('takes the merchant from the installation: a merchant field is an unknown parameter', async () => {
    const acct = await gw.account('live')
    const other = await gw.merchant()
    const err = expectError(await acct.app('POST', '/subscription_links', {body: {...monthly, merchant: other.id}}), 400, 'parameter_unknown')
    expect(err.param).to.equal('merchant')
  })

  it('lists newest first with limit, offset and has_more, and only the merchant’s own', async () => {
    const acct = await gw.account('live')
    const other = await gw.account('live')
    const ids: string[] = []
    for (const name of ['a', 'b', 'c']) ids.push((await acct.app('POST', '/subscription_links', {body: {...monthly, name}})).body.id)
    await other.app('POST', '/subscription_links', {body: monthly})

    const page = await acct.app('GET', '/subscription_links?limit=2')
    expect(page.body.data.map((l: {id: string}) => l.id)).to.deep.equal([ids[2], ids[1]])
    expect(page.body.has_more).to.equal(true)
    const last = await acct.app('GET', '/subscription_links?limit=2&offset=2')
    expect(last.body).to.deep.include({has_more: false})
    expect(last.body.data.map((l: {id: string}) => l.id)).to.deep.equal([ids[0]])
  })

  it('answers another merchant’s link with 404 on every route, changing nothing', async () => {
    const acct = await gw.account('live')
    const other = await gw.account('live')
    const link = (await acct.app('POST', '/subscription_links', {body: monthly})).body
    expectError(await other.app('GET', `/subscription_links/${link.id}`), 404, 'resource_missing')
    expectError(await other.app('POST', `/subscription_links/${link.id}`, {body: {name: 'Stolen'}}), 404, 'resource_missing')
    expectError(await other.app('POST', `/subscription_links/${link.id}/archive`), 404, 'resource_missing')
    expect((await acct.app('GET', `/subscription_links/${link.id}`)).body).to.deep.equal(link)
  })

  it('updates name, description, trial and metadata (an empty value deletes a key) with subscription_link.updated', async () => {
    const acct = await gw.account('live')
    const link = (await acct.app('POST', '/subscription_links', {body: {...monthly, description: 'Old', trial_period_days: 7, metadata: {a: '1', b: '2'}}})).body
    await gw.admin('POST', '/clock', {advance_seconds: 10})
    const res = await acct.app('POST', `/subscription_links/${link.id}`, {body: {name: 'Tea club', description: null, trial_period_days: null, metadata: {b: '', c: '3'}}})
    expect(res.status).to.equal(200)
    expect(res.body).to.deep.include({id: link.id, name: 'Tea club', description: null, trial_period_days: null, metadata: {a: '1', c: '3'}, amount: 1900, active: true})
    expect(res.body.updated).to.be.at.least(link.created + 10)
    expect((await acct.app('GET', `/subscription_links/${link.id}`)).body).to.deep.equal(res.body)
    expect((await events(acct.merchant.id, 'subscription_link.updated')).map((e) => e.data.object)).to.deep.equal([res.body])

    const noop = await acct.app('POST', `/subscription_links/${link.id}`, {body: {name: 'Tea club'}})
    expect(noop.body).to.deep.equal(res.body)
    expect(await events(acct.merchant.id, 'subscription_link.updated')).to.have.length(1)
  })

  for (const field of SUBSCRIPTION_LINK_IMMUTABLE_FIELDS) {
    it(`refuses to change ${field} with 400 parameter_immutable`, async () => {
      const acct = await gw.account('live')
      const link = (await acct.app('POST', '/subscription_links', {body: monthly})).body
      const value = {amount: 2900, currency: 'usd', interval: 'year', interval_count: 2}[field]
      const err = expectError(await acct.app('POST', `/subscription_links/${link.id}`, {body: {name: 'Changed', [field]: value}}), 400, 'parameter_immutable')
      expect(err.param).to.equal(field)
      expect((await acct.app('GET', `/subscription_links/${link.id}`)).body).to.deep.equal(link)
    })
  }

  it('archives once: active false with archived_at, subscription_link.archived; archiving again changes nothing', async () => {
    const acct = await gw.account('live')
    const link = (await acct.app('POST', '/subscription_links', {body: monthly})).body
    const archived = await acct.app('POST', `/subscription_links/${link.id}/archive`)
    expect(archived.status).to.equal(200)
    expect(archived.body).to.include({id: link.id, active: false})
    expect(archived.body.archived_at).to.be.a('number')

    await gw.admin('POST', '/clock', {advance_seconds: 5})
    const again = await acct.app('POST', `/subscription_links/${link.id}/archive`)
    expect(again.status).to.equal(200)
    expect(again.body).to.deep.equal(archived.body)
    expect((await events(acct.merchant.id, 'subscription_link.archived')).map((e) => e.data.object)).to.deep.equal([archived.body])
    expect((await acct.app('GET', '/subscription_links')).body.data[0]).to.deep.equal(archived.body)
  })

  it('restores an archived link with active true, and archives with active false like /archive', async () => {
    const acct = await gw.account('live')
    const link = (await acct.app('POST', '/subscription_links', {body: monthly})).body
    const off = await acct.app('POST', `/subscription_links/${link.id}`, {body: {active: false}})
    expect(off.body).to.include({active: false})
    expect(off.body.archived_at).to.be.a('number')
    const on = await acct.app('POST', `/subscription_links/${link.id}`, {body: {active: true}})
    expect(on.body).to.include({active: true, archived_at: null})
    expect(await events(acct.merchant.id, 'subscription_link.archived')).to.have.length(1)
    expect(await events(acct.merchant.id, 'subscription_link.updated')).to.have.length(1)
  })

  it('needs subscriptions:read to read and subscriptions:write to write', async () => {
    const m = await gw.merchant()
    const reader = await gw.installation(m.id, 'live', ['subscriptions:read'])
    expect((await gw.request('GET', '/v1/app/subscription_links', {token: reader.token})).status).to.equal(200)
    expectError(await gw.request('POST', '/v1/app/subscription_links', {token: reader.token, body: monthly}), 403, 'insufficient_scope')
  })
})
