import {Args} from '@oclif/core'

import {objectCommand} from '../../cli/command-factory.js'
import {pricesOf, productDetail} from '../../cli/services/catalog-view.js'

export default objectCommand({
  endpoint: 'products.retrieve',
  examples: ['<%= config.bin %> products get prod_123', '<%= config.bin %> products get prod_123 --json'],
  args: {product_id: Args.string({required: true, description: 'Product id'})},
  // Human output shows amounts, which the App API's product lacks: its prices are read too.
  render: async (p, client) => productDetail(p, await pricesOf(client, p.id)),
})
