import {writeCommand} from '../../cli/command-factory.js'
import {merchantSubscriptionDetails} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default writeCommand({
  endpoint: 'subscriptions.create',
  summary: endpoints['subscriptions.create'].summary + ' (merchant API, secret key).',
  examples: [
    '<%= config.bin %> subscriptions create --price-id price_123 --customer-name "Ada Buyer" --customer-email ada@example.com',
    '<%= config.bin %> subscriptions create --price-id price_123 --customer cus_123 --quantity 3 --idempotency-key signup-42 --json',
  ],
  render: merchantSubscriptionDetails,
})
