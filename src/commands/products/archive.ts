import {Args} from '@oclif/core'

import {objectCommand} from '../../cli/command-factory.js'

export default objectCommand({
  endpoint: 'products.archive',
  examples: ['<%= config.bin %> products archive prod_123', '<%= config.bin %> products archive prod_123 --json'],
  args: {product_id: Args.string({required: true, description: 'Product id'})},
  render: (p) => `Archived product ${p.id} and its prices.`,
})
