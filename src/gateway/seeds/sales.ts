/**
 * Seeded store sales: two paid checkouts of the sample catalogue, sold through the same rules a
 * buyer meets, so orders, sessions and their payments are there to read after `--seed`.
 */
import {completeSession, createStoreCheckout} from '../domain/checkout.js'
import type {Tx} from '../domain/context.js'
import type {Scope} from '../storage/documents.js'

const SALES = [
  {product: 'Sticker Pack', quantity: 2, buyer: {name: 'Ada Lovelace', email: 'ada@example.com'}},
  {product: 'Classic T-Shirt', quantity: 1, buyer: {name: 'Grace Hopper', email: 'grace@example.com'}},
]

export async function seedSales(tx: Tx, scope: Scope): Promise<void> {
  const products = await tx.all('product', scope)
  for (const sale of SALES) {
    const product = products.find((p) => p.name === sale.product)
    if (!product) continue
    const checkout = await createStoreCheckout(tx, scope, {product_id: product.id, quantity: sale.quantity})
    const session = (await tx.get('checkout_session', scope, checkout.session_id))!
    await completeSession(tx, scope, session, 'paid', sale.buyer)
  }
}
