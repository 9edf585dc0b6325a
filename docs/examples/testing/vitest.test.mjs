// vitest: beforeAll/afterAll around the file (`npx vitest run`).
import {afterAll, beforeAll, expect, test} from 'vitest'

import {startGateway} from 'payapp/testing'

let gw
beforeAll(async () => {
  gw = await startGateway()
})
afterAll(() => gw.close())

test('creates a product', async () => {
  const {client: store} = await gw.secretKey()
  const mug = await store.products.create({name: 'Mug', price: {currency: 'eur', unit_amount: 1200}})
  expect(mug.name).toBe('Mug')
})
