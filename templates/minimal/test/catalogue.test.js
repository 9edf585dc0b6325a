/** The script against a real gateway started inside the test process (payapp/testing). */
import assert from 'node:assert/strict'
import {after, before, test} from 'node:test'

import {AuthenticationError} from 'payapp/sdk'
import {startGateway} from 'payapp/testing'

import {catalogue} from '../src/catalogue.js'

let gw
before(async () => {
  gw = await startGateway()
})
after(() => gw.close())

test('lists the store and every product, across pages', async () => {
  const {client: store} = await gw.secretKey()
  for (let i = 0; i < 105; i++) await store.products.create({name: `Product ${i}`})
  const {token} = await gw.installation({scopes: ['store:read', 'products:read']})
  const result = await catalogue({token, baseUrl: gw.url})
  assert.equal(result.store, (await gw.defaultMerchant()).store.display_name)
  assert.equal(result.products.length, 105)
})

test('a revoked token is a typed authentication error', async () => {
  const inst = await gw.installation({scopes: ['store:read', 'products:read']})
  await gw.admin.installations.revoke(inst.id)
  await assert.rejects(catalogue({token: inst.token, baseUrl: gw.url}), AuthenticationError)
})
