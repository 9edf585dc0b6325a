/** Reading a catalogue back from the store, as the catalogue tests compare it with their files. */
import {expect} from 'chai'

import type {Account} from './gateway.js'

/** The one product carrying `catalog_key` KEY, with its prices, option groups and variants. */
export async function storeProduct(acct: Account, key: string) {
  const list = (await acct.store('GET', '/products?limit=100')).body.data as any[]
  const matches = list.filter((p) => p.metadata.catalog_key === key)
  expect(matches, `products with key ${key}`).to.have.length(1)
  return (await acct.store('GET', `/products/${matches[0].id}`)).body
}
