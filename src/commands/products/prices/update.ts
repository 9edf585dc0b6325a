import {Args} from '@oclif/core'

import {writeCommand} from '../../../cli/command-factory.js'
import {priceBlock} from '../../../cli/services/catalog-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default writeCommand({
  endpoint: 'prices.update',
  summary: endpoints['prices.update'].summary + '; amount, currency and billing are immutable.',
  examples: [
    '<%= config.bin %> products prices update prod_123 price_456 --nickname "Launch price"',
    '<%= config.bin %> products prices update prod_123 price_456 --no-active',
  ],
  args: {
    product_id: Args.string({required: true, description: 'Product id'}),
    price_id: Args.string({required: true, description: 'Price id'}),
  },
  render: priceBlock,
})
