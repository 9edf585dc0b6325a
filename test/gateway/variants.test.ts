import {expect} from 'chai'

import {expectError, TestGateway, type Account} from '../helpers/gateway.js'


interface Group {
  id: string
  name: string
  values: Array<{id: string; value: string; sort_order: number}>
}

describe('gateway catalogue: option groups, values and variants', () => {
  let gw: TestGateway
  let acct: Account
  before(async () => {
    gw = await TestGateway.start()
    acct = await gw.account()
  })
  after(() => gw.close())

  async function ok(res: Promise<{status: number; text: string; body: any}>, status = 200) {
    const r = await res
    expect(r.status, r.text).to.equal(status)
    return r.body
  }

  /** A T-shirt with a default price, Size S/M/L and Color Red/Blue. */
  async function shirt(who: Account = acct) {
    const product = await ok(who.store('POST', '/products', {body: {name: 'Tee', price: {currency: 'eur', unit_amount: 2500}}}), 201)
    const size: Group = await ok(who.store('POST', `/products/${product.id}/options`, {body: {name: 'Size', values: ['S', 'M', 'L']}}), 201)
    const color: Group = await ok(who.store('POST', `/products/${product.id}/options`, {body: {name: 'Color', values: ['Red', 'Blue']}}), 201)
    const pick = (s: string, c: string) => [
      {group: size.id, value: size.values.find((v) => v.value === s)!.id},
      {group: color.id, value: color.values.find((v) => v.value === c)!.id},
    ]
    const variant = (body: Record<string, unknown>) => who.store('POST', `/products/${product.id}/variants`, {body})
    return {product, size, color, pick, variant}
  }

  describe('option groups and values', () => {
    it('creates a group whose values are uuids in sort order 0..n-1', async () => {
      const {product, size} = await shirt()
      expect(size).to.include({object: 'option_group', name: 'Size', product: product.id})
      expect(size.id).to.match(/^[0-9a-f-]{36}$/)
      expect(size.values.map((v) => [v.value, v.sort_order])).to.deep.equal([
        ['S', 0],
        ['M', 1],
        ['L', 2],
      ])
      for (const v of size.values) expect(v).to.include({object: 'option_value'}).and.have.property('id').match(/^[0-9a-f-]{36}$/)
      const listed = await ok(acct.app('GET', `/products/${product.id}/options`))
      expect(listed.data.map((g: Group) => g.name)).to.deep.equal(['Color', 'Size'])
      const full = await ok(acct.app('GET', `/products/${product.id}`))
      expect(full.option_groups.map((g: Group) => g.name)).to.deep.equal(['Size', 'Color'])
    })

    it('rejects duplicate values and duplicate group names', async () => {
      const {product, size} = await shirt()
      expectError(await acct.store('POST', `/products/${product.id}/options`, {body: {name: 'Fit', values: ['Slim', 'slim']}}), 400)
      expectError(await acct.store('POST', `/products/${product.id}/options`, {body: {name: 'size', values: ['XL']}}), 409, 'option_exists')
      expectError(await acct.store('POST', `/products/${product.id}/options`, {body: {name: 'Fit', values: []}}), 400, 'too_few_items')
      expectError(await acct.store('PATCH', `/options/${size.id}`, {body: {name: 'Color'}}), 409, 'option_exists')
    })

    it('renames a group', async () => {
      const {size} = await shirt()
      expect((await ok(acct.store('PATCH', `/options/${size.id}`, {body: {name: 'Sizes'}}))).name).to.equal('Sizes')
      expectError(await acct.store('PATCH', '/options/00000000-0000-0000-0000-000000000000', {body: {name: 'X'}}), 404)
    })

    it('adds a value last by default or at a given sort_order, and rejects a duplicate with 409 value_exists', async () => {
      const {size} = await shirt()
      const withXl: Group = await ok(acct.store('POST', `/options/${size.id}/values`, {body: {value: 'XL'}}), 201)
      expect(withXl.values.map((v) => [v.value, v.sort_order])).to.deep.equal([
        ['S', 0],
        ['M', 1],
        ['L', 2],
        ['XL', 3],
      ])
      const withXs: Group = await ok(acct.store('POST', `/options/${size.id}/values`, {body: {value: 'XS', sort_order: -1}}), 201)
      expect(withXs.values[0]).to.include({value: 'XS', sort_order: -1})
      const dup = expectError(await acct.store('POST', `/options/${size.id}/values`, {body: {value: 'm'}}), 409, 'value_exists')
      expect(dup.param).to.equal('value')
    })

    it('deletes a value unless a variant uses it (409 value_in_use)', async () => {
      const {size, pick, variant} = await shirt()
      const v = await ok(variant({options: pick('M', 'Red')}), 201)
      const medium = size.values.find((x) => x.value === 'M')!
      expectError(await acct.store('DELETE', `/values/${medium.id}`), 409, 'value_in_use')
      const small = size.values.find((x) => x.value === 'S')!
      expect(await ok(acct.store('DELETE', `/values/${small.id}`))).to.deep.equal({id: small.id, object: 'option_value', deleted: true})
      await ok(acct.store('DELETE', `/variants/${v.id}`))
      await ok(acct.store('DELETE', `/values/${medium.id}`))
      const after: Group[] = (await ok(acct.app('GET', `/products/${v.product}`))).option_groups
      expect(after.find((g) => g.id === size.id)!.values.map((x) => x.value)).to.deep.equal(['L'])
      expectError(await acct.store('DELETE', `/values/${small.id}`), 404)
    })

    it('refuses to add or delete a group while the product has variants besides its default (409 variants_exist)', async () => {
      const {product, size, pick, variant} = await shirt()
      const v = await ok(variant({options: pick('S', 'Red')}), 201)
      expectError(await acct.store('POST', `/products/${product.id}/options`, {body: {name: 'Fit', values: ['Slim']}}), 409, 'variants_exist')
      expectError(await acct.store('DELETE', `/options/${size.id}`), 409, 'variants_exist')
      await ok(acct.store('DELETE', `/variants/${v.id}`))
      expect(await ok(acct.store('DELETE', `/options/${size.id}`))).to.deep.equal({id: size.id, object: 'option_group', deleted: true})
      expectError(await acct.store('DELETE', `/values/${size.values[0].id}`), 404)
      await ok(acct.store('POST', `/products/${product.id}/options`, {body: {name: 'Fit', values: ['Slim']}}), 201)
    })
  })

  describe('variants', () => {
    it('creates a variant with one value per group, named in its title and options', async () => {
      const {product, pick, variant} = await shirt()
      const v = await ok(variant({options: pick('M', 'Red'), sku: 'TEE-M-RED'}), 201)
      expect(v).to.include({object: 'variant', product: product.id, is_default: false, title: 'M / Red', sku: 'TEE-M-RED', livemode: false})
      expect(v.options.map((o: {group_name: string; value_name: string}) => `${o.group_name}=${o.value_name}`)).to.deep.equal(['Size=M', 'Color=Red'])
      expect(v.id).to.match(/^[0-9a-f-]{36}$/)
      // Sent in the other order, the combination is still stored in the product's group order.
      const reversed = await ok(variant({options: pick('L', 'Blue').reverse()}), 201)
      expect(reversed.title).to.equal('L / Blue')
    })

    it('rule 1: a missing, extra or repeated group is 400 invalid_options', async () => {
      const {pick, variant, size} = await shirt()
      const [s, c] = pick('S', 'Red')
      for (const options of [[s], [], [s, c, {group: '00000000-0000-0000-0000-000000000000', value: s.value}], [s, s, c]]) {
        const err = expectError(await variant({options}), 400, 'invalid_options')
        expect(err.param).to.equal('options')
      }
      expect(size.values).to.have.length(3)
    })

    it('rule 2: a value of another group is 400 invalid_options', async () => {
      const {pick, variant} = await shirt()
      const [s, c] = pick('S', 'Red')
      expectError(await variant({options: [{group: s.group, value: c.value}, {group: c.group, value: s.value}]}), 400, 'invalid_options')
      const other = await shirt()
      expectError(await variant({options: other.pick('S', 'Red')}), 400, 'invalid_options')
    })

    it('creates each variant against the options as they are now: a value added, renamed group or deleted value since the last create', async () => {
      const {size, color, pick, variant} = await shirt()
      await ok(variant({options: pick('S', 'Red')}), 201)
      // A value added after a variant create is one the next create may name.
      const xl = (await ok(acct.store('POST', `/options/${size.id}/values`, {body: {value: 'XL'}}), 201)).values.find((v: {value: string}) => v.value === 'XL')
      const red = color.values.find((v) => v.value === 'Red')!
      const withXl = await ok(
        variant({
          options: [
            {group: size.id, value: xl.id},
            {group: color.id, value: red.id},
          ],
        }),
        201,
      )
      expect(withXl.options.map((o: {value_name: string}) => o.value_name)).to.deep.equal(['XL', 'Red'])
      // A renamed group is named anew in the next create's answer.
      await ok(acct.store('PATCH', `/options/${color.id}`, {body: {name: 'Colour'}}))
      const renamed = await ok(variant({options: pick('M', 'Red')}), 201)
      expect(renamed.options.map((o: {group_name: string}) => o.group_name)).to.deep.equal(['Size', 'Colour'])
      // A deleted value is no value of its group any more.
      const blue = color.values.find((v) => v.value === 'Blue')!
      await ok(acct.store('DELETE', `/values/${blue.id}`))
      expectError(await variant({options: pick('L', 'Blue')}), 400, 'invalid_options')
    })

    it('rule 3: the same combination twice is 409 variant_exists', async () => {
      const {pick, variant} = await shirt()
      await ok(variant({options: pick('S', 'Blue')}), 201)
      expectError(await variant({options: pick('S', 'Blue')}), 409, 'variant_exists')
      const plain = await ok(acct.store('POST', '/products', {body: {name: 'Plain'}}), 201)
      expectError(await acct.store('POST', `/products/${plain.id}/variants`, {body: {options: []}}), 409, 'variant_exists')
    })

    it("rule 4: an explicit price must be an active price of the product; omitted, the variant follows the product's default", async () => {
      const {product, pick, variant} = await shirt()
      const inherits = await ok(variant({options: pick('S', 'Red')}), 201)
      expect(inherits).to.include({price: product.default_price, price_inherited: true})
      const own = await ok(acct.store('POST', `/products/${product.id}/prices`, {body: {currency: 'eur', unit_amount: 2900}}), 201)
      const explicit = await ok(variant({options: pick('L', 'Red'), price: own.id}), 201)
      expect(explicit).to.include({price: own.id, price_inherited: false})

      const newDefault = await ok(acct.store('POST', `/products/${product.id}/prices`, {body: {currency: 'eur', unit_amount: 2700, set_as_default: true}}), 201)
      const variants = (await ok(acct.app('GET', `/products/${product.id}/variants`))).data
      expect(variants.find((v: {id: string}) => v.id === inherits.id)).to.include({price: newDefault.id, price_inherited: true})
      expect(variants.find((v: {id: string}) => v.id === explicit.id)).to.include({price: own.id})

      const foreign = await ok(acct.store('POST', '/products', {body: {name: 'Other', price: {currency: 'eur', unit_amount: 500}}}), 201)
      const archived = await ok(acct.store('POST', `/products/${product.id}/prices`, {body: {currency: 'eur', unit_amount: 500, active: false}}), 201)
      for (const price of [foreign.default_price, archived.id, 'price_nope']) {
        const err = expectError(await variant({options: pick('M', 'Blue'), price}), 400, 'price_unavailable')
        expect(err.param).to.equal('price')
      }
      // price: null on update returns the variant to inheriting.
      const reset = await ok(acct.store('PATCH', `/variants/${explicit.id}`, {body: {price: null}}))
      expect(reset).to.include({price: newDefault.id, price_inherited: true})
    })

    it('rule 5: stock_qty is required when track_inventory is true, on create and on update', async () => {
      const {pick, variant} = await shirt()
      expect(expectError(await variant({options: pick('S', 'Red'), track_inventory: true}), 400, 'stock_qty_required').param).to.equal('stock_qty')
      const tracked = await ok(variant({options: pick('S', 'Red'), track_inventory: true, stock_qty: 5}), 201)
      expect(tracked).to.include({track_inventory: true, stock_qty: 5, stock_reserved: 0, stock_available: 5})
      const untracked = await ok(variant({options: pick('M', 'Red')}), 201)
      expect(untracked).to.include({track_inventory: false, stock_qty: null, stock_available: null})
      const turnOn = expectError(await acct.store('PATCH', `/variants/${untracked.id}`, {body: {track_inventory: true}}), 400, 'stock_qty_required')
      expect(turnOn.param).to.equal('stock_qty')
      const on = await ok(acct.store('PATCH', `/variants/${untracked.id}`, {body: {track_inventory: true, stock_qty: 0}}))
      expect(on).to.include({stock_qty: 0, stock_available: 0})
      expect((await ok(acct.store('PATCH', `/variants/${tracked.id}`, {body: {stock_qty: 12}}))).stock_available).to.equal(12)
    })

    it('counts units held by open checkouts: stock_qty cannot drop below them, and they return at expiry', async () => {
      const {product, pick, variant} = await shirt()
      const v = await ok(variant({options: pick('S', 'Red'), track_inventory: true, stock_qty: 5}), 201)
      await ok(acct.store('POST', '/checkouts', {body: {product_id: product.id, variant_id: v.id, quantity: 3}}), 201)
      const held = (await ok(acct.app('GET', `/products/${product.id}/variants`))).data.find((x: {id: string}) => x.id === v.id)
      expect(held).to.include({stock_qty: 5, stock_reserved: 3, stock_available: 2})
      const err = expectError(await acct.store('PATCH', `/variants/${v.id}`, {body: {stock_qty: 2}}), 400, 'stock_below_reserved')
      expect(err.param).to.equal('stock_qty')
      expect((await ok(acct.store('PATCH', `/variants/${v.id}`, {body: {stock_qty: 3}}))).stock_available).to.equal(0)
      await gw.admin('POST', '/clock', {advance_seconds: 31 * 60})
      const released = (await ok(acct.app('GET', `/products/${product.id}/variants`))).data.find((x: {id: string}) => x.id === v.id)
      expect(released).to.include({stock_qty: 3, stock_reserved: 0, stock_available: 3})
    })

    it('rule 6: the option combination is immutable (400 options_immutable)', async () => {
      const {pick, variant} = await shirt()
      const v = await ok(variant({options: pick('S', 'Red')}), 201)
      const err = expectError(await acct.store('PATCH', `/variants/${v.id}`, {body: {options: pick('M', 'Red'), title: 'x'}}), 400, 'options_immutable')
      expect(err.param).to.equal('options')
      expect((await ok(acct.app('GET', `/products/${v.product}`))).variants.find((x: {id: string}) => x.id === v.id).title).to.equal('S / Red')
    })

    it('rule 7: the default variant exists, is listed and flagged, can be updated but not deleted', async () => {
      const {product, pick, variant} = await shirt()
      const v = await ok(variant({options: pick('S', 'Red')}), 201)
      const list = await ok(acct.app('GET', `/products/${product.id}/variants`))
      expect(list.data.map((x: {id: string}) => x.id)[0]).to.equal(v.id)
      const def = list.data.find((x: {is_default: boolean}) => x.is_default)
      expect(def).to.include({title: 'Tee', price: product.default_price, price_inherited: true})
      expect(def.options).to.deep.equal([])
      expectError(await acct.store('DELETE', `/variants/${def.id}`), 409, 'default_variant')
      const stocked = await ok(acct.store('PATCH', `/variants/${def.id}`, {body: {track_inventory: true, stock_qty: 3, sku: 'TEE'}}))
      expect(stocked).to.include({is_default: true, stock_available: 3, sku: 'TEE'})
      expect(await ok(acct.store('DELETE', `/variants/${v.id}`))).to.deep.equal({id: v.id, object: 'variant', deleted: true})
      expectError(await acct.store('DELETE', `/variants/${v.id}`), 404)
    })

    it('keeps SKUs unique within a merchant environment (409 sku_exists)', async () => {
      const a = await shirt()
      const b = await shirt()
      const first = await ok(a.variant({options: a.pick('S', 'Red'), sku: 'SKU-1'}), 201)
      expect(expectError(await b.variant({options: b.pick('S', 'Red'), sku: 'SKU-1'}), 409, 'sku_exists').param).to.equal('sku')
      const second = await ok(b.variant({options: b.pick('S', 'Red'), sku: 'SKU-2'}), 201)
      expectError(await acct.store('PATCH', `/variants/${second.id}`, {body: {sku: 'SKU-1'}}), 409, 'sku_exists')
      expect((await ok(acct.store('PATCH', `/variants/${first.id}`, {body: {sku: 'SKU-1', title: 'Same SKU kept'}}))).sku).to.equal('SKU-1')
      // Another merchant may use the same SKU.
      const other = await gw.account()
      const o = await shirt(other)
      await ok(o.variant({options: o.pick('S', 'Red'), sku: 'SKU-1'}), 201)
    })

    it('bounds the presentation fields at the spec limits', async () => {
      const {pick, variant} = await shirt()
      const v = await ok(
        variant({
          options: pick('S', 'Red'),
          title: 't'.repeat(80),
          description: 'd'.repeat(2000),
          image_path: 'files/' + 'p'.repeat(294),
          features: [...Array.from({length: 12}, (_, i) => `${i}`.padEnd(120, 'f')), '0'.padEnd(120, 'f')],
          delivery_days: 3650,
          revisions: 0,
          highlight: true,
          sort_order: 7,
        }),
        201,
      )
      expect(v.title).to.have.length(80)
      expect(v.image_path).to.have.length(300)
      expect(v.features).to.have.length(12)
      expect(v).to.include({delivery_days: 3650, revisions: 0, highlight: true, sort_order: 7})
      const over: Array<[string, unknown, string]> = [
        ['title', 't'.repeat(81), 'string_too_long'],
        ['description', 'd'.repeat(2001), 'string_too_long'],
        ['image_path', 'files/' + 'p'.repeat(295), 'string_too_long'],
        ['features', Array.from({length: 13}, (_, i) => `f${i}`), 'too_many_items'],
        ['features', ['f'.repeat(121)], 'string_too_long'],
        ['delivery_days', 3651, 'number_too_large'],
        ['delivery_days', -1, 'number_too_small'],
        ['revisions', 3651, 'number_too_large'],
      ]
      for (const [field, value, code] of over) {
        const err = expectError(await acct.store('PATCH', `/variants/${v.id}`, {body: {[field]: value}}), 400, code)
        expect(err.param, field).to.match(new RegExp(`^${field}`))
      }
      const cleared = await ok(acct.store('PATCH', `/variants/${v.id}`, {body: {title: null, image_path: null, delivery_days: null}}))
      expect(cleared).to.include({title: 'S / Red', image_path: null, delivery_days: null})
    })

    it('orders variants by sort_order in the product and newest first in the list', async () => {
      const {product, pick, variant} = await shirt()
      const a = await ok(variant({options: pick('S', 'Red')}), 201)
      const b = await ok(variant({options: pick('M', 'Red'), sort_order: -5}), 201)
      expect(a.sort_order).to.equal(1)
      const full = await ok(acct.app('GET', `/products/${product.id}`))
      expect(full.variants.map((v: {id: string}) => v.id)).to.deep.equal([b.id, full.variants[1].id, a.id])
      expect(full.variants[1].is_default).to.equal(true)
      const page = await ok(acct.app('GET', `/products/${product.id}/variants?limit=1&offset=1`))
      expect(page).to.include({has_more: true})
      expect(page.data.map((v: {id: string}) => v.id)).to.deep.equal([a.id])
    })

    it('keeps live and test variants apart (404 across environments)', async () => {
      const m = await gw.merchant()
      const live = await gw.installation(m.id, 'live')
      const test = await gw.installation(m.id, 'test')
      const product = await ok(gw.request('POST', '/v1/app/products', {token: live.token, body: {name: 'Live tee'}}), 201)
      const group = await ok(gw.request('POST', `/v1/app/products/${product.id}/options`, {token: live.token, body: {name: 'Size', values: ['S']}}), 201)
      const v = await ok(
        gw.request('POST', `/v1/app/products/${product.id}/variants`, {token: live.token, body: {options: [{group: group.id, value: group.values[0].id}]}}),
        201,
      )
      expect(v.livemode).to.equal(true)
      expectError(await gw.request('PATCH', `/v1/app/variants/${v.id}`, {token: test.token, body: {title: 'x'}}), 404)
      expectError(await gw.request('DELETE', `/v1/app/variants/${v.id}`, {token: test.token}), 404)
      expectError(await gw.request('GET', `/v1/app/products/${product.id}/variants`, {token: test.token}), 404)
      expectError(await gw.request('PATCH', `/v1/app/options/${group.id}`, {token: test.token, body: {name: 'x'}}), 404)
      expectError(await gw.request('DELETE', `/v1/app/values/${group.values[0].id}`, {token: test.token}), 404)
      expect((await ok(gw.request('PATCH', `/v1/app/variants/${v.id}`, {token: live.token, body: {title: 'Live S'}}))).title).to.equal('Live S')
    })
  })

  describe('seed', () => {
    it('seeds a sample catalogue in both environments', async () => {
      const seeded = await TestGateway.start({seed: true})
      try {
        const seed = seeded.gw.seed!
        for (const env of ['test', 'live'] as const) {
          const token = seed.secret_keys[env].secret_key
          const products = (await seeded.request('GET', '/v1/store/products', {token})).body.data as Array<Record<string, any>>
          expect(products.map((p) => p.name).sort()).to.deep.equal(['Ceramic Mug', 'Classic T-Shirt', 'Pro Plan', 'Sticker Pack'])
          expect(products.some((p) => p.prices.some((x: {type: string}) => x.type === 'recurring'))).to.equal(true)
          expect(new Set(products.map((p) => p.store_visible))).to.deep.equal(new Set([true, false]))
          const mug = products.find((p) => p.name === 'Ceramic Mug')!
          expect(mug.images).to.have.length(2)
          expect(mug.package_dimensions).to.not.equal(null)
          const tee = (await seeded.request('GET', `/v1/store/products/${products.find((p) => p.name === 'Classic T-Shirt')!.id}`, {token})).body
          expect(tee.option_groups.map((g: Group) => `${g.name}:${g.values.map((v) => v.value).join('/')}`)).to.deep.equal(['Size:S/M/L', 'Color:Red/Blue'])
          expect(tee.variants.filter((v: {is_default: boolean}) => !v.is_default)).to.have.length(4)
          expect(tee.variants.find((v: {track_inventory: boolean}) => v.track_inventory)).to.include({title: 'M / Blue', stock_available: 5, sku: 'TSHIRT-M-BLUE'})
          expect(tee.variants.find((v: {price_inherited: boolean}) => !v.price_inherited)).to.include({title: 'L / Blue'})
        }
      } finally {
        await seeded.close()
      }
    })
  })
})
