import {Args} from '@oclif/core'

import {listCommand} from '../../../cli/command-factory.js'
import {pricesTable} from '../../../cli/services/catalog-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default listCommand({
  endpoint: 'prices.list',
  summary: endpoints['prices.list'].summary + ', newest first; amounts in major units.',
  examples: ['<%= config.bin %> products prices list prod_123', '<%= config.bin %> products prices list prod_123 --all --json'],
  args: {product_id: Args.string({required: true, description: 'Product id'})},
  render: pricesTable,
  noun: 'prices',
})
