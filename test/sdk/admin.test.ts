import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'

import {expect} from 'chai'

import {
  AppClient,
  AuthenticationError,
  ConflictError,
  GatewayAdmin,
  InvalidRequestError,
  NotFoundError,
  ResponseValidationError,
  StoreClient,
  adminEndpoints,
} from '@payapp/sdk'
import {rejection} from '../helpers/sdk.js'
import {TestGateway} from '../helpers/gateway.js'


describe('sdk/GatewayAdmin', function () {
  this.timeout(30_000)
  let gw: TestGateway
  let admin: GatewayAdmin

  before(async () => {
    gw = await TestGateway.start()
    admin = new GatewayAdmin({baseUrl: gw.url, adminKey: gw.gw.adminKey})
  })
  after(() => gw?.close())

  /** What a user's test suite does first: a merchant, an installation and a secret key. */
  async function setup(env: 'live' | 'test' = 'test') {
    const merchant = await admin.merchants.create({company: 'Acme GmbH', store: {display_name: 'Acme Shop'}})
    const inst = await admin.installations.create({merchant: merchant.id, env, scopes: ['store:read', 'products:read', 'products:write', 'orders:read', 'merchant:read']})
    const key = await admin.keys.create({merchant: merchant.id, mode: env, scopes: ['store:read', 'products:read', 'products:write', 'checkout:write']})
    const app = new AppClient({token: inst.token, baseUrl: gw.url, maxRetries: 0})
    const store = new StoreClient({secretKey: key.secret_key, baseUrl: gw.url, maxRetries: 0})
    return {merchant, inst, key, app, store}
  }

  it('creates merchants, installations and keys whose credentials drive the clients', async () => {
    const {merchant, inst, key, app, store} = await setup()
    expect(merchant).to.include({object: 'merchant', company: 'Acme GmbH'})
    expect(merchant.store.display_name).to.equal('Acme Shop')
    expect((await admin.merchants.retrieve(merchant.id)).id).to.equal(merchant.id)
    expect(inst).to.include({object: 'installation', merchant: merchant.id, env: 'test'})
    expect(key).to.include({object: 'secret_key', merchant: merchant.id, mode: 'test'})

    expect((await app.merchant.retrieve()).company).to.equal('Acme GmbH')
    expect((await store.store.retrieve()).display_name).to.equal('Acme Shop')

    await admin.keys.revoke(key.id)
    expect(await rejection(store.store.retrieve())).to.be.instanceOf(AuthenticationError)
  })

  it('reports bad admin calls as typed errors', async () => {
    const missing = await rejection(admin.merchants.retrieve('mch_nope'))
    expect(missing).to.be.instanceOf(NotFoundError)
    const bad = await rejection(admin.installations.create({merchant: 'mch_nope', env: 'staging' as never}))
    expect(bad).to.be.instanceOf(InvalidRequestError).with.property('param', 'env')
    const wrongKey = new GatewayAdmin({baseUrl: gw.url, adminKey: 'adm_wrong'})
    const err = await rejection(wrongKey.clock.retrieve())
    expect(err).to.be.instanceOf(AuthenticationError).with.property('code', 'invalid_admin_key')
  })

  it('plays the buyer: a paid checkout leaves events; a declined one keeps the session open', async () => {
    const {merchant, store} = await setup()
    const product = await store.products.create({name: 'Poster', price: {currency: 'eur', unit_amount: 900}})

    const declined = await store.checkouts.create({product_id: product.id})
    const attempt = await admin.checkouts.complete(declined.session_id, {outcome: 'declined'})
    expect(attempt.session.status).to.equal('open')
    expect(attempt.payment.status).to.equal('failed')
    expect(attempt.order).to.equal(null)

    const paid = await admin.checkouts.complete(declined.session_id, {customer_name: 'Ada Buyer', customer_email: 'ada@example.com'})
    expect(paid.session.status).to.equal('complete')
    expect(paid.order?.customer.email).to.equal('ada@example.com')

    const events = await admin.events.list({merchant: merchant.id, env: 'test', type: 'checkout.session.*'})
    expect(events.data.map((e) => e.type)).to.deep.equal(['checkout.session.completed'])
    expect(events.data[0]!.data.object.id).to.equal(declined.session_id)
  })

  it('moves the clock: a store checkout past its 30 minutes can no longer be paid', async () => {
    const {store} = await setup()
    const product = await store.products.create({name: 'Ticket', price: {currency: 'eur', unit_amount: 2000}})
    const checkout = await store.checkouts.create({product_id: product.id})
    const before = await admin.clock.retrieve()
    const after = await admin.clock.advance(31 * 60)
    expect(after.now - before.now).to.be.within(31 * 60, 31 * 60 + 2)
    const err = await rejection(admin.checkouts.complete(checkout.session_id))
    expect(err.code).to.equal('session_expired')
  })

  it('wipes a sandbox and leaves live data alone', async () => {
    const {merchant, store} = await setup()
    const liveKey = await admin.keys.create({merchant: merchant.id, mode: 'live', scopes: ['products:read', 'products:write']})
    const live = new StoreClient({secretKey: liveKey.secret_key, baseUrl: gw.url, maxRetries: 0})
    const testProduct = await store.products.create({name: 'Sandbox only'})
    const liveProduct = await live.products.create({name: 'Real'})

    const reset = await admin.sandbox.reset(merchant.id)
    expect(reset.deleted_objects).to.be.greaterThan(0)
    expect(await rejection(store.products.retrieve(testProduct.id))).to.be.instanceOf(NotFoundError)
    expect((await live.products.retrieve(liveProduct.id)).name).to.equal('Real')
  })

  it('creates payouts, invoices and subscriptions, and cancels a subscription once', async () => {
    const merchant = await admin.merchants.create()
    const payout = await admin.payouts.create({merchant: merchant.id, env: 'live', amount: 10_000, currency: 'eur', status: 'in_transit'})
    expect(payout).to.include({object: 'payout', amount: 10_000, status: 'in_transit', livemode: true})

    const sub = await admin.subscriptions.create({merchant: merchant.id, env: 'live', amount: 1500, currency: 'eur', interval: 'month'})
    expect(sub).to.include({object: 'subscription', status: 'active', amount: 1500})
    expect(sub.latest_invoice).to.match(/^in_/)
    const invoice = await admin.invoices.create({merchant: merchant.id, env: 'live', subscription: sub.id})
    expect(invoice).to.include({object: 'invoice', subscription: sub.id, amount_due: 1500})

    const canceled = await admin.subscriptions.cancel(sub.id, {at_period_end: false})
    expect(canceled.status).to.equal('canceled')
    const again = await rejection(admin.subscriptions.cancel(sub.id))
    expect(again).to.be.instanceOf(ConflictError).with.property('code', 'subscription_already_canceled')
  })

  it('plays the buyer walking away: an open session expires now, once, and its held stock returns', async () => {
    const {merchant, store} = await setup()
    const product = await store.products.create({name: 'Limited', price: {currency: 'eur', unit_amount: 1200}})
    const variant = (await store.products.retrieve(product.id)).variants![0]!
    await store.variants.update(variant.id, {track_inventory: true, stock_qty: 1})
    const checkout = await store.checkouts.create({product_id: product.id})
    expect((await store.products.variants.list(product.id)).data[0]!.stock_available).to.equal(0)

    expect(await admin.checkouts.expire(checkout.session_id)).to.deep.equal({id: checkout.session_id, status: 'expired'})
    expect((await store.products.variants.list(product.id)).data[0]!.stock_available).to.equal(1)
    const events = await admin.events.list({merchant: merchant.id, env: 'test', type: 'checkout.session.expired'})
    expect(events.data.map((e) => e.data.object.id)).to.deep.equal([checkout.session_id])
    const again = await rejection(admin.checkouts.expire(checkout.session_id))
    expect(again.code).to.equal('session_expired')
  })

  it('sends a write again with its Idempotency-Key when the connection drops, a clock advance too', async () => {
    const got: Array<{path: string; key: string | undefined}> = []
    // A process that dies before answering: every connection cut.
    const dying = createServer((req, res) => {
      got.push({path: req.url!, key: req.headers['idempotency-key'] as string | undefined})
      req.resume()
      req.on('end', () => res.socket?.destroy())
    })
    await new Promise<void>((resolve) => dying.listen(0, '127.0.0.1', resolve))
    try {
      const retrying = new GatewayAdmin({baseUrl: `http://127.0.0.1:${(dying.address() as AddressInfo).port}`, adminKey: 'adm_x', maxRetries: 1})
      await rejection(retrying.merchants.create({company: 'Twice GmbH'}))
      expect(got.map((g) => g.path)).to.deep.equal(['/_admin/merchants', '/_admin/merchants'])
      expect(got[0]!.key).to.be.a('string').and.to.equal(got[1]!.key)
      got.length = 0
      // The gateway walks a keyed jump once however often it is sent (test/gateway/multiprocess.test.ts).
      await rejection(retrying.clock.advance(60))
      expect(got.map((g) => g.path)).to.deep.equal(['/_admin/clock', '/_admin/clock'])
      expect(got[0]!.key).to.be.a('string').and.to.equal(got[1]!.key)
      got.length = 0
      await rejection(retrying.clock.advanceTo(2_000_000_000, {maxRetries: 2}))
      expect(got).to.have.length(3)
      expect(new Set(got.map((g) => g.key)).size).to.equal(1)
    } finally {
      dying.close()
    }
  })

  it('parses every answer with the admin table\'s schema: a wrong type is a ResponseValidationError naming the field', async () => {
    const fake = createServer((_req, res) => res.writeHead(200, {'content-type': 'application/json'}).end(JSON.stringify({object: 'clock', now: 'soon', offset_seconds: 0})))
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve))
    try {
      const wrong = new GatewayAdmin({baseUrl: `http://127.0.0.1:${(fake.address() as AddressInfo).port}`, adminKey: 'adm_x'})
      const err = await rejection(wrong.clock.retrieve())
      expect(err).to.be.instanceOf(ResponseValidationError)
      expect(err.message).to.include('now: expected number, got string')
    } finally {
      fake.close()
    }
    // Every route of the table is a method: the namespaces are written against it, never beside it.
    const methods = Object.keys(adminEndpoints).map((id) => id.split('.'))
    for (const [ns, name] of methods) expect(typeof (admin as unknown as Record<string, Record<string, unknown>>)[ns!]?.[name!], `${ns}.${name}`).to.equal('function')
  })
})
