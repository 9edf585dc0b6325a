import {expect} from 'chai'

import {expectError, TestGateway, type Account} from '../helpers/gateway.js'


describe('gateway catalogue: products and prices', () => {
  let gw: TestGateway
  let acct: Account
  before(async () => {
    gw = await TestGateway.start()
    acct = await gw.account()
  })
  after(() => gw.close())

  const eur = (unit_amount: number, extra: Record<string, unknown> = {}) => ({currency: 'eur', unit_amount, ...extra})

  async function product(body: Record<string, unknown> = {}, who: Account = acct) {
    const res = await who.store('POST', '/products', {body: {name: 'Mug', ...body}})
    expect(res.status, res.text).to.equal(201)
    return res.body
  }

  async function price(productId: string, body: Record<string, unknown>, who: Account = acct) {
    const res = await who.store('POST', `/products/${productId}/prices`, {body})
    expect(res.status, res.text).to.equal(201)
    return res.body
  }

  describe('products', () => {
    it('creates a product with every documented field, a default variant and store_visible true', async () => {
      const p = await product({
        description: 'Stoneware',
        images: ['https://img.example/1.jpg'],
        tax_code: 'txcd_99999999',
        unit_label: 'mug',
        statement_descriptor: 'MUG SHOP',
        url: 'https://shop.example/mug',
        shippable: true,
        package_dimensions: {length: 10, width: 8, height: 12, weight: 400},
        metadata: {sku_family: 'mugs'},
        tags: ['kitchen', 'gift', 'kitchen'],
      })
      expect(p).to.include({object: 'product', livemode: false, name: 'Mug', active: true, store_visible: true, default_price: null, shippable: true})
      expect(p.id).to.match(/^prod_/)
      expect(p.tags).to.deep.equal(['kitchen', 'gift'])
      expect(p.package_dimensions).to.deep.equal({length: 10, width: 8, height: 12, weight: 400})
      expect(p.metadata).to.deep.equal({sku_family: 'mugs'})
      expect(p.prices).to.deep.equal([])
      expect(p.option_groups).to.deep.equal([])
      expect(p.variants).to.have.length(1)
      expect(p.variants[0]).to.include({is_default: true, title: 'Mug', price: null, price_inherited: true})
    })

    it('takes up to 8 images and a statement descriptor of up to 22 characters', async () => {
      const images = Array.from({length: 8}, (_, i) => `https://img.example/${i}.jpg`)
      expect((await product({images, statement_descriptor: 'x'.repeat(22)})).images).to.have.length(8)
      const nine = await acct.store('POST', '/products', {body: {name: 'Mug', images: [...images, 'https://img.example/9.jpg']}})
      expect(expectError(nine, 400, 'too_many_items').param).to.equal('images')
      const long = await acct.store('POST', '/products', {body: {name: 'Mug', statement_descriptor: 'x'.repeat(23)}})
      expect(expectError(long, 400, 'string_too_long').param).to.equal('statement_descriptor')
    })

    it('accepts a storage path from POST /files as an image', async () => {
      const form = new FormData()
      form.append('file', new Blob([Buffer.from('png')], {type: 'image/png'}), 'mug.png')
      const file = await acct.store('POST', '/files', {rawBody: form})
      expect(file.status, file.text).to.equal(201)
      expect((await product({images: [file.body.path]})).images).to.deep.equal([file.body.path])
    })

    it('creates the product and its inline price atomically, with price or its synonym default_price', async () => {
      const a = await product({price: eur(1500)})
      expect(a.default_price).to.match(/^price_/)
      expect(a.prices).to.have.length(1)
      expect(a.prices[0]).to.include({id: a.default_price, unit_amount: 1500, currency: 'eur', type: 'one_time', active: true, product: a.id})
      const b = await product({default_price: eur(2000, {recurring: {interval: 'month'}})})
      expect(b.prices[0]).to.include({type: 'recurring', unit_amount: 2000})
      expect(b.prices[0].recurring).to.deep.equal({interval: 'month', interval_count: 1, trial_period_days: null, usage_type: 'licensed'})
    })

    it('rejects price and default_price together, and writes nothing for a rejected create', async () => {
      const fresh = await gw.account()
      const both = await fresh.store('POST', '/products', {body: {name: 'X', price: eur(500), default_price: eur(500)}})
      expect(expectError(both, 400, 'parameters_exclusive').param).to.equal('default_price')
      const tooSmall = await fresh.store('POST', '/products', {body: {name: 'X', price: eur(249)}})
      expect(expectError(tooSmall, 400, 'amount_too_small').param).to.equal('price[unit_amount]')
      expect((await fresh.store('GET', '/products')).body.data).to.deep.equal([])
    })

    it('serves no prices on the App API and prices on the store API, with option groups and variants on both', async () => {
      const p = await product({price: eur(700)})
      const viaApp = await acct.app('GET', `/products/${p.id}`)
      const viaStore = await acct.store('GET', `/products/${p.id}`)
      expect(viaApp.body).to.not.have.property('prices')
      expect(viaStore.body.prices).to.have.length(1)
      for (const res of [viaApp, viaStore]) {
        expect(res.body).to.include({id: p.id, default_price: p.default_price})
        expect(res.body.option_groups).to.deep.equal([])
        expect(res.body.variants[0].price).to.equal(p.default_price)
      }
      const appList = (await acct.app('GET', '/products?limit=100')).body.data
      const storeList = (await acct.store('GET', '/products?limit=100')).body.data
      expect(appList.find((x: {id: string}) => x.id === p.id)).to.not.have.property('prices')
      expect(storeList.find((x: {id: string}) => x.id === p.id).prices.map((x: {id: string}) => x.id)).to.deep.equal([p.default_price])
      // A list item is the product itself; one product additionally carries its options and variants.
      const {option_groups: _g, variants: _v, ...plain} = viaApp.body
      expect(appList.find((x: {id: string}) => x.id === p.id)).to.deep.equal(plain)
    })

    it('embeds prices, option groups and variants in a product list that asks with expand, on every door', async () => {
      const fresh = await gw.account()
      const sized = await product({name: 'Tee', price: eur(1500)}, fresh)
      await price(sized.id, eur(1800, {lookup_key: 'tee-xl'}), fresh)
      const group = (await fresh.store('POST', `/products/${sized.id}/options`, {body: {name: 'Size', values: ['S', 'M']}})).body
      for (const v of group.values) {
        const res = await fresh.store('POST', `/products/${sized.id}/variants`, {body: {sku: `tee-${v.value}`, options: [{group: group.id, value: v.id}], track_inventory: true, stock_qty: 3}})
        expect(res.status, res.text).to.equal(201)
      }
      const plain = await product({name: 'Sticker'}, fresh)
      const full = async (id: string) => (await fresh.store('GET', `/products/${id}`)).body
      const expected = [await full(plain.id), await full(sized.id)]

      // Repeated (OpenAPI's form) and Stripe's `expand[]`: each item is the product as retrieved alone, with its prices.
      for (const query of ['expand=data.prices&expand=data.option_groups&expand=data.variants', 'expand[]=data.prices&expand[]=data.option_groups&expand[]=data.variants']) {
        for (const call of [fresh.app, fresh.store, fresh.v1]) {
          const res = await call('GET', `/products?limit=100&${query}`)
          expect(res.status, res.text).to.equal(200)
          expect(res.body.data, query).to.deep.equal(expected)
        }
      }
      // Only what is asked: variants alone carry no option groups; no expand is the plain list (no prices on the App API).
      const variantsOnly = (await fresh.app('GET', '/products?expand=data.variants')).body.data[1]
      expect(variantsOnly.variants).to.deep.equal(expected[1].variants)
      expect(variantsOnly).to.not.have.property('option_groups')
      expect(variantsOnly).to.not.have.property('prices')
      const unexpanded = (await fresh.app('GET', '/products')).body.data[1]
      expect(Object.keys(unexpanded)).to.not.include.members(['prices', 'option_groups', 'variants'])
      // A page of the expanded list is a page of the list.
      const page = await fresh.app('GET', '/products?limit=1&offset=1&expand=data.prices')
      expect(page.body).to.include({has_more: false})
      expect(page.body.data.map((x: {id: string; prices: unknown[]}) => [x.id, x.prices.length])).to.deep.equal([[sized.id, 2]])
      // An expansion the list does not have is a 400 naming it, not silently nothing.
      expect(expectError(await fresh.app('GET', '/products?expand=data.customer'), 400).param).to.match(/^expand/)
      // Embedded prices need what /products/{id}/prices needs (products:read): a token without it reads neither.
      const storeOnly = await gw.installation(fresh.merchant.id, 'test', ['store:read'])
      for (const path of ['/products?expand=data.prices', `/products/${sized.id}/prices`]) {
        expectError(await gw.request('GET', `/v1/app${path}`, {token: storeOnly.token}), 403, 'insufficient_scope')
      }
    })

    it('shows stock in an expanded list as retrieving does, after a write changes it', async () => {
      const fresh = await gw.account()
      const p = await product({name: 'Cap', price: eur(900)}, fresh)
      const stocked = async () => (await fresh.app('GET', '/products?expand=data.variants')).body.data[0].variants[0]
      expect(await stocked()).to.include({track_inventory: false, stock_qty: null})
      const v = (await fresh.app('GET', `/products/${p.id}`)).body.variants[0]
      expect((await fresh.store('PATCH', `/variants/${v.id}`, {body: {track_inventory: true, stock_qty: 4}})).status).to.equal(200)
      expect(await stocked()).to.include({track_inventory: true, stock_qty: 4, stock_available: 4})
    })

    it('updates fields, keeps the listed document current, and merges metadata', async () => {
      const p = await product({metadata: {a: '1', b: '2'}})
      await gw.admin('POST', '/clock', {advance_seconds: 5})
      const res = await acct.app('PATCH', `/products/${p.id}`, {
        body: {name: 'Big Mug', description: null, tags: ['x', 'x', 'y'], store_visible: false, metadata: {a: '', c: '3'}},
      })
      expect(res.status, res.text).to.equal(200)
      expect(res.body).to.include({name: 'Big Mug', description: null, store_visible: false})
      expect(res.body.tags).to.deep.equal(['x', 'y'])
      expect(res.body.metadata).to.deep.equal({b: '2', c: '3'})
      expect(res.body.updated).to.be.greaterThan(p.updated)
      const listed = (await acct.app('GET', '/products?limit=100')).body.data.find((x: {id: string}) => x.id === p.id)
      expect(listed).to.include({name: 'Big Mug', store_visible: false, updated: res.body.updated})
      expect(res.body.variants[0].title).to.equal('Big Mug')
    })

    it('sets default_price_id to an active price of the same product only', async () => {
      const p = await product({price: eur(500)})
      const second = await price(p.id, eur(900))
      const set = await acct.app('PATCH', `/products/${p.id}`, {body: {default_price_id: second.id}})
      expect(set.body.default_price).to.equal(second.id)
      expect((await acct.app('GET', '/products?limit=100')).body.data.find((x: {id: string}) => x.id === p.id).default_price).to.equal(second.id)

      const other = await product({price: eur(500)})
      const foreign = await acct.app('PATCH', `/products/${p.id}`, {body: {default_price_id: other.default_price, name: 'Renamed'}})
      expect(expectError(foreign, 400, 'price_unavailable').param).to.equal('default_price_id')
      const archived = await price(p.id, eur(300, {active: false}))
      expectError(await acct.app('PATCH', `/products/${p.id}`, {body: {default_price_id: archived.id}}), 400, 'price_unavailable')
      expectError(await acct.app('PATCH', `/products/${p.id}`, {body: {default_price_id: 'price_nope'}}), 400, 'price_unavailable')
      // The rejected update changed nothing, not even the name sent alongside.
      expect((await acct.app('GET', `/products/${p.id}`)).body).to.include({name: 'Mug', default_price: second.id})
    })

    it('archives on DELETE with all its prices; the archived product still reads and can be reactivated', async () => {
      const p = await product({price: eur(500)})
      await price(p.id, eur(800))
      const del = await acct.store('DELETE', `/products/${p.id}`)
      expect(del.status).to.equal(200)
      expect(del.body).to.deep.equal({id: p.id, object: 'product', deleted: true, active: false})
      const after = await acct.store('GET', `/products/${p.id}`)
      expect(after.body.active).to.equal(false)
      expect(after.body.prices.map((x: {active: boolean}) => x.active)).to.deep.equal([false, false])
      expect((await acct.store('DELETE', `/products/${p.id}`)).status).to.equal(200)

      const back = await acct.store('PATCH', `/products/${p.id}`, {body: {active: true}})
      expect(back.body.active).to.equal(true)
      expect(back.body.prices.every((x: {active: boolean}) => !x.active)).to.equal(true)
    })

    it('archives through PATCH active false as DELETE does', async () => {
      const p = await product({price: eur(500)})
      const res = await acct.store('PATCH', `/products/${p.id}`, {body: {active: false}})
      expect(res.body.active).to.equal(false)
      expect(res.body.prices[0].active).to.equal(false)
    })

    it('answers unknown and foreign product ids with 404', async () => {
      expectError(await acct.app('GET', '/products/prod_nope'), 404, 'resource_missing')
      const other = await gw.account()
      const theirs = await product({}, other)
      expectError(await acct.app('GET', `/products/${theirs.id}`), 404, 'resource_missing')
      expectError(await acct.app('PATCH', `/products/${theirs.id}`, {body: {name: 'Mine'}}), 404, 'resource_missing')
      expectError(await acct.app('DELETE', `/products/${theirs.id}`), 404, 'resource_missing')
      const live = await gw.installation(acct.merchant.id, 'live')
      expectError(await gw.request('GET', `/v1/app/products/${theirs.id}`, {token: live.token}), 404)
    })
  })

  describe('prices', () => {
    it('validates amount, currency and recurrence, and derives type', async () => {
      const p = await product()
      expectError(await acct.store('POST', `/products/${p.id}/prices`, {body: eur(249)}), 400, 'amount_too_small')
      expect((await price(p.id, eur(250))).unit_amount).to.equal(250)
      expectError(await acct.store('POST', `/products/${p.id}/prices`, {body: eur(300.5)}), 400)
      expect(expectError(await acct.store('POST', `/products/${p.id}/prices`, {body: {currency: 'EUR', unit_amount: 300}}), 400).param).to.equal('currency')
      expectError(await acct.store('POST', `/products/${p.id}/prices`, {body: {currency: 'xyz', unit_amount: 300}}), 400, 'currency_unsupported')
      const weekly = await price(p.id, eur(300, {recurring: {interval: 'week', interval_count: 52, trial_period_days: 7, usage_type: 'metered'}}))
      expect(weekly).to.include({type: 'recurring'})
      expect(weekly.recurring).to.deep.equal({interval: 'week', interval_count: 52, trial_period_days: 7, usage_type: 'metered'})
      const tooLong = await acct.store('POST', `/products/${p.id}/prices`, {body: eur(300, {recurring: {interval: 'month', interval_count: 13}})})
      expect(expectError(tooLong, 400).param).to.equal('recurring[interval_count]')
      expectError(await acct.store('POST', `/products/${p.id}/prices`, {body: eur(300, {type: 'one_time'})}), 400, 'parameter_unknown')
      expectError(await acct.store('POST', '/products/prod_nope/prices', {body: eur(300)}), 404)
    })

    it("makes a product's first price its default, and set_as_default moves it", async () => {
      const p = await product()
      const first = await price(p.id, eur(500))
      expect((await acct.app('GET', `/products/${p.id}`)).body.default_price).to.equal(first.id)
      const second = await price(p.id, eur(700))
      expect((await acct.app('GET', `/products/${p.id}`)).body.default_price).to.equal(first.id)
      const third = await price(p.id, eur(900, {set_as_default: true}))
      expect((await acct.app('GET', `/products/${p.id}`)).body.default_price).to.equal(third.id)
      expect(second.id).to.not.equal(third.id)
      expectError(await acct.store('POST', `/products/${p.id}/prices`, {body: eur(900, {set_as_default: true, active: false})}), 400, 'parameters_exclusive')
    })

    it('lists prices newest first with has_more and offset', async () => {
      const p = await product()
      const ids = []
      for (const amount of [300, 400, 500]) ids.push((await price(p.id, eur(amount))).id)
      const page1 = await acct.app('GET', `/products/${p.id}/prices?limit=2`)
      expect(page1.body).to.include({object: 'list', has_more: true})
      expect(page1.body.data.map((x: {id: string}) => x.id)).to.deep.equal([ids[2], ids[1]])
      const page2 = await acct.app('GET', `/products/${p.id}/prices?limit=2&offset=2`)
      expect(page2.body.has_more).to.equal(false)
      expect(page2.body.data.map((x: {id: string}) => x.id)).to.deep.equal([ids[0]])
    })

    it('updates only the mutable fields; the others are 400 price_immutable naming the field', async () => {
      const p = await product({price: eur(500)})
      const path = `/products/${p.id}/prices/${p.default_price}`
      const res = await acct.store('PATCH', path, {body: {nickname: 'Standard', tax_behavior: 'inclusive', lookup_key: 'std', metadata: {k: 'v'}}})
      expect(res.status, res.text).to.equal(200)
      expect(res.body).to.include({nickname: 'Standard', tax_behavior: 'inclusive', lookup_key: 'std', unit_amount: 500})
      for (const [field, value] of [
        ['unit_amount', 600],
        ['currency', 'usd'],
        ['recurring', {interval: 'month'}],
        ['type', 'recurring'],
      ] as const) {
        const err = expectError(await acct.store('PATCH', path, {body: {nickname: 'x', [field]: value}}), 400, 'price_immutable')
        expect(err.param).to.equal(field)
      }
      expect((await acct.store('GET', `/products/${p.id}/prices`)).body.data[0]).to.include({nickname: 'Standard', unit_amount: 500})
      expectError(await acct.store('PATCH', `/products/${p.id}/prices/price_nope`, {body: {nickname: 'x'}}), 404)
      const other = await product({price: eur(500)})
      expectError(await acct.store('PATCH', `/products/${p.id}/prices/${other.default_price}`, {body: {nickname: 'x'}}), 404)
    })

    it('refuses to archive the default price, archives any other, and reactivates', async () => {
      const p = await product({price: eur(500)})
      const other = await price(p.id, eur(800))
      const err = expectError(await acct.store('PATCH', `/products/${p.id}/prices/${p.default_price}`, {body: {active: false}}), 400, 'price_is_default')
      expect(err.param).to.equal('active')
      expect((await acct.store('PATCH', `/products/${p.id}/prices/${other.id}`, {body: {active: false}})).body.active).to.equal(false)
      expect((await acct.store('PATCH', `/products/${p.id}/prices/${other.id}`, {body: {active: true}})).body.active).to.equal(true)
    })

    it('refuses new or reactivated prices on an archived product until it is reactivated', async () => {
      const p = await product({price: eur(500)})
      await acct.store('DELETE', `/products/${p.id}`)
      expectError(await acct.store('POST', `/products/${p.id}/prices`, {body: eur(600)}), 409, 'product_archived')
      expectError(await acct.store('PATCH', `/products/${p.id}/prices/${p.default_price}`, {body: {active: true}}), 409, 'product_archived')
      await acct.store('PATCH', `/products/${p.id}`, {body: {active: true}})
      const fresh = await price(p.id, eur(600))
      // The old default is archived, so the first active price becomes the default again.
      expect((await acct.store('GET', `/products/${p.id}`)).body.default_price).to.equal(fresh.id)
    })
  })

  describe('lists and requests', () => {
    it('lists products newest first with has_more and offset, and bounds limit to 1..100', async () => {
      const fresh = await gw.account()
      const ids = []
      for (const name of ['A', 'B', 'C']) ids.push((await product({name}, fresh)).id)
      const page1 = await fresh.app('GET', '/products?limit=2')
      expect(page1.status).to.equal(200)
      expect(page1.body).to.include({object: 'list', has_more: true})
      expect(page1.body.data.map((x: {id: string}) => x.id)).to.deep.equal([ids[2], ids[1]])
      const page2 = await fresh.store('GET', '/products?limit=2&offset=2')
      expect(page2.body).to.include({has_more: false})
      expect(page2.body.data.map((x: {id: string}) => x.id)).to.deep.equal([ids[0]])
      expect(expectError(await fresh.app('GET', '/products?limit=0'), 400).param).to.equal('limit')
      expect(expectError(await fresh.store('GET', '/products?limit=101'), 400).param).to.equal('limit')
      expect((await fresh.app('GET', '/products?limit=100&colour=red')).body.data).to.have.length(3)
    })

    it('rejects malformed JSON, non-object bodies, other content types and oversize bodies with a code', async () => {
      const json = {'content-type': 'application/json'}
      expectError(await acct.store('POST', '/products', {rawBody: '{"name": ', headers: json}), 400, 'invalid_json')
      expectError(await acct.store('POST', '/products', {rawBody: '[{"name": "x"}]', headers: json}), 400, 'invalid_body')
      expectError(await acct.store('POST', '/products', {rawBody: 'name=x', headers: {'content-type': 'application/x-www-form-urlencoded'}}), 400, 'unsupported_content_type')
      expectError(await acct.store('POST', '/products', {rawBody: 'name=x', headers: {'content-type': 'text/plain'}}), 400, 'invalid_body')
      const huge = JSON.stringify({name: 'x', description: 'y'.repeat(1024 * 1024)})
      expectError(await acct.store('POST', '/products', {rawBody: huge, headers: json}), 400, 'body_too_large')
      expect(expectError(await acct.store('POST', '/products', {body: {}}), 400, 'parameter_missing').param).to.equal('name')
      expect(expectError(await acct.store('POST', '/products', {body: {name: 'x', colour: 'red'}}), 400, 'parameter_unknown').param).to.equal('colour')
    })

    it('replays an idempotent create and rejects the key with another body', async () => {
      const fresh = await gw.account()
      const first = await fresh.store('POST', '/products', {body: {name: 'Once'}, idempotencyKey: 'create-once'})
      const again = await fresh.store('POST', '/products', {body: {name: 'Once'}, idempotencyKey: 'create-once'})
      expect(first.status).to.equal(201)
      expect(again.status).to.equal(201)
      expect(again.body.id).to.equal(first.body.id)
      expect(again.headers.get('idempotent-replayed')).to.equal('true')
      const reused = await fresh.store('POST', '/products', {body: {name: 'Twice'}, idempotencyKey: 'create-once'})
      expectError(reused, 409, 'idempotency_key_reused')
      expect((await fresh.store('GET', '/products')).body.data).to.have.length(1)
    })

    it('never creates two products from concurrent requests with one key', async () => {
      const fresh = await gw.account()
      const results = await Promise.all(
        Array.from({length: 10}, () => fresh.store('POST', '/products', {body: {name: 'Race', price: eur(500)}, idempotencyKey: 'race-key'})),
      )
      const ok = results.filter((r) => r.status === 201)
      expect(ok.length).to.be.greaterThan(0)
      expect(new Set(ok.map((r) => r.body.id)).size).to.equal(1)
      for (const r of results.filter((x) => x.status !== 201)) expectError(r, 409, 'idempotency_in_flight')
      const listed = (await fresh.store('GET', '/products')).body.data
      expect(listed).to.have.length(1)
      expect(listed[0].prices).to.have.length(1)
    })

    it('keeps live and test catalogues apart, and a sandbox reset wipes only test', async () => {
      const m = await gw.merchant()
      const test = await gw.secretKey(m.id, 'test')
      const live = await gw.secretKey(m.id, 'live')
      const make = (token: string, name: string) => gw.request('POST', '/v1/store/products', {token, body: {name, price: eur(500)}})
      const t = await make(test.secret_key, 'Test mug')
      const l = await make(live.secret_key, 'Live mug')
      expect(t.body.livemode).to.equal(false)
      expect(l.body.livemode).to.equal(true)
      expectError(await gw.request('GET', `/v1/store/products/${l.body.id}`, {token: test.secret_key}), 404)
      expectError(await gw.request('GET', `/v1/store/products/${t.body.id}`, {token: live.secret_key}), 404)

      expect((await gw.admin('POST', '/sandbox/reset', {merchant: m.id})).status).to.equal(200)
      expect((await gw.request('GET', '/v1/store/products', {token: test.secret_key})).body.data).to.deep.equal([])
      expectError(await gw.request('GET', `/v1/store/products/${t.body.id}`, {token: test.secret_key}), 404)
      const liveList = (await gw.request('GET', '/v1/store/products', {token: live.secret_key})).body.data
      expect(liveList.map((x: {id: string}) => x.id)).to.deep.equal([l.body.id])
      expect(liveList[0].prices).to.have.length(1)
    })

    it('records product and price changes as events', async () => {
      const fresh = await gw.account()
      const p = await product({price: eur(500)}, fresh)
      await fresh.store('PATCH', `/products/${p.id}`, {body: {name: 'New'}})
      const events = (await gw.admin('GET', `/events?merchant=${fresh.merchant.id}&env=test`)).body.data as Array<{type: string; data: {object: {id: string}}}>
      const types = events.map((e) => e.type).reverse()
      expect(types).to.include.members(['product.created', 'price.created', 'product.updated'])
      expect(events.find((e) => e.type === 'product.created')!.data.object.id).to.equal(p.id)
    })
  })
})
