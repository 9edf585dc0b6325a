/** The store and its catalogue, read through the App API with an installation token. */
import {AppClient} from 'payapp/sdk'

/**
 * @param {{token: string, baseUrl: string}} options
 * @returns {Promise<{store: string, products: Array<{id: string, name: string, active: boolean}>}>}
 */
export async function catalogue({token, baseUrl}) {
  const client = new AppClient({token, baseUrl})
  const store = await client.store.retrieve()
  const products = []
  // `for await` pages through the whole catalogue, 100 at a time.
  for await (const product of client.products.list({limit: 100})) {
    products.push({id: product.id, name: product.name, active: product.active})
  }
  return {store: store.display_name, products}
}
