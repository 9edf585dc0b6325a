import {Args} from '@oclif/core'

import {writeCommand} from '../../../cli/command-factory.js'
import {priceBlock} from '../../../cli/services/catalog-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default writeCommand({
  endpoint: 'prices.create',
  summary: endpoints['prices.create'].summary + ' (amount in minor units, at least 250).',
  examples: [
    '<%= config.bin %> products prices create prod_123 --currency eur --unit-amount 2500',
    '<%= config.bin %> products prices create prod_123 --currency eur --unit-amount 900 --recurring-interval month --set-as-default',
    '<%= config.bin %> products prices create prod_123 --data @price.json',
  ],
  args: {product_id: Args.string({required: true, description: 'Product id'})},
  render: priceBlock,
})
