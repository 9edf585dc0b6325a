import {expect} from 'chai'

import {checkoutSession, storeCheckout} from '@payapp/sdk/schemas/commerce'
import {advanceClock, checkout, events, pay, readVariant, sellable, type Account} from '../helpers/commerce.js'
import {expectError, TestGateway} from '../helpers/gateway.js'

describe('gateway store checkouts and checkout sessions', () => {
  let gw: TestGateway
  let acct: Account
  before(async () => {
    gw = await TestGateway.start()
    acct = await gw.account()
  })
  after(() => gw.close())

  const getSession = (id: string, key = acct.secretKey) => gw.request('GET', `/v1/checkout/sessions/${id}`, {token: key})
  const getWithSecret = (id: string, cs: string) => gw.request('GET', `/v1/checkout/sessions/${id}?cs=${encodeURIComponent(cs)}`)
  const expire = (id: string, opts: {key?: string; idempotencyKey?: string} = {}) =>
    gw.request('POST', `/v1/checkout/sessions/${id}/expire`, {token: opts.key ?? acct.secretKey, idempotencyKey: opts.idempotencyKey})

  describe('POST /v1/store/checkouts', () => {
    it('opens a 30-minute store session for the product default variant at the product default price', async () => {
      const item = await sellable(acct, {unit_amount: 1250, sku: 'SHIRT-1'})
      const clock = (await gw.admin('GET', '/clock')).body.now
      const res = await acct.store('POST', '/checkouts', {body: {product_id: item.product.id, quantity: 3}})
      expect(res.status, res.text).to.equal(201)
      const co = storeCheckout.parse(res.body)
      expect(co).to.include({ok: true, amount: 3750, currency: 'eur'})
      expect(co.session_id).to.match(/^cs_/)
      expect(Date.parse(co.expires_at) / 1000).to.be.within(clock + 1800, clock + 1802)
      expect(co.expires_at).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)

      const session = checkoutSession.parse((await getSession(co.session_id)).body)
      expect(session).to.include({id: co.session_id, object: 'checkout.session', status: 'open', source: 'store', mode: 'payment', livemode: false, amount: 3750})
      expect(session.client_secret).to.match(/^cs_secret_/)
      expect(co.checkout_url).to.equal(`${gw.url}/checkout/${co.session_id}?cs=${session.client_secret}`)
      expect(session.embed_url).to.contain(session.client_secret)
      expect(session.expires_at).to.equal(Date.parse(co.expires_at) / 1000)
      expect(session.line_items).to.deep.equal([
        {name: 'Linen Shirt', quantity: 3, amount: 1250, currency: 'eur', price_id: item.price, product_id: item.product.id, variant_id: item.variant.id, sku: 'SHIRT-1'},
      ])
      expect(session.success_url).to.match(/\/s\//)
    })

    it('charges the variant its own price rather than the product default', async () => {
      const item = await sellable(acct, {unit_amount: 2000})
      const options = await acct.store('POST', `/products/${item.product.id}/options`, {body: {name: 'Size', values: ['S', 'XL']}})
      expect(options.status, options.text).to.equal(201)
      const xl = options.body.values.find((v: any) => v.value === 'XL')
      const bigPrice = await acct.store('POST', `/products/${item.product.id}/prices`, {body: {currency: 'eur', unit_amount: 2600}})
      const variant = await acct.store('POST', `/products/${item.product.id}/variants`, {
        body: {options: [{group: options.body.id, value: xl.id}], price: bigPrice.body.id, sku: 'SHIRT-XL'},
      })
      expect(variant.status, variant.text).to.equal(201)

      const co = await checkout(acct, {product_id: item.product.id, variant_id: variant.body.id, quantity: 2})
      expect(co.amount).to.equal(5200)
      const line = (await getSession(co.session_id)).body.line_items[0]
      expect(line).to.include({price_id: bigPrice.body.id, variant_id: variant.body.id, sku: 'SHIRT-XL', amount: 2600})
    })

    it('sells only from a live, approved store (409 store_unavailable)', async () => {
      for (const store of [{status: 'paused'}, {status: 'draft'}, {approval: 'pending'}, {approval: 'rejected'}]) {
        const m = await gw.merchant({store})
        const key = await gw.secretKey(m.id)
        const product = await gw.request('POST', '/v1/store/products', {token: key.secret_key, body: {name: 'Mug', price: {currency: 'eur', unit_amount: 900}}})
        const res = await gw.request('POST', '/v1/store/checkouts', {token: key.secret_key, body: {product_id: product.body.id}})
        expectError(res, 409, 'store_unavailable')
      }
    })

    it('answers 404 product_unavailable for unknown, foreign, archived and hidden products', async () => {
      const other = await gw.account()
      const foreign = await sellable(other)
      const archived = await sellable(acct)
      expect((await acct.store('DELETE', `/products/${archived.product.id}`)).status).to.equal(200)
      const hidden = await sellable(acct)
      expect((await acct.store('PATCH', `/products/${hidden.product.id}`, {body: {store_visible: false}})).status).to.equal(200)
      for (const id of ['prod_missing', foreign.product.id, archived.product.id, hidden.product.id]) {
        const err = expectError(await acct.store('POST', '/checkouts', {body: {product_id: id}}), 404, 'product_unavailable')
        expect(err.param).to.equal('product_id')
      }
    })

    it("answers 404 variant_unavailable for an unknown variant or another product's variant", async () => {
      const a = await sellable(acct)
      const b = await sellable(acct)
      for (const variant_id of ['00000000-0000-4000-8000-000000000000', b.variant.id]) {
        const err = expectError(await acct.store('POST', '/checkouts', {body: {product_id: a.product.id, variant_id}}), 404, 'variant_unavailable')
        expect(err.param).to.equal('variant_id')
      }
    })

    it('answers 409 price_unavailable without a price and 400 unsupported_price for a recurring one', async () => {
      const bare = await acct.store('POST', '/products', {body: {name: 'No price yet'}})
      expectError(await acct.store('POST', '/checkouts', {body: {product_id: bare.body.id}}), 409, 'price_unavailable')
      const plan = await sellable(acct, {recurring: true})
      expectError(await acct.store('POST', '/checkouts', {body: {product_id: plan.product.id}}), 400, 'unsupported_price')
    })

    it('rejects totals over the per-charge maximum and non-https return URLs', async () => {
      const item = await sellable(acct, {unit_amount: 60_000_000})
      const err = expectError(await acct.store('POST', '/checkouts', {body: {product_id: item.product.id, quantity: 2}}), 400, 'amount_too_large')
      expect(err.param).to.equal('quantity')
      const http = await acct.store('POST', '/checkouts', {body: {product_id: item.product.id, success_url: 'http://shop.example/thanks'}})
      expect(expectError(http, 400).param).to.equal('success_url')
    })

    it('keeps secret keys server-side and needs checkout:write', async () => {
      const item = await sellable(acct)
      expectError(await acct.store('POST', '/checkouts', {body: {product_id: item.product.id}, headers: {origin: 'https://shop.example'}}), 403, 'origin_forbidden')
      const readOnly = await gw.secretKey(acct.merchant.id, 'test', ['products:read'])
      const res = await gw.request('POST', '/v1/store/checkouts', {token: readOnly.secret_key, body: {product_id: item.product.id}})
      expect(expectError(res, 403).type).to.equal('insufficient_scope')
    })
  })

  describe('stock reservations', () => {
    it('reserves tracked stock at creation and refuses more than is unreserved, creating nothing', async () => {
      const item = await sellable(acct, {stock: 3})
      await checkout(acct, {product_id: item.product.id, quantity: 2})
      expect(await readVariant(acct, item.product.id, item.variant.id)).to.include({stock_qty: 3, stock_reserved: 2, stock_available: 1})

      const err = expectError(await acct.store('POST', '/checkouts', {body: {product_id: item.product.id, quantity: 2}}), 409, 'out_of_stock')
      expect(err.param).to.equal('quantity')
      expect(await readVariant(acct, item.product.id, item.variant.id)).to.include({stock_reserved: 2})
      await checkout(acct, {product_id: item.product.id, quantity: 1})
      expect(await readVariant(acct, item.product.id, item.variant.id)).to.include({stock_reserved: 3, stock_available: 0})
    })

    it('does not hold stock for variants that do not track it', async () => {
      const item = await sellable(acct)
      await checkout(acct, {product_id: item.product.id, quantity: 500})
      expect(await readVariant(acct, item.product.id, item.variant.id)).to.include({track_inventory: false, stock_reserved: 0})
    })

    it('never oversells: 40 simultaneous checkouts for 10 units give exactly 10 sessions', async () => {
      const item = await sellable(acct, {stock: 10})
      const results = await Promise.all(
        Array.from({length: 40}, () => acct.store('POST', '/checkouts', {body: {product_id: item.product.id, variant_id: item.variant.id}})),
      )
      const ok = results.filter((r) => r.status === 201)
      const refused = results.filter((r) => r.status === 409)
      expect(ok).to.have.length(10)
      expect(refused).to.have.length(30)
      for (const r of refused) expectError(r, 409, 'out_of_stock')
      expect(new Set(ok.map((r) => r.body.session_id)).size).to.equal(10)
      expect(await readVariant(acct, item.product.id, item.variant.id)).to.include({stock_qty: 10, stock_reserved: 10, stock_available: 0})
    })

    it('releases the reservation when the session expires after 30 minutes, once', async () => {
      const m = await gw.account()
      const item = await sellable(m, {stock: 2})
      const co = await checkout(m, {product_id: item.product.id, quantity: 2})
      expectError(await m.store('POST', '/checkouts', {body: {product_id: item.product.id}}), 409, 'out_of_stock')

      await advanceClock(gw, 29 * 60)
      expect(await readVariant(m, item.product.id, item.variant.id)).to.include({stock_reserved: 2})
      await advanceClock(gw, 2 * 60)
      // The next checkout sweeps the expired session first, so its units are there to sell again.
      await checkout(m, {product_id: item.product.id, quantity: 1})
      expect(await readVariant(m, item.product.id, item.variant.id)).to.include({stock_qty: 2, stock_reserved: 1})

      const expired = await events(gw, m.merchant.id, 'test', 'checkout.session.expired')
      expect(expired).to.have.length(1)
      expect(expired[0].data.object).to.include({id: co.session_id, status: 'expired', source: 'store'})
      expect(expired[0].data.object).to.not.have.property('client_secret')
      expect(expired[0].data.object.line_items[0]).to.include({product_id: item.product.id, variant_id: item.variant.id})
      expectError(await gw.request('GET', `/v1/checkout/sessions/${co.session_id}`, {token: m.secretKey}), 410, 'session_expired')
      expect(await events(gw, m.merchant.id, 'test', 'checkout.session.expired')).to.have.length(1)
    })

    it('shows released stock on a plain variant read once the clock has passed the expiry', async () => {
      const m = await gw.account()
      const item = await sellable(m, {stock: 4})
      await checkout(m, {product_id: item.product.id, quantity: 4})
      await advanceClock(gw, 31 * 60)
      expect(await readVariant(m, item.product.id, item.variant.id)).to.include({stock_reserved: 0, stock_available: 4})
    })
  })

  describe('GET /v1/checkout/sessions/{id}', () => {
    it('lets the checkout page poll with the client secret alone, without seeing it', async () => {
      const item = await sellable(acct)
      const co = await checkout(acct, {product_id: item.product.id})
      const cs = new URL(co.checkout_url).searchParams.get('cs')!
      const res = await gw.request('GET', `/v1/checkout/sessions/${co.session_id}?cs=${cs}`, {headers: {origin: 'https://pay.example'}})
      expect(res.status, res.text).to.equal(200)
      expect(res.body).to.include({id: co.session_id, status: 'open', amount: co.amount})
      expect(res.body).to.not.have.property('client_secret')
      expect(res.body).to.not.have.property('reservation')
    })

    it('answers 404 for a wrong client secret, an unknown id and a foreign id', async () => {
      const item = await sellable(acct)
      const co = await checkout(acct, {product_id: item.product.id})
      expectError(await getWithSecret(co.session_id, 'cs_secret_wrong'), 404, 'resource_missing')
      expectError(await getSession('cs_missing'), 404, 'resource_missing')
      const other = await gw.account()
      expectError(await getSession(co.session_id, other.secretKey), 404, 'resource_missing')
      expectError(await gw.request('GET', `/v1/checkout/sessions/${co.session_id}`), 401, 'missing_credential')
    })

    it('invalidates the client secret once the session completes (410 session_expired); the key still reads it', async () => {
      const item = await sellable(acct)
      const co = await checkout(acct, {product_id: item.product.id})
      const cs = new URL(co.checkout_url).searchParams.get('cs')!
      expect((await pay(gw, co.session_id)).status).to.equal(200)
      expectError(await getWithSecret(co.session_id, cs), 410, 'session_expired')
      const viaKey = await getSession(co.session_id)
      expect(viaKey.status).to.equal(200)
      expect(viaKey.body).to.include({status: 'complete'})
      expect(viaKey.body.payment).to.match(/^py_/)
      expect(viaKey.body.order).to.match(/^ord_/)
    })

    it('answers 410 session_expired both ways once the session expired by time', async () => {
      const m = await gw.account()
      const item = await sellable(m)
      const co = await checkout(m, {product_id: item.product.id})
      const cs = new URL(co.checkout_url).searchParams.get('cs')!
      await advanceClock(gw, 30 * 60 + 1)
      expectError(await getWithSecret(co.session_id, cs), 410, 'session_expired')
      expectError(await gw.request('GET', `/v1/checkout/sessions/${co.session_id}`, {token: m.secretKey}), 410, 'session_expired')
    })

    it('takes the secret key under the same rules as the store API', async () => {
      const item = await sellable(acct)
      const co = await checkout(acct, {product_id: item.product.id})
      expectError(await gw.request('GET', `/v1/checkout/sessions/${co.session_id}`, {token: acct.secretKey, headers: {origin: 'https://x.example'}}), 403, 'origin_forbidden')
      const noScope = await gw.secretKey(acct.merchant.id, 'test', ['products:read'])
      expect(expectError(await getSession(co.session_id, noScope.secret_key), 403).type).to.equal('insufficient_scope')
      expectError(await gw.request('GET', `/v1/checkout/sessions/${co.session_id}`, {token: acct.token}), 401, 'wrong_credential_type')
    })
  })

  describe('POST /v1/checkout/sessions/{id}/expire', () => {
    it('expires an open session, releases its stock and emits checkout.session.expired', async () => {
      const m = await gw.account()
      const item = await sellable(m, {stock: 5})
      const co = await checkout(m, {product_id: item.product.id, quantity: 4})
      const res = await expire(co.session_id, {key: m.secretKey})
      expect(res.status, res.text).to.equal(200)
      expect(res.body).to.deep.equal({id: co.session_id, status: 'expired'})
      expect(await readVariant(m, item.product.id, item.variant.id)).to.include({stock_qty: 5, stock_reserved: 0})
      expect(await events(gw, m.merchant.id, 'test', 'checkout.session.expired')).to.have.length(1)
      expectError(await gw.request('GET', `/v1/checkout/sessions/${co.session_id}`, {token: m.secretKey}), 410, 'session_expired')
      expectError(await expire(co.session_id, {key: m.secretKey}), 422, 'session_expired')
      expect(await events(gw, m.merchant.id, 'test', 'checkout.session.expired')).to.have.length(1)
    })

    it('refuses a completed session (422 session_already_completed) and unknown ids (404)', async () => {
      const item = await sellable(acct)
      const co = await checkout(acct, {product_id: item.product.id})
      await pay(gw, co.session_id)
      expectError(await expire(co.session_id), 422, 'session_already_completed')
      expectError(await expire('cs_nope'), 404, 'resource_missing')
      const other = await gw.account()
      expectError(await expire(co.session_id, {key: other.secretKey}), 404, 'resource_missing')
    })

    it('replays a repeated Idempotency-Key instead of answering 422', async () => {
      const item = await sellable(acct)
      const co = await checkout(acct, {product_id: item.product.id})
      const first = await expire(co.session_id, {idempotencyKey: `exp-${co.session_id}`})
      const again = await expire(co.session_id, {idempotencyKey: `exp-${co.session_id}`})
      expect(again.status).to.equal(200)
      expect(again.headers.get('idempotent-replayed')).to.equal('true')
      expect(again.body).to.deep.equal(first.body)
    })
  })

  describe('POST /_admin/checkouts/{id}/complete', () => {
    it('pays a session: completes it, consumes the reservation, records the payment and the order', async () => {
      const m = await gw.account()
      const item = await sellable(m, {stock: 3, unit_amount: 5000})
      const co = await checkout(m, {product_id: item.product.id, quantity: 2})
      const res = await pay(gw, co.session_id, {customer_name: 'Ada Buyer', customer_email: 'ada@example.com'})
      expect(res.status, res.text).to.equal(200)
      const {session, payment, order} = res.body
      expect(session).to.include({id: co.session_id, status: 'complete', payment: payment.id, order: order.id})
      expect(payment).to.include({object: 'payment', status: 'succeeded', amount: 10000, currency: 'eur', session_id: co.session_id, amount_refunded: 0})
      expect(payment.id).to.match(/^py_/)
      expect(payment.customer).to.deep.equal({name: 'Ada Buyer', email: 'ada@example.com'})
      expect(order).to.include({status: 'paid', source: 'store', checkout_session: co.session_id, payment: payment.id, quantity: 2, amount: 10000, fixture: false})
      expect(await readVariant(m, item.product.id, item.variant.id)).to.include({stock_qty: 1, stock_reserved: 0, stock_available: 1})
    })

    it('records a declined attempt and keeps the session open, its stock held, for another try', async () => {
      const m = await gw.account()
      const item = await sellable(m, {stock: 1})
      const co = await checkout(m, {product_id: item.product.id})
      const declined = await pay(gw, co.session_id, {outcome: 'declined'})
      expect(declined.status, declined.text).to.equal(200)
      expect(declined.body.session.status).to.equal('open')
      expect(declined.body.order).to.equal(null)
      expect(declined.body.payment).to.include({status: 'failed', failure_code: 'card_declined'})
      expect(declined.body.payment.failure_message).to.be.a('string').and.not.empty
      expect(await readVariant(m, item.product.id, item.variant.id)).to.include({stock_qty: 1, stock_reserved: 1})

      const failed = await events(gw, m.merchant.id, 'test', 'payment_intent.payment_failed')
      expect(failed).to.have.length(1)
      expect(failed[0].data.object).to.include({failure_code: 'card_declined', checkout_session: co.session_id})

      const paid = await pay(gw, co.session_id)
      expect(paid.body.session.status).to.equal('complete')
      expect(await readVariant(m, item.product.id, item.variant.id)).to.include({stock_qty: 0, stock_reserved: 0})
    })

    it('refuses expired (422 session_expired), completed (422 session_already_completed) and unknown (404) sessions', async () => {
      const item = await sellable(acct)
      const done = await checkout(acct, {product_id: item.product.id})
      await pay(gw, done.session_id)
      expectError(await pay(gw, done.session_id), 422, 'session_already_completed')
      const stale = await checkout(acct, {product_id: item.product.id})
      await advanceClock(gw, 31 * 60)
      expectError(await pay(gw, stale.session_id), 422, 'session_expired')
      expectError(await pay(gw, 'cs_unknown'), 404, 'resource_missing')
      expectError(await gw.admin('POST', `/checkouts/${done.session_id}/complete`, {outcome: 'maybe'}), 400)
    })
  })
})
