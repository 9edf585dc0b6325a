import {writeCommand} from '../../cli/command-factory.js'
import {orderView} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default writeCommand({
  endpoint: 'orders.create',
  summary: endpoints['orders.create'].summary + ', as if a buyer had paid: test installations only.',
  examples: [
    '<%= config.bin %> orders create --product-id prod_123',
    '<%= config.bin %> orders create --product-id prod_123 --variant-id 0b5e2f4c-6d1a-4b8e-9f3a-2c7d8e9f0a1b --quantity 2 --customer-email buyer@example.com --json',
  ],
  render: orderView,
})
