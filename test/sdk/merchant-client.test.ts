import {expect} from 'chai'

import {ConflictError, endpoints, GatewayAdmin, InvalidRequestError, MerchantClient, PermissionError, type EndpointId} from '@payapp/sdk'
import {TestGateway} from '../helpers/gateway.js'
import {endpointsOf, rejection} from '../helpers/sdk.js'


describe('sdk/MerchantClient', function () {
  this.timeout(30_000)
  let gw: TestGateway
  let admin: GatewayAdmin
  let merchant: string
  let client: MerchantClient
  before(async () => {
    gw = await TestGateway.start()
    admin = new GatewayAdmin({baseUrl: gw.url, adminKey: gw.gw.adminKey})
    merchant = (await admin.merchants.create()).id
    const key = await admin.keys.create({merchant, mode: 'test', scopes: ['checkout:write', 'products:read', 'products:write', 'refunds:read', 'refunds:write', 'payments:read']})
    client = new MerchantClient({secretKey: key.secret_key, baseUrl: gw.url, maxRetries: 0})
  })
  after(() => gw.close())

  it('has a method for every endpoint of the merchant door, under checkout.sessions, products, products.prices, refunds, payments', () => {
    const ids = (Object.keys(endpoints) as EndpointId[]).filter((id) => (endpoints[id].doors as readonly string[]).includes('merchant')).sort()
    expect(endpointsOf(client)).to.deep.equal(ids)
    expect(client.checkout.sessions.update.endpoint).to.equal('checkoutSessions.update')
    expect(client.products.update.endpoint).to.equal('products.modify')
    expect(client.products.prices.create.endpoint).to.equal('prices.create')
    expect(client.refunds.list.endpoint).to.equal('refunds.search')
  })

  it('needs exactly one key', () => {
    expect(() => new MerchantClient({secretKey: '', baseUrl: gw.url})).to.throw(InvalidRequestError)
    expect(() => new MerchantClient({secretKey: 'sk_test_x', publishableKey: 'pk_test_y', baseUrl: gw.url} as never)).to.throw(InvalidRequestError)
  })

  it('creates, updates, pays, refunds and pages through sessions with starting_after', async () => {
    const product = await client.products.create({name: 'Tea', price: {currency: 'eur', unit_amount: 800}})
    const prices = await client.products.prices.list(product.id)
    expect(prices.data).to.have.length(1)
    const variant = product.variants![0]!
    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push((await client.checkout.sessions.create({line_items: [{variant: variant.id, quantity: 1 + i}]})).id)
    const seen: string[] = []
    for await (const s of client.checkout.sessions.list({limit: 2})) seen.push(s.id)
    expect(seen).to.deep.equal([...ids].reverse())

    const s = await client.checkout.sessions.update(ids[0]!, {description: 'Gift', revision: 0})
    expect(s.revision).to.equal(1)
    const stale = await rejection(client.checkout.sessions.update(ids[0]!, {description: 'Again', revision: 0}))
    expect(stale).to.be.instanceOf(ConflictError).with.property('code', 'revision_conflict')

    const paid = await admin.checkouts.complete(ids[1]!)
    const refund = await client.refunds.create({payment: paid.payment.id, amount: 300})
    expect(refund.amount).to.equal(300)
    const refunds = await client.refunds.list({charge: paid.payment.id})
    expect(refunds.data.map((r) => r.id)).to.deep.equal([refund.id])
    expect((await client.refunds.retrieve(refund.id)).payment).to.equal(paid.payment.id)
    expect((await client.payments.retrieve(paid.payment.id)).status).to.equal('partially_refunded')
    expect((await client.checkout.sessions.expire(ids[2]!)).status).to.equal('expired')
  })

  it('creates sessions with a publishable key only as the browser of an allow-listed origin', async () => {
    const pk = await admin.keys.create({merchant, mode: 'test', scopes: ['checkout:write'], type: 'publishable', allowed_origins: ['https://shop.example.com']})
    const browser = new MerchantClient({publishableKey: pk.publishable_key, baseUrl: gw.url, maxRetries: 0, headers: {origin: 'https://shop.example.com'}})
    const s = await browser.checkout.sessions.create({line_items: [{name: 'Tea', amount: 500, currency: 'eur'}]})
    expect(s.status).to.equal('open')
    expect(await rejection(browser.products.list())).to.be.instanceOf(PermissionError)
    const elsewhere = new MerchantClient({publishableKey: pk.publishable_key, baseUrl: gw.url, maxRetries: 0})
    expect(await rejection(elsewhere.checkout.sessions.create({line_items: [{name: 'Tea', amount: 500, currency: 'eur'}]}))).to.have.property('code', 'origin_not_allowed')
  })
})
