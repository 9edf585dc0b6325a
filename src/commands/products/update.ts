import {Args} from '@oclif/core'

import {writeCommand} from '../../cli/command-factory.js'
import {pricesOf, productBlock} from '../../cli/services/catalog-view.js'

export default writeCommand({
  endpoint: 'products.update',
  // The merchant API's POST update and default-price route: the same operations (--default-price-id).
  also: ['products.modify', 'products.defaultPrice'],
  examples: [
    '<%= config.bin %> products update prod_123 --name "Organic T-shirt" --no-store-visible',
    '<%= config.bin %> products update prod_123 --default-price-id price_456',
    '<%= config.bin %> products update prod_123 --data \'{"description": null}\'',
  ],
  args: {product_id: Args.string({required: true, description: 'Product id'})},
  // The App API's product carries price ids only: the amounts take one more read.
  render: async (p, client) => productBlock(p, await pricesOf(client, p.id, p.prices)),
})
