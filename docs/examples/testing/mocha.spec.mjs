// mocha: one gateway per file, started in-process in before() and closed in after().
import assert from 'node:assert/strict'

import {startGateway} from 'payapp/testing'

describe('my app against the local gateway (mocha)', function () {
  let gw
  before(async () => {
    gw = await startGateway()
  })
  after(() => gw.close())

  it('sells a mug and sees the order', async () => {
    const {client: store} = await gw.secretKey()
    const mug = await store.products.create({name: 'Mug', price: {currency: 'eur', unit_amount: 1200}})
    const checkout = await store.checkouts.create({product_id: mug.id, quantity: 2})
    await gw.admin.checkouts.complete(checkout.session_id) // the buyer pays
    const orders = await store.orders.list()
    assert.equal(orders.data[0].checkout_session, checkout.session_id)
    assert.equal(orders.data[0].amount, 2400)
  })

  it('expires an unpaid checkout when the clock moves 31 minutes', async () => {
    const {client: store} = await gw.secretKey()
    const mug = await store.products.create({name: 'Mug', price: {currency: 'eur', unit_amount: 1200}})
    const checkout = await store.checkouts.create({product_id: mug.id})
    await gw.clock.advance(31 * 60)
    // Expiry is lazy: the next read of the catalogue or the session applies it.
    const product = await store.products.retrieve(mug.id)
    assert.equal(product.variants[0].stock_reserved, 0)
    const events = await gw.admin.events.list({merchant: (await gw.defaultMerchant()).id, env: 'test', type: 'checkout.session.expired'})
    assert.equal(events.data[0].data.object.id, checkout.session_id)
  })
})
