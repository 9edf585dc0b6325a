import {Args} from '@oclif/core'

import {writeCommand} from '../../cli/command-factory.js'
import {productBlock} from '../../cli/services/catalog-view.js'

export default writeCommand({
  endpoint: 'products.update',
  examples: [
    '<%= config.bin %> products update prod_123 --name "Organic T-shirt" --no-store-visible',
    '<%= config.bin %> products update prod_123 --default-price-id price_456',
    '<%= config.bin %> products update prod_123 --data \'{"description": null}\'',
  ],
  args: {product_id: Args.string({required: true, description: 'Product id'})},
  render: (p) => productBlock(p, new Map((p.prices ?? []).map((x) => [x.id, x]))),
})
