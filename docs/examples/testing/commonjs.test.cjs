// CommonJS (Jest's default, or any suite that uses require): the same with require('payapp/testing').
const assert = require('node:assert/strict')
const {after, before, test} = require('node:test')

const {startGateway} = require('payapp/testing')

let gw
before(async () => {
  gw = await startGateway()
})
after(() => gw.close())

test('a secret key sells a mug and the buyer pays', async () => {
  const {client: store} = await gw.secretKey()
  const mug = await store.products.create({name: 'Mug', price: {currency: 'eur', unit_amount: 1200}})
  const checkout = await store.checkouts.create({product_id: mug.id, quantity: 2})
  await gw.admin.checkouts.complete(checkout.session_id)
  assert.equal((await store.orders.list()).data[0].amount, 2400)
})
