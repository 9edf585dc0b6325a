/**
 * `--seed` sample catalogue, the same in each environment: a T-shirt with Size and Color options and
 * variants (one stock-tracked with 5 units, one at its own price), a mug with images and package
 * dimensions, a subscription plan with a monthly and a yearly price (not on the storefront), and a
 * sticker pack. Built through the same functions and schemas as the API, so seeds obey every rule.
 */
import * as catalog from '@payapp/sdk/schemas/catalog'
import {createOptionGroup} from '../domain/option-groups.js'
import {createPrice} from '../domain/prices.js'
import {createProduct} from '../domain/products.js'
import {createVariant} from '../domain/variants.js'
import type {Tx} from '../domain/context.js'
import type {Scope} from '../storage/documents.js'

export async function seedCatalog(tx: Tx, scope: Scope): Promise<void> {
  const product = (body: catalog.ProductCreate) => createProduct(tx, scope, catalog.productCreate.parse(body))

  await product({
    name: 'Sticker Pack',
    description: 'Ten vinyl stickers.',
    tags: ['stickers', 'small'],
    price: {currency: 'eur', unit_amount: 450},
  })

  const plan = await product({
    name: 'Pro Plan',
    description: 'Everything in the app, billed monthly or yearly.',
    unit_label: 'seat',
    tax_code: 'txcd_10103001',
    store_visible: false,
    price: {currency: 'eur', unit_amount: 990, nickname: 'Monthly', recurring: {interval: 'month'}},
  })
  await createPrice(tx, scope, plan, catalog.priceCreate.parse({currency: 'eur', unit_amount: 9900, nickname: 'Yearly', recurring: {interval: 'year'}}))

  await product({
    name: 'Ceramic Mug',
    description: 'Stoneware mug, 350 ml.',
    images: ['https://images.example.com/mug-front.jpg', 'https://images.example.com/mug-side.jpg'],
    shippable: true,
    package_dimensions: {length: 12, width: 10, height: 11, weight: 420},
    statement_descriptor: 'DEMO MUG',
    url: 'https://shop.example.com/mug',
    tags: ['kitchen'],
    price: {currency: 'eur', unit_amount: 1800},
  })

  const shirt = await product({
    name: 'Classic T-Shirt',
    description: 'Organic cotton tee.',
    shippable: true,
    tags: ['apparel'],
    price: {currency: 'eur', unit_amount: 2500},
  })
  const size = await createOptionGroup(tx, scope, shirt, catalog.optionGroupCreate.parse({name: 'Size', values: ['S', 'M', 'L']}))
  const color = await createOptionGroup(tx, scope, shirt, catalog.optionGroupCreate.parse({name: 'Color', values: ['Red', 'Blue']}))
  const large = await createPrice(tx, scope, shirt, catalog.priceCreate.parse({currency: 'eur', unit_amount: 2900, nickname: 'Large sizes'}))
  const variants: Array<[string, string, Partial<catalog.VariantCreate>]> = [
    ['S', 'Red', {}],
    ['M', 'Red', {}],
    ['M', 'Blue', {track_inventory: true, stock_qty: 5, highlight: true, features: ['Limited run']}],
    ['L', 'Blue', {price: large.id}],
  ]
  for (const [s, c, extra] of variants) {
    const options = [
      {group: size.group.id, value: size.values.find((v) => v.value === s)!.id},
      {group: color.group.id, value: color.values.find((v) => v.value === c)!.id},
    ]
    await createVariant(tx, scope, shirt, catalog.variantCreate.parse({options, sku: `TSHIRT-${s}-${c.toUpperCase()}`, ...extra}))
  }
}
