import {expect} from 'chai'

import {events, eventTypes, pay, readVariant, sellable, type Account} from '../helpers/commerce.js'
import {expectError, TestGateway} from '../helpers/gateway.js'

/**
 * The merchant API (`/v1`) over real HTTP: keys (secret, publishable, test, live, origins), checkout
 * sessions with every rule of the spec's tables, refunds, payments and the one catalogue on /v1.
 */
describe('merchant API', () => {
  let gw: TestGateway
  let acct: Account
  before(async () => {
    gw = await TestGateway.start()
    acct = await gw.account('test')
  })
  after(() => gw.close())

  const raw = {amount: 1999, currency: 'eur', customer_name: 'Ada Buyer', customer_email: 'ada@example.com'}
  const line = {name: 'Tea', quantity: 2, amount: 500, currency: 'eur'}

  async function session(body: Record<string, unknown>, a: Account = acct) {
    const res = await a.v1('POST', '/checkout/sessions', {body})
    expect(res.status, res.text).to.equal(201)
    return res.body
  }

  async function publishableKey(merchant: string, origins: string[], mode: 'test' | 'live' = 'test') {
    const res = await gw.admin('POST', '/keys', {merchant, mode, scopes: ['checkout:write'], type: 'publishable', allowed_origins: origins})
    expect(res.status, res.text).to.equal(201)
    return res.body as {id: string; publishable_key: string}
  }

  describe('keys', () => {
    it('issues publishable keys (pk_test_/pk_live_) that create line-item sessions from an allow-listed origin only', async () => {
      const pk = await publishableKey(acct.merchant.id, ['https://shop.example.com'])
      expect(pk.publishable_key).to.match(/^pk_test_/)
      const ok = await gw.request('POST', '/v1/checkout/sessions', {token: pk.publishable_key, headers: {origin: 'https://shop.example.com'}, body: {line_items: [line]}})
      expect(ok.status, ok.text).to.equal(201)
      expect(ok.body.amount).to.equal(1000)

      const noOrigin = await gw.request('POST', '/v1/checkout/sessions', {token: pk.publishable_key, body: {line_items: [line]}})
      expect(expectError(noOrigin, 403, 'origin_not_allowed').type).to.equal('permission_error')
      expectError(await gw.request('POST', '/v1/checkout/sessions', {token: pk.publishable_key, headers: {origin: 'https://evil.example.com'}, body: {line_items: [line]}}), 403, 'origin_not_allowed')
      const rawAmount = await gw.request('POST', '/v1/checkout/sessions', {token: pk.publishable_key, headers: {origin: 'https://shop.example.com'}, body: raw})
      expectError(rawAmount, 403, 'publishable_key_forbidden')
      for (const [method, path] of [
        ['GET', '/v1/checkout/sessions'],
        ['GET', `/v1/checkout/sessions/${ok.body.id}`],
        ['POST', `/v1/checkout/sessions/${ok.body.id}/expire`],
        ['GET', '/v1/products'],
        ['POST', '/v1/refunds'],
      ] as const) {
        expectError(await gw.request(method, path, {token: pk.publishable_key, headers: {origin: 'https://shop.example.com'}, body: method === 'POST' ? {} : undefined}), 403, 'publishable_key_forbidden')
      }
      // The store API never takes a publishable key.
      expectError(await gw.request('GET', '/v1/store/products', {token: pk.publishable_key, headers: {origin: 'https://shop.example.com'}}), 401, 'wrong_credential_type')
    })

    it('rejects secret keys sent with a browser Origin', async () => {
      expectError(await acct.v1('POST', '/checkout/sessions', {body: raw, headers: {origin: 'https://shop.example.com'}}), 403, 'origin_forbidden')
      expectError(await acct.v1('GET', '/products', {headers: {origin: 'https://shop.example.com'}}), 403, 'origin_forbidden')
    })

    it('revokes secret and publishable keys with DELETE /_admin/keys/{id}', async () => {
      const pk = await publishableKey(acct.merchant.id, ['https://a.example'])
      const sk = await gw.secretKey(acct.merchant.id)
      expect((await gw.admin('DELETE', `/keys/${pk.id}`)).status).to.equal(200)
      expect((await gw.admin('DELETE', `/keys/${sk.id}`)).status).to.equal(200)
      expectError(await gw.request('POST', '/v1/checkout/sessions', {token: pk.publishable_key, headers: {origin: 'https://a.example'}, body: {line_items: [line]}}), 401)
      expectError(await gw.request('GET', '/v1/products', {token: sk.secret_key}), 401)
      expectError(await gw.admin('DELETE', `/keys/${pk.id}`), 404)
    })

    it('keeps test keys on the sandbox and live keys on live data', async () => {
      const live = await gw.secretKey(acct.merchant.id, 'live')
      const liveSession = await gw.request('POST', '/v1/checkout/sessions', {token: live.secret_key, body: raw})
      expect(liveSession.status, liveSession.text).to.equal(201)
      expect(liveSession.body.livemode).to.equal(true)
      const testSession = await session(raw)
      expect(testSession.livemode).to.equal(false)
      expectError(await acct.v1('GET', `/checkout/sessions/${liveSession.body.id}`), 404)
      expectError(await gw.request('GET', `/v1/checkout/sessions/${testSession.id}`, {token: live.secret_key}), 404)
    })

    it('refuses creates of a not-ready merchant (409) and beyond the plan (402)', async () => {
      const notReady = await gw.merchant({status: 'not_ready'})
      const key = await gw.secretKey(notReady.id)
      expectError(await gw.request('POST', '/v1/checkout/sessions', {token: key.secret_key, body: raw}), 409, 'merchant_not_ready')
      expectError(await gw.request('POST', '/v1/products', {token: key.secret_key, body: {name: 'X'}}), 409, 'merchant_not_ready')

      const small = await gw.merchant({plan: {checkout_limit: 1, product_limit: 1}})
      const k = await gw.secretKey(small.id)
      expect((await gw.request('POST', '/v1/checkout/sessions', {token: k.secret_key, body: raw})).status).to.equal(201)
      expectError(await gw.request('POST', '/v1/checkout/sessions', {token: k.secret_key, body: raw}), 402, 'checkout_limit_reached')
      expect((await gw.request('POST', '/v1/products', {token: k.secret_key, body: {name: 'One'}})).status).to.equal(201)
      expectError(await gw.request('POST', '/v1/store/products', {token: k.secret_key, body: {name: 'Two'}}), 402, 'product_limit_reached')
    })
  })

  describe('checkout sessions: create', () => {
    it('creates a raw-amount session with its secret, hosted and embed URLs, 24 h expiry and flow_version 5', async () => {
      const s = await session({...raw, reference: 'order-17', description: 'Order 17', metadata: {order: '17'}, success_url: 'https://shop.example/ok'})
      expect(s).to.include({object: 'checkout.session', mode: 'payment', status: 'open', source: 'api', amount: 1999, currency: 'eur', reference: 'order-17', flow_version: 5, revision: 0})
      expect(s.client_secret).to.match(/^cs_secret_/)
      expect(s.checkout_url).to.equal(`${gw.url}/checkout/${s.id}?cs=${s.client_secret}`)
      expect(s.embed_url).to.equal(`${gw.url}/checkout/${s.id}/embed?cs=${s.client_secret}`)
      expect(s.expires_at - s.created).to.equal(24 * 3600)
      expect(s.metadata).to.deep.equal({order: '17'})
      const page = await fetch(s.checkout_url)
      expect(page.status).to.equal(200)
    })

    it('validates a raw amount: customer fields required, name 2–120, minimum 250', async () => {
      const {customer_name: _n, ...noName} = raw
      expect(expectError(await acct.v1('POST', '/checkout/sessions', {body: noName}), 400, 'parameter_missing').param).to.equal('customer_name')
      expect(expectError(await acct.v1('POST', '/checkout/sessions', {body: {...raw, customer_name: 'A'}}), 400).param).to.equal('customer_name')
      expect(expectError(await acct.v1('POST', '/checkout/sessions', {body: {...raw, customer_email: 'nope'}}), 400).param).to.equal('customer_email')
      expectError(await acct.v1('POST', '/checkout/sessions', {body: {...raw, amount: 249}}), 400, 'amount_too_small')
      expectError(await acct.v1('POST', '/checkout/sessions', {body: {...raw, line_items: [line]}}), 400, 'parameters_exclusive')
    })

    it('charges free line items: amount × quantity, one currency', async () => {
      const s = await session({line_items: [line, {name: 'Cup', amount: 750, currency: 'eur', image_url: 'https://img.example/cup.png'}]})
      expect(s.amount).to.equal(1750)
      expect(s.line_items[1]).to.include({name: 'Cup', quantity: 1, amount: 750, variant_id: null})
      expectError(await acct.v1('POST', '/checkout/sessions', {body: {line_items: [line, {...line, currency: 'usd'}]}}), 400, 'currency_mismatch')
      expect(expectError(await acct.v1('POST', '/checkout/sessions', {body: {line_items: [{quantity: 1, amount: 500, currency: 'eur'}]}}), 400, 'parameter_missing').param).to.equal('line_items[0].name')
    })

    it("free line items take the session's currency: an item currency must equal it, none anywhere names currency", async () => {
      const s = await session({currency: 'eur', line_items: [{name: 'Tea', quantity: 2, amount: 500}, {name: 'Cup', amount: 750, currency: 'eur'}]})
      expect(s).to.include({amount: 1750, currency: 'eur'})
      expect(s.line_items.map((l: {currency: string}) => l.currency)).to.deep.equal(['eur', 'eur'])
      const mismatch = expectError(await acct.v1('POST', '/checkout/sessions', {body: {currency: 'eur', line_items: [{name: 'Tea', amount: 500}, {name: 'Cup', amount: 750, currency: 'usd'}]}}), 400, 'currency_mismatch')
      expect(mismatch.param).to.equal('line_items[1].currency')
      expect(expectError(await acct.v1('POST', '/checkout/sessions', {body: {line_items: [{name: 'Tea', amount: 500}]}}), 400, 'parameter_missing').param).to.equal('currency')
      // An update's free items take the session's currency too.
      const relined = await acct.v1('PATCH', `/checkout/sessions/${s.id}`, {body: {line_items: [{name: 'Pot', amount: 2000}]}})
      expect(relined.status, relined.text).to.equal(200)
      expect(relined.body).to.include({amount: 2000, currency: 'eur'})
      expect(expectError(await acct.v1('PATCH', `/checkout/sessions/${s.id}`, {body: {line_items: [{name: 'Pot', amount: 2000, currency: 'usd'}]}}), 400, 'currency_mismatch').param).to.equal('line_items[0].currency')
    })

    it('derives variant lines from the price and applies the variant rules', async () => {
      const item = await sellable(acct, {unit_amount: 1200, sku: 'TEA-1'})
      const s = await session({line_items: [{variant: item.variant.id, quantity: 3}], reference: 'r-1'})
      expect(s.amount).to.equal(3600)
      expect(s.line_items[0]).to.include({variant_id: item.variant.id, product_id: item.product.id, sku: 'TEA-1', price_id: item.price, amount: 1200, currency: 'eur'})
      // Rule 4: a sent amount or currency must match the price.
      expectError(await acct.v1('POST', '/checkout/sessions', {body: {line_items: [{variant: item.variant.id, amount: 1100}]}}), 400, 'amount_mismatch')
      expectError(await acct.v1('POST', '/checkout/sessions', {body: {line_items: [{variant: item.variant.id, currency: 'usd'}]}}), 400, 'currency_mismatch')
      // Rule 2: variant and price_id in one session.
      expectError(await acct.v1('POST', '/checkout/sessions', {body: {line_items: [{variant: item.variant.id}, {...line, price_id: item.price}]}}), 400, 'parameters_exclusive')
      // Rule 5: once per session.
      expectError(await acct.v1('POST', '/checkout/sessions', {body: {line_items: [{variant: item.variant.id}, {variant: item.variant.id}]}}), 400, 'duplicate_variant')
      // Rule 1: a variant of this merchant.
      const other = await gw.account('test')
      const foreign = await sellable(other)
      expectError(await acct.v1('POST', '/checkout/sessions', {body: {line_items: [{variant: foreign.variant.id}]}}), 404, 'variant_unavailable')
      // Rule 3: active product, one-time price, no variants in subscription mode.
      const monthly = await sellable(acct, {recurring: true})
      expectError(await acct.v1('POST', '/checkout/sessions', {body: {line_items: [{variant: monthly.variant.id}]}}), 400, 'unsupported_price')
      expectError(await acct.v1('POST', '/checkout/sessions', {body: {mode: 'subscription', line_items: [{variant: item.variant.id}]}}), 400, 'variant_not_supported')
      const archived = await sellable(acct)
      expect((await acct.v1('DELETE', `/products/${archived.product.id}`)).status).to.equal(200)
      expectError(await acct.v1('POST', '/checkout/sessions', {body: {line_items: [{variant: archived.variant.id}]}}), 404, 'product_unavailable')
      // Rule 8: the events carry the ids too.
      expect((await pay(gw, s.id)).status).to.equal(200)
      const completed = (await events(gw, acct.merchant.id, 'test', 'checkout.session.completed')).find((e) => e.data.object.id === s.id)
      expect(completed.data.object.line_items[0]).to.include({variant_id: item.variant.id, product_id: item.product.id, sku: 'TEA-1'})
    })

    it('reserves tracked stock (alone in its session), 409 out_of_stock creates nothing, expiry releases', async () => {
      const item = await sellable(acct, {stock: 3})
      expectError(await acct.v1('POST', '/checkout/sessions', {body: {line_items: [{variant: item.variant.id}, line]}}), 400, 'variant_not_alone')
      const before = (await acct.v1('GET', '/checkout/sessions?limit=100')).body.data.length
      const s = await session({line_items: [{variant: item.variant.id, quantity: 2}]})
      expect((await readVariant(acct, item.product.id, item.variant.id)).stock_available).to.equal(1)
      expectError(await acct.v1('POST', '/checkout/sessions', {body: {line_items: [{variant: item.variant.id, quantity: 2}]}}), 409, 'out_of_stock')
      expect((await acct.v1('GET', '/checkout/sessions?limit=100')).body.data.length).to.equal(before + 1)
      const expired = await acct.v1('POST', `/checkout/sessions/${s.id}/expire`)
      expect(expired.body).to.deep.equal({id: s.id, status: 'expired'})
      expect((await readVariant(acct, item.product.id, item.variant.id)).stock_available).to.equal(3)
      const payload = (await events(gw, acct.merchant.id, 'test', 'checkout.session.expired')).find((e) => e.data.object.id === s.id)
      expect(payload.data.object.line_items[0]).to.include({variant_id: item.variant.id, product_id: item.product.id})
    })

    it('sells exactly the stock under 40 concurrent creates for 10 units', async () => {
      const item = await sellable(acct, {stock: 10})
      const results = await Promise.all(Array.from({length: 40}, () => acct.v1('POST', '/checkout/sessions', {body: {line_items: [{variant: item.variant.id}]}})))
      const statuses = results.map((r) => r.status)
      expect(statuses.filter((s) => s === 201)).to.have.length(10)
      expect(statuses.filter((s) => s === 409)).to.have.length(30)
      const v = await readVariant(acct, item.product.id, item.variant.id)
      expect(v.stock_reserved).to.equal(10)
      expect(v.stock_available).to.equal(0)
    })

    it('answers malformed line items with a 4xx and creates nothing', async () => {
      const item = await sellable(acct, {stock: 1})
      const before = (await acct.v1('GET', '/checkout/sessions?limit=100')).body.data.length
      const WRONG: unknown[] = [null, true, -1, 1.5, 1e308, '', 'x'.repeat(5000), [], [null], {}, '__proto__']
      for (const field of ['name', 'quantity', 'amount', 'currency', 'image_url', 'price_id', 'product_id', 'variant']) {
        for (const value of WRONG) {
          if (field === 'name' && value === '__proto__') continue // a valid name
          const res = await acct.v1('POST', '/checkout/sessions', {body: {line_items: [{variant: item.variant.id, [field]: value}]}})
          expect(res.status, `${field}=${JSON.stringify(value)?.slice(0, 40)}: ${res.text.slice(0, 200)}`).to.be.within(400, 499)
        }
      }
      for (const lineItems of [null, 'x', {}, [[]], Array.from({length: 101}, () => line), [{...line, quantity: 1e9}], [{...line, amount: 99_999_999, quantity: 1000}]]) {
        const res = await acct.v1('POST', '/checkout/sessions', {body: {line_items: lineItems}})
        expect(res.status, res.text.slice(0, 200)).to.be.within(400, 499)
      }
      for (const revision of [-1, 'x', 1.5, null]) {
        const s = await session(raw)
        const res = await acct.v1('PATCH', `/checkout/sessions/${s.id}`, {body: {revision}})
        expect(res.status, res.text).to.equal(400)
      }
      expect((await acct.v1('GET', '/checkout/sessions?limit=100')).body.data.length).to.equal(before + 4)
      expect((await readVariant(acct, item.product.id, item.variant.id)).stock_reserved).to.equal(0)
    })

    it('replays a create with the same Idempotency-Key, holding stock once', async () => {
      const item = await sellable(acct, {stock: 5})
      const body = {line_items: [{variant: item.variant.id, quantity: 2}]}
      const first = await acct.v1('POST', '/checkout/sessions', {body, idempotencyKey: 'order-42'})
      const again = await acct.v1('POST', '/checkout/sessions', {body, idempotencyKey: 'order-42'})
      expect(again.body.id).to.equal(first.body.id)
      expect(again.headers.get('idempotent-replayed')).to.equal('true')
      expect((await readVariant(acct, item.product.id, item.variant.id)).stock_reserved).to.equal(2)
      expectError(await acct.v1('POST', '/checkout/sessions', {body: {line_items: [{variant: item.variant.id}]}, idempotencyKey: 'order-42'}), 409, 'idempotency_key_reused')
    })

    it('opens subscription-mode sessions for one recurring price', async () => {
      const monthly = await sellable(acct, {recurring: true, unit_amount: 900})
      const s = await session({mode: 'subscription', line_items: [{price_id: monthly.price, quantity: 2}]})
      expect(s).to.include({mode: 'subscription', amount: 1800, currency: 'eur'})
      expectError(await acct.v1('POST', '/checkout/sessions', {body: {mode: 'subscription', ...raw}}), 400)
      expectError(await acct.v1('POST', '/checkout/sessions', {body: {mode: 'subscription', customer_name: 'Ada Buyer'}}), 400, 'parameter_missing')
      const oneTime = await sellable(acct)
      expectError(await acct.v1('POST', '/checkout/sessions', {body: {mode: 'subscription', line_items: [{price_id: oneTime.price}]}}), 400, 'price_not_recurring')
    })

    it('starts an active subscription when a subscription-mode session is paid', async () => {
      const monthly = await sellable(acct, {recurring: true, unit_amount: 900})
      const s = await session({mode: 'subscription', line_items: [{price_id: monthly.price, quantity: 2}], metadata: {plan: 'club'}})
      expect((await pay(gw, s.id)).status).to.equal(200)
      const read = (await acct.v1('GET', `/checkout/sessions/${s.id}`)).body
      expect(read.status).to.equal('complete')
      expect(read.subscription).to.match(/^sub_/)
      const sub = (await acct.v1('GET', `/subscriptions/${read.subscription}`)).body
      expect(sub).to.include({status: 'active', price_id: monthly.price, quantity: 2, amount: 1800, currency: 'eur'})
      expect(sub.customer).to.match(/^cus_/)
      const created = (await events(gw, acct.merchant.id, 'test', 'subscription.created')).find((e) => e.data.object.id === sub.id)
      expect(created, 'subscription.created emitted').to.exist
    })
  })

  describe('checkout sessions: read, update, expire', () => {
    it('lists newest first with status and starting_after', async () => {
      const a = await gw.account('test')
      const s1 = await session(raw, a)
      const s2 = await session(raw, a)
      const s3 = await session(raw, a)
      await a.v1('POST', `/checkout/sessions/${s2.id}/expire`)
      const all = await a.v1('GET', '/checkout/sessions')
      expect(all.body.data.map((s: any) => s.id)).to.deep.equal([s3.id, s2.id, s1.id])
      const open = await a.v1('GET', '/checkout/sessions?status=open')
      expect(open.body.data.map((s: any) => s.id)).to.deep.equal([s3.id, s1.id])
      const page = await a.v1('GET', `/checkout/sessions?limit=1&starting_after=${s3.id}`)
      expect(page.body.data.map((s: any) => s.id)).to.deep.equal([s2.id])
      expect(page.body.has_more).to.equal(true)
      expectError(await a.v1('GET', '/checkout/sessions?status=cancelled'), 400)
    })

    it('serves the browser its open session by client secret, and 410 once it expired', async () => {
      const s = await session(raw)
      const byCs = await gw.request('GET', `/v1/checkout/sessions/${s.id}?cs=${s.client_secret}`)
      expect(byCs.status, byCs.text).to.equal(200)
      expect(byCs.body).to.not.have.property('client_secret')
      expectError(await gw.request('GET', `/v1/checkout/sessions/${s.id}?cs=cs_secret_wrong`), 404)
      await acct.v1('POST', `/checkout/sessions/${s.id}/expire`)
      expectError(await gw.request('GET', `/v1/checkout/sessions/${s.id}?cs=${s.client_secret}`), 410, 'session_expired')
      expectError(await acct.v1('GET', `/checkout/sessions/${s.id}`), 410, 'session_expired')
      expectError(await acct.v1('POST', `/checkout/sessions/${s.id}/expire`), 422, 'session_expired')
    })

    it('completes a paid session as status complete and consumes its reservation', async () => {
      const item = await sellable(acct, {stock: 2})
      const s = await session({line_items: [{variant: item.variant.id}]})
      expect((await pay(gw, s.id)).status).to.equal(200)
      const read = await acct.v1('GET', `/checkout/sessions/${s.id}`)
      expect(read.body.status).to.equal('complete')
      expect(read.body.payment).to.be.a('string')
      const v = await readVariant(acct, item.product.id, item.variant.id)
      expect(v).to.include({stock_qty: 1, stock_reserved: 0})
      expectError(await gw.request('GET', `/v1/checkout/sessions/${s.id}?cs=${s.client_secret}`), 410, 'session_expired')
    })

    it('updates with PATCH and POST /update, incrementing revision; a stale revision is revision_conflict', async () => {
      const s = await session(raw)
      const one = await acct.v1('PATCH', `/checkout/sessions/${s.id}`, {body: {amount: 2500, description: 'Bigger', revision: 0}})
      expect(one.status, one.text).to.equal(200)
      expect(one.body).to.include({id: s.id, object: 'checkout.session', status: 'open', amount: 2500, currency: 'eur', flow_version: 5, revision: 1, description: 'Bigger'})
      const two = await acct.v1('POST', `/checkout/sessions/${s.id}/update`, {body: {reference: 'ref-2'}})
      expect(two.body).to.include({revision: 2, reference: 'ref-2'})
      expectError(await acct.v1('PATCH', `/checkout/sessions/${s.id}`, {body: {amount: 3000, revision: 1}}), 409, 'revision_conflict')
      expect((await acct.v1('GET', `/checkout/sessions/${s.id}`)).body.amount).to.equal(2500)

      const items = await session({line_items: [line]})
      expectError(await acct.v1('PATCH', `/checkout/sessions/${items.id}`, {body: {amount: 3000}}), 400, 'amount_derived')
      const relined = await acct.v1('PATCH', `/checkout/sessions/${items.id}`, {body: {line_items: [{...line, quantity: 5}]}})
      expect(relined.body).to.include({amount: 2500, revision: 1})
    })

    it('refuses updates while a payment is being confirmed (confirmation_in_progress), then settles that one payment', async () => {
      const s = await session(raw)
      const started = await pay(gw, s.id, {outcome: 'processing'})
      expect(started.status, started.text).to.equal(200)
      expect(started.body.payment.status).to.equal('processing')
      expectError(await acct.v1('PATCH', `/checkout/sessions/${s.id}`, {body: {description: 'late'}}), 409, 'confirmation_in_progress')
      expectError(await pay(gw, s.id, {outcome: 'processing'}), 409, 'confirmation_in_progress')
      const paid = await pay(gw, s.id)
      expect(paid.body.payment).to.include({id: started.body.payment.id, status: 'succeeded'})
      expect((await acct.v1('GET', `/checkout/sessions/${s.id}`)).body).to.include({status: 'complete', payment: started.body.payment.id})
      const payments = (await acct.v1('GET', '/payments?limit=100')).body.data.filter((p: any) => p.session_id === s.id)
      expect(payments).to.have.length(1)
    })

    it('moves a reservation when an update changes the variant lines', async () => {
      const item = await sellable(acct, {stock: 4})
      const s = await session({line_items: [{variant: item.variant.id, quantity: 1}]})
      const up = await acct.v1('PATCH', `/checkout/sessions/${s.id}`, {body: {line_items: [{variant: item.variant.id, quantity: 3}]}})
      expect(up.status, up.text).to.equal(200)
      expect((await readVariant(acct, item.product.id, item.variant.id)).stock_reserved).to.equal(3)
      expectError(await acct.v1('PATCH', `/checkout/sessions/${s.id}`, {body: {line_items: [{variant: item.variant.id, quantity: 5}]}}), 409, 'out_of_stock')
      expect((await readVariant(acct, item.product.id, item.variant.id)).stock_reserved).to.equal(3)
    })

    it('refuses updates of store sessions (flow_version 4), ended sessions, and gives one winner among concurrent same-revision updates', async () => {
      const item = await sellable(acct)
      const store = await acct.store('POST', '/checkouts', {body: {product_id: item.product.id}})
      expectError(await acct.v1('PATCH', `/checkout/sessions/${store.body.session_id}`, {body: {description: 'x'}}), 409, 'immutable_session')

      const done = await session(raw)
      await pay(gw, done.id)
      expectError(await acct.v1('PATCH', `/checkout/sessions/${done.id}`, {body: {description: 'x'}}), 422, 'session_already_completed')

      const s = await session(raw)
      const results = await Promise.all(Array.from({length: 10}, (_, i) => acct.v1('PATCH', `/checkout/sessions/${s.id}`, {body: {amount: 1000 + i, revision: 0}})))
      expect(results.filter((r) => r.status === 200)).to.have.length(1)
      for (const r of results.filter((x) => x.status !== 200)) expectError(r, 409, 'revision_conflict')
      expect((await acct.v1('GET', `/checkout/sessions/${s.id}`)).body.revision).to.equal(1)
    })
  })

  describe('refunds and payments', () => {
    it('refunds partly then fully, 422 after, restores stock on the full refund, and emits events', async () => {
      const item = await sellable(acct, {stock: 5, unit_amount: 1000})
      const s = await session({line_items: [{variant: item.variant.id, quantity: 2}]})
      const paid = (await pay(gw, s.id)).body.payment
      expect((await readVariant(acct, item.product.id, item.variant.id)).stock_qty).to.equal(3)

      const part = await acct.v1('POST', '/refunds', {body: {payment: paid.id, amount: 500}})
      expect(part.status, part.text).to.equal(201)
      expect(part.body).to.include({object: 'refund', payment: paid.id, amount: 500, status: 'succeeded', livemode: false})
      expect((await acct.v1('GET', `/payments/${paid.id}`)).body).to.include({status: 'partially_refunded', amount_refunded: 500})
      expect((await readVariant(acct, item.product.id, item.variant.id)).stock_qty).to.equal(3)

      const rest = await acct.v1('POST', '/refunds', {body: {payment: paid.id}})
      expect(rest.body.amount).to.equal(1500)
      expect((await acct.v1('GET', `/payments/${paid.id}`)).body).to.include({status: 'refunded', amount_refunded: 2000})
      expect((await readVariant(acct, item.product.id, item.variant.id)).stock_qty).to.equal(5)
      expectError(await acct.v1('POST', '/refunds', {body: {payment: paid.id}}), 422, 'already_refunded')
      expect(await eventTypes(gw, acct.merchant.id, 'test', ['charge.refunded'])).to.have.length.greaterThanOrEqual(2)

      expectError(await acct.v1('GET', '/refunds'), 400, 'parameter_missing')
      const list = await acct.v1('GET', `/refunds?charge=${paid.id}`)
      expect(list.body.data.map((r: any) => r.id)).to.deep.equal([rest.body.id, part.body.id])
      const full = (await acct.v1('GET', `/payments/${paid.id}`)).body
      expect(full.session_id).to.equal(s.id)
      const one = await acct.v1('GET', `/refunds/${part.body.id}`)
      expect(one.body).to.deep.include({id: part.body.id, amount: 500})
      expectError(await acct.v1('GET', '/refunds/re_nope'), 404)
      expectError(await acct.v1('POST', '/refunds', {body: {payment: 'py_nope'}}), 404)
    })

    it('serves payments in the sandbox row shape (py_) and the live charge shape (ch_), found by payment intent too', async () => {
      const s = await session(raw)
      const paid = (await pay(gw, s.id)).body.payment
      expect(paid.id).to.match(/^py_/)
      const listed = await acct.v1('GET', '/payments?limit=1')
      expect(listed.body.data[0]).to.include({id: paid.id, object: 'payment', session_id: s.id})

      const live = await gw.secretKey(acct.merchant.id, 'live')
      const ls = await gw.request('POST', '/v1/checkout/sessions', {token: live.secret_key, body: raw})
      const livePaid = (await pay(gw, ls.body.id)).body.payment
      expect(livePaid.id).to.match(/^ch_/)
      const byIntent = await gw.request('GET', `/v1/payments/${livePaid.payment_intent}`, {token: live.secret_key})
      expect(byIntent.body).to.include({id: livePaid.id, livemode: true, checkout_session: ls.body.id, status: 'succeeded'})
      const liveList = await gw.request('GET', '/v1/payments?status=succeeded', {token: live.secret_key})
      expect(liveList.body.data.map((p: any) => p.id)).to.include(livePaid.id)
      const appView = await gw.request('GET', `/v1/app/payments/${paid.id}`, {token: acct.token})
      expect(appView.body).to.deep.equal((await acct.v1('GET', `/payments/${paid.id}`)).body)
      expectError(await acct.v1('POST', '/payments'), 405)
    })
  })

  describe('products and prices on /v1', () => {
    it('is the same catalogue as the App and store doors', async () => {
      const created = await acct.v1('POST', '/products', {body: {name: 'Mug', default_price: {currency: 'eur', unit_amount: 1500}}})
      expect(created.status, created.text).to.equal(201)
      expect(created.body.prices).to.have.length(1)
      expect(created.body.default_price).to.equal(created.body.prices[0].id)
      const id = created.body.id

      const updated = await acct.v1('POST', `/products/${id}`, {body: {name: 'Big Mug', tags: ['kitchen']}})
      expect(updated.body).to.include({name: 'Big Mug'})
      const price = await acct.v1('POST', `/products/${id}/prices`, {body: {currency: 'eur', unit_amount: 1800, set_as_default: true}})
      expect(price.status, price.text).to.equal(201)
      expect((await acct.v1('GET', `/products/${id}`)).body.default_price).to.equal(price.body.id)
      const back = await acct.v1('POST', `/products/${id}/default_price`, {body: {price: created.body.default_price}})
      expect(back.body.default_price).to.equal(created.body.default_price)
      expect((await acct.v1('GET', `/products/${id}/prices`)).body.data).to.have.length(2)

      const viaApp = await acct.app('GET', `/products/${id}`)
      expect(viaApp.body.name).to.equal('Big Mug')
      const viaStore = await acct.store('GET', `/products/${id}`)
      expect(viaStore.body.default_price).to.equal(created.body.default_price)

      const a = await gw.account('test')
      for (let i = 0; i < 21; i++) await a.v1('POST', '/products', {body: {name: `P${i}`}})
      expect((await a.v1('GET', '/products')).body.data).to.have.length(20)
      expect((await a.app('GET', '/products')).body.data).to.have.length(21)
      const page = await acct.v1('GET', `/products?limit=1&starting_after=${id}`)
      expect(page.body.data.map((p: any) => p.id)).to.not.include(id)
      const archived = await acct.v1('DELETE', `/products/${id}`)
      expect(archived.body).to.include({id, deleted: true})
      expect((await acct.app('GET', `/products/${id}`)).body.active).to.equal(false)
    })
  })
})
