// node:test: the same, with the built-in runner (`node --test`).
import assert from 'node:assert/strict'
import {after, before, test} from 'node:test'

import {startGateway} from 'payapp/testing'

let gw
before(async () => {
  gw = await startGateway()
})
after(() => gw.close())

test('an installation reads the catalogue the secret key wrote', async () => {
  const {client: store} = await gw.secretKey()
  const {client: app} = await gw.installation({scopes: ['products:read']})
  await store.products.create({name: 'Tote', price: {currency: 'eur', unit_amount: 3900}})
  const products = await app.products.list()
  assert.deepEqual(products.data.map((p) => p.name), ['Tote'])
})

test('a missing scope is a typed 403', async () => {
  const {client: app} = await gw.installation({scopes: ['products:read']})
  await assert.rejects(app.orders.list(), (error) => error.statusCode === 403 && error.code === 'insufficient_scope')
})
