import {expect} from 'chai'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {Readable} from 'node:stream'

import {
  AppClient,
  AuthenticationError,
  ConflictError,
  GatewayAdmin,
  IdempotencyError,
  InvalidRequestError,
  NotFoundError,
  PagePromise,
  PermissionError,
  StoreClient,
  endpoints,
  type EndpointId,
  type Product,
  type RequestEvent,
} from '@payapp/sdk'
import {endpointsOf, rejection} from '../helpers/sdk.js'
import {TestGateway} from '../helpers/gateway.js'

/** Smallest PNG signature plus a few bytes: enough for the upload to be named and typed as an image. */
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4])



describe('sdk/clients', function () {
  this.timeout(30_000)
  let gw: TestGateway
  let admin: GatewayAdmin
  let app: AppClient
  let store: StoreClient
  let merchantId: string

  function appClient(token: string, extra: Partial<ConstructorParameters<typeof AppClient>[0]> = {}) {
    return new AppClient({token, baseUrl: gw.url, maxRetries: 0, ...extra})
  }

  before(async () => {
    gw = await TestGateway.start()
    admin = new GatewayAdmin({baseUrl: gw.url, adminKey: gw.gw.adminKey})
    const acct = await gw.account('test')
    merchantId = acct.merchant.id
    app = appClient(acct.token)
    store = new StoreClient({secretKey: acct.secretKey, baseUrl: gw.url, maxRetries: 0})
  })
  after(() => gw?.close())

  describe('construction', () => {
    it('gives each client exactly the endpoints its door serves, every one of them', () => {
      const ids = Object.keys(endpoints) as EndpointId[]
      const forDoor = (door: 'app' | 'store') => ids.filter((id) => (endpoints[id].doors as readonly string[]).includes(door)).sort()
      expect(endpointsOf(app)).to.deep.equal(forDoor('app'))
      expect(endpointsOf(store)).to.deep.equal(forDoor('store'))
      expect(app).to.not.have.property('checkouts')
      expect(store).to.not.have.property('payments')
      expect(store.orders).to.not.have.property('create')
    })

    it("types each client with its own door's namespaces only", () => {
      // @ts-expect-error the store API has no payments
      expect(store.payments).to.equal(undefined)
      // @ts-expect-error checkouts are created with a secret key, never by an app
      expect(app.checkouts).to.equal(undefined)
    })

    it('names the nested namespaces as the platform does', () => {
      expect(app.products.prices.update.endpoint).to.equal('prices.update')
      expect(app.products.options.create.endpoint).to.equal('options.create')
      expect(app.options.values.create.endpoint).to.equal('values.create')
      expect(app.products.variants.list.endpoint).to.equal('variants.list')
      expect(app.orders.evidence.create.endpoint).to.equal('orders.evidence.create')
      expect(app.files.upload.endpoint).to.equal('files.create')
    })

    it('refuses a client without a credential or base URL', () => {
      expect(() => new AppClient({token: '', baseUrl: gw.url})).to.throw(InvalidRequestError).with.property('param', 'token')
      expect(() => new StoreClient({secretKey: undefined as never, baseUrl: gw.url})).to.throw(InvalidRequestError).with.property('param', 'secretKey')
      expect(() => new AppClient({token: 't', baseUrl: ''})).to.throw(InvalidRequestError).with.property('param', 'baseUrl')
    })

    it('accepts a base URL that already ends in the door prefix', async () => {
      const acct = await gw.account('test')
      const client = new AppClient({token: acct.token, baseUrl: `${gw.url}/v1/app/`})
      expect((await client.merchant.retrieve()).id).to.equal(acct.merchant.id)
    })

    it('call() reaches any endpoint of its door by id and refuses the other door', async () => {
      const page = await app.call('products.list', {query: {limit: 1}})
      expect(page.object).to.equal('list')
      const err = await rejection(app.call('checkouts.create' as never, {}))
      expect(err).to.be.instanceOf(InvalidRequestError)
      expect(err.message).to.match(/not an endpoint of the App API/)
    })
  })

  describe('catalogue', () => {
    let product: Product

    before(async () => {
      product = await app.products.create({name: 'Tee', tags: ['cotton', 'cotton'], price: {currency: 'eur', unit_amount: 1500}})
    })

    it('creates a product with an inline default price, which the store API lists on it', async () => {
      expect(product.id).to.match(/^prod_/)
      expect(product.tags).to.deep.equal(['cotton'])
      expect(product.default_price).to.match(/^price_/)
      const viaStore = await store.products.retrieve(product.id)
      expect(viaStore.prices?.map((p) => [p.id, p.unit_amount, p.currency])).to.deep.equal([[product.default_price, 1500, 'eur']])
      const viaApp = await app.products.retrieve(product.id)
      expect(viaApp.name).to.equal('Tee')
      expect(viaApp.variants?.filter((v) => v.is_default)).to.have.length(1)
    })

    it('creates, lists and updates prices, and switches the default price', async () => {
      const price = await app.products.prices.create(product.id, {currency: 'eur', unit_amount: 2500, nickname: 'XL'})
      const updated = await app.products.prices.update(product.id, price.id, {nickname: 'Extra large', lookup_key: 'tee-xl'})
      expect(updated).to.include({id: price.id, nickname: 'Extra large', lookup_key: 'tee-xl', unit_amount: 2500})
      const prices = await app.products.prices.list(product.id)
      expect(prices.data.map((p) => p.id)).to.include.members([price.id, product.default_price])
      const switched = await app.products.update(product.id, {default_price_id: price.id, description: 'Soft'})
      expect(switched).to.include({default_price: price.id, description: 'Soft'})
    })

    it('reports a price under the minimum as InvalidRequestError naming unit_amount', async () => {
      const err = await rejection(app.products.prices.create(product.id, {currency: 'eur', unit_amount: 100}))
      expect(err).to.be.instanceOf(InvalidRequestError)
      expect(err).to.include({statusCode: 400, code: 'amount_too_small', param: 'unit_amount'})
      expect(err.requestId).to.match(/^req_/)
    })

    it('builds variants from option ids; a repeated combination is ConflictError variant_exists', async () => {
      const size = await app.products.options.create(product.id, {name: 'Size', values: ['S', 'M']})
      const [small, medium] = size.values
      const withLarge = await app.options.values.create(size.id, {value: 'L'})
      const large = withLarge.values.find((v) => v.value === 'L')!
      const renamed = await app.options.update(size.id, {name: 'Größe'})
      expect(renamed.name).to.equal('Größe')
      expect((await app.products.options.list(product.id)).data.map((g) => g.id)).to.deep.equal([size.id])

      const variant = await app.products.variants.create(product.id, {
        options: [{group: size.id, value: small!.id}],
        sku: 'TEE-S',
        features: ['Organic', 'Organic', 'Slim fit'],
        track_inventory: true,
        stock_qty: 3,
      })
      expect(variant.options.map((o) => o.value_name)).to.deep.equal(['S'])
      expect(variant.features).to.deep.equal(['Organic', 'Slim fit'])
      expect(variant.stock_available).to.equal(3)

      const err = await rejection(app.products.variants.create(product.id, {options: [{group: size.id, value: small!.id}]}))
      expect(err).to.be.instanceOf(ConflictError)
      expect(err).to.include({statusCode: 409, code: 'variant_exists'})
      expect(err.requestId).to.match(/^req_/)

      const inUse = await rejection(app.values.delete(small!.id))
      expect(inUse).to.be.instanceOf(ConflictError).with.property('code', 'value_in_use')
      const groupInUse = await rejection(app.options.delete(size.id))
      expect(groupInUse).to.be.instanceOf(ConflictError).with.property('code', 'variants_exist')

      const retitled = await app.variants.update(variant.id, {title: 'Small tee', highlight: true})
      expect(retitled).to.include({title: 'Small tee', highlight: true})
      const other = await app.products.variants.create(product.id, {options: [{group: size.id, value: medium!.id}]})
      const listed = await app.products.variants.list(product.id)
      expect(listed.data.map((v) => v.id)).to.include.members([variant.id, other.id])

      expect(await app.variants.delete(other.id)).to.include({id: other.id, deleted: true})
      expect(await app.values.delete(large.id)).to.include({deleted: true})
    })

    it('uploads files from a path, a Buffer and a stream, and uses one as a variant image', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'payapp-sdk-'))
      const file = join(dir, 'front.png')
      writeFileSync(file, PNG)
      const fromPath = await app.files.upload(file)
      expect(fromPath).to.include({filename: 'front.png', content_type: 'image/png', size: PNG.length})
      expect(fromPath.path).to.match(/^files\//)

      const fromBuffer = await app.files.upload(PNG)
      expect(fromBuffer.content_type).to.equal('image/png')
      const fromStream = await store.files.upload(Readable.from([Buffer.from('hello '), Buffer.from('world')]), {filename: 'notes.txt'})
      expect(fromStream).to.include({filename: 'notes.txt', content_type: 'text/plain', size: 11})

      const poster = await app.products.create({name: 'Poster'})
      const finish = await app.products.options.create(poster.id, {name: 'Finish', values: ['Matte']})
      const created = await app.products.variants.create(poster.id, {options: [{group: finish.id, value: finish.values[0]!.id}], image_path: fromPath.path})
      expect(created.image_path).to.equal(fromPath.path)
      const withImage = await app.variants.update(created.id, {image_path: fromBuffer.path})
      expect(withImage.image_path).to.equal(fromBuffer.path)
      const withProductImage = await app.products.update(poster.id, {images: [fromBuffer.path]})
      expect(withProductImage.images).to.deep.equal([fromBuffer.path])
    })

    it('refuses a file over 5 MB before sending anything', async () => {
      const sent: RequestEvent[] = []
      const client = appClient((await gw.account('test')).token, {onRequest: (e) => sent.push(e)})
      const big = Buffer.alloc(5 * 1024 * 1024 + 1)
      const err = await rejection(client.files.upload(big))
      expect(err).to.be.instanceOf(InvalidRequestError).with.property('code', 'file_too_large')
      expect(err.message).to.match(/at most 5\.0 MB/)
      const fromStream = await rejection(client.files.upload(Readable.from([big.subarray(0, 3_000_000), big.subarray(3_000_000)])))
      expect(fromStream.code).to.equal('file_too_large')
      const missing = await rejection(client.files.upload(join(tmpdir(), 'no-such-file.png')))
      expect(missing).to.include({code: 'file_unreadable', param: 'file'})
      expect(sent).to.have.length(0)
    })

    it('answers a missing object with NotFoundError and its request id', async () => {
      const err = await rejection(app.products.retrieve('prod_doesnotexist'))
      expect(err).to.be.instanceOf(NotFoundError)
      expect(err.statusCode).to.equal(404)
      expect(err.requestId).to.match(/^req_/)
    })

    it('archives a product', async () => {
      const doomed = await app.products.create({name: 'Discontinued'})
      expect(await app.products.archive(doomed.id)).to.include({id: doomed.id, deleted: true, active: false})
      expect((await app.products.retrieve(doomed.id)).active).to.equal(false)
    })

    it('types bodies from the endpoint schemas', async () => {
      // @ts-expect-error `colour` is not a product field (the strict schema rejects it at runtime too)
      const err = await rejection(app.products.create({name: 'Hat', colour: 'red'}))
      expect(err).to.include({code: 'parameter_unknown', param: 'colour'})
    })
  })

  describe('pagination', () => {
    let client: AppClient
    let requests: RequestEvent[]

    before(async () => {
      const acct = await gw.account('test')
      requests = []
      client = appClient(acct.token, {onRequest: (e) => requests.push(e)})
      for (let i = 0; i < 30; i++) await client.products.create({name: `Product ${i}`})
      requests.length = 0
    })

    it('await gives one page', async () => {
      const page = await client.products.list({limit: 7})
      expect(page.data).to.have.length(7)
      expect(page.has_more).to.equal(true)
      expect(requests).to.have.length(1)
    })

    it('for await walks every item across pages', async () => {
      requests.length = 0
      const names: string[] = []
      for await (const product of client.products.list({limit: 7})) names.push(product.name)
      expect(names).to.have.length(30)
      expect(new Set(names).size).to.equal(30)
      // Newest first.
      expect(names[0]).to.equal('Product 29')
      expect(requests).to.have.length(5)
    })

    it('toArray({limit}) stops at the cap without fetching further pages', async () => {
      requests.length = 0
      const list = client.products.list({limit: 7})
      expect(list).to.be.instanceOf(PagePromise)
      const first10 = await list.toArray({limit: 10})
      expect(first10).to.have.length(10)
      expect(requests).to.have.length(2)
    })

    it('starts at offset and passes the endpoint filters', async () => {
      const page = await client.products.list({limit: 5, offset: 28})
      expect(page.data.map((p) => p.name)).to.deep.equal(['Product 1', 'Product 0'])
      expect(page.has_more).to.equal(false)
      const payments = await client.payments.list({status: 'succeeded', limit: 3})
      expect(payments.data).to.deep.equal([])
    })
  })

  describe('idempotency, scopes, credentials, hooks', () => {
    it("replays a write sent again with the caller's idempotency key", async () => {
      const first = await app.products.create({name: 'Once'}, {idempotencyKey: 'sdk-test-once'})
      const again = await app.products.create({name: 'Once'}, {idempotencyKey: 'sdk-test-once'})
      expect(again.id).to.equal(first.id)
      const fresh = await app.products.create({name: 'Once'})
      expect(fresh.id).to.not.equal(first.id)
      const reused = await rejection(app.products.create({name: 'Twice'}, {idempotencyKey: 'sdk-test-once'}))
      expect(reused).to.be.instanceOf(IdempotencyError).with.property('code', 'idempotency_key_reused')
    })

    it('replays an upload sent again with the same idempotency key', async () => {
      const first = await app.files.upload(PNG, {filename: 'same.png'}, {idempotencyKey: 'sdk-test-upload'})
      const again = await app.files.upload(PNG, {filename: 'same.png'}, {idempotencyKey: 'sdk-test-upload'})
      expect(again.id).to.equal(first.id)
    })

    it('answers a token without the scope with PermissionError insufficient_scope', async () => {
      const inst = await admin.installations.create({merchant: merchantId, env: 'test', scopes: ['products:read']})
      const readOnly = appClient(inst.token)
      expect((await readOnly.products.list()).object).to.equal('list')
      const err = await rejection(readOnly.products.create({name: 'Nope'}))
      expect(err).to.be.instanceOf(PermissionError)
      expect(err).to.include({statusCode: 403, type: 'insufficient_scope'})
      expect(err.message).to.match(/products:write/)
    })

    it('answers a revoked token with AuthenticationError', async () => {
      const inst = await admin.installations.create({merchant: merchantId, env: 'test', scopes: ['merchant:read']})
      const client = appClient(inst.token)
      expect((await client.merchant.retrieve()).id).to.equal(merchantId)
      await admin.installations.revoke(inst.id)
      const err = await rejection(client.merchant.retrieve())
      expect(err).to.be.instanceOf(AuthenticationError).with.property('statusCode', 401)
    })

    it('reports every attempt to the hooks with the token redacted', async () => {
      const acct = await gw.account('test')
      const events: unknown[] = []
      const client = appClient(acct.token, {onRequest: (e) => events.push(e), onResponse: (e) => events.push(e), userAgent: 'sdk-test/1.0'})
      await client.products.create({name: 'Logged'}, {idempotencyKey: 'logged-1'})
      const [request, response] = events as [RequestEvent, {status: number; requestId: string}]
      expect(request).to.include({method: 'POST', url: `${gw.url}/v1/app/products`, attempt: 1, idempotencyKey: 'logged-1'})
      expect(request.headers['user-agent']).to.match(/^payapp-sdk\/\S+ node\/\S+ sdk-test\/1\.0$/)
      expect(response.status).to.equal(201)
      expect(response.requestId).to.match(/^req_/)
      expect(JSON.stringify(events)).to.not.include(acct.token)
    })

    it('does not send a call whose signal is already aborted', async () => {
      const sent: RequestEvent[] = []
      const client = appClient((await gw.account('test')).token, {onRequest: (e) => sent.push(e)})
      const controller = new AbortController()
      controller.abort()
      const err = await rejection(client.products.create({name: 'Never'}, {signal: controller.signal}))
      expect(err.code).to.equal('request_aborted')
      expect(sent).to.have.length(0)
    })

    it('refuses an id that would change the route, before sending', async () => {
      const err = await rejection(app.products.retrieve('../merchant'))
      expect(err).to.be.instanceOf(InvalidRequestError).with.property('code', 'invalid_path_param')
      const listErr = await rejection(app.products.variants.list('..').toArray({limit: 1}))
      expect(listErr.code).to.equal('invalid_path_param')
    })
  })

  describe('orders, checkouts and payments', () => {
    let productId: string
    let variantId: string

    before(async () => {
      const product = await store.products.create({name: 'Mug', price: {currency: 'eur', unit_amount: 1200}})
      const color = await store.products.options.create(product.id, {name: 'Color', values: ['Red']})
      const variant = await store.products.variants.create(product.id, {options: [{group: color.id, value: color.values[0]!.id}], sku: 'MUG-RED'})
      productId = product.id
      variantId = variant.id
    })

    it('sells through a store checkout; the order, payment, refund and dispute show in the App API', async () => {
      const checkout = await store.checkouts.create({product_id: productId, variant_id: variantId, quantity: 2})
      expect(checkout).to.include({ok: true, amount: 2400, currency: 'eur'})
      expect(checkout.session_id).to.match(/^cs_/)

      const sale = await admin.checkouts.complete(checkout.session_id)
      expect(sale.session.status).to.equal('complete')
      const orderId = sale.order!.id

      const orders = await app.orders.list()
      expect(orders.data.map((o) => o.id)).to.include(orderId)
      const order = await store.orders.retrieve(orderId)
      expect(order).to.include({status: 'paid', variant_id: variantId, sku: 'MUG-RED', quantity: 2, amount: 2400})

      const early = await rejection(app.orders.update(orderId, {status: 'shipped'}))
      expect(early.statusCode).to.be.within(400, 422)
      const withEvidence = await app.orders.evidence.create(orderId, {tracking_number: '1Z999', carrier: 'UPS'})
      expect(withEvidence.evidence.map((e) => e.tracking_number)).to.deep.equal(['1Z999'])
      expect((await app.orders.update(orderId, {status: 'shipped'})).status).to.equal('shipped')

      const payment = await app.payments.retrieve(sale.payment.id)
      expect(payment).to.include({id: sale.payment.id, amount: 2400, status: 'succeeded'})
      expect((await app.payments.list()).data.map((p) => p.id)).to.include(payment.id)

      await admin.payments.refund(payment.id, {amount: 400})
      const refunds = await app.refunds.list()
      expect(refunds.data.map((r) => r.amount)).to.deep.equal([400])
      await admin.payments.dispute(payment.id)
      const disputes = await app.disputes.list()
      expect(disputes.data.map((d) => [d.payment, d.status])).to.deep.equal([[payment.id, 'needs_response']])
    })

    it('creates sandbox order fixtures', async () => {
      const fixture = await app.orders.create({product_id: productId, quantity: 3, customer_email: 'buyer@example.com'})
      expect(fixture).to.include({fixture: true, product_id: productId, quantity: 3})
      expect(fixture.customer.email).to.equal('buyer@example.com')
    })

    it('answers a checkout for an unknown product with NotFoundError product_unavailable', async () => {
      const err = await rejection(store.checkouts.create({product_id: 'prod_missing'}))
      expect(err).to.be.instanceOf(NotFoundError).with.property('code', 'product_unavailable')
    })
  })

  describe('account reads', () => {
    it('reads the merchant, store, balance and analytics', async () => {
      const merchant = await app.merchant.retrieve()
      expect(merchant).to.include({id: merchantId, object: 'merchant', livemode: false})
      const shop = await app.store.retrieve()
      expect(shop.object).to.equal('store')
      expect((await store.store.retrieve()).id).to.equal(shop.id)
      const balance = await app.balance.retrieve()
      expect(balance).to.include({object: 'balance', livemode: false})
      const summary = await app.analytics.summary({days: 7})
      expect(summary).to.include({object: 'analytics_summary', days: 7})
      expect(summary.until - summary.since).to.equal(7 * 86400)
    })

    it('lists payouts and subscriptions the platform created, and no invoices in the sandbox', async () => {
      const payout = await admin.payouts.create({merchant: merchantId, env: 'test', amount: 5000, currency: 'eur'})
      expect((await app.payouts.list()).data.map((p) => p.id)).to.deep.equal([payout.id])
      const sub = await admin.subscriptions.create({merchant: merchantId, env: 'test', amount: 900, currency: 'eur'})
      const subs = await app.subscriptions.list()
      expect(subs.data.map((s) => [s.id, s.status])).to.deep.equal([[sub.id, 'active']])
      expect((await app.invoices.list()).data).to.deep.equal([])
    })

    it('reads invoices in live', async () => {
      const live = await gw.account('live')
      const client = appClient(live.token)
      const invoice = await admin.invoices.create({merchant: live.merchant.id, env: 'live', amount: 1900, currency: 'eur'})
      expect((await client.invoices.list()).data.map((i) => i.id)).to.deep.equal([invoice.id])
      expect(await client.invoices.retrieve(invoice.id)).to.include({id: invoice.id, amount_due: 1900, status: 'paid'})
    })

    it('manages subscription links with a live installation only', async () => {
      const live = await gw.account('live')
      const client = appClient(live.token)
      const link = await client.subscriptionLinks.create({amount: 990, currency: 'eur', interval: 'month', name: 'Pro'})
      expect(link).to.include({object: 'subscription_link', amount: 990, interval: 'month', active: true, livemode: true})
      expect((await client.subscriptionLinks.list()).data.map((l) => l.id)).to.deep.equal([link.id])
      expect((await client.subscriptionLinks.update(link.id, {name: 'Pro plan'})).name).to.equal('Pro plan')
      expect((await client.subscriptionLinks.retrieve(link.id)).name).to.equal('Pro plan')
      expect((await client.subscriptionLinks.archive(link.id)).active).to.equal(false)

      const err = await rejection(app.subscriptionLinks.list())
      expect(err).to.be.instanceOf(InvalidRequestError).with.property('code', 'livemode_required')
    })
  })
})
