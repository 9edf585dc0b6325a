import {writeCommand} from '../../cli/command-factory.js'
import {storeCheckoutDetails} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default writeCommand({
  endpoint: 'checkouts.create',
  summary: endpoints['checkouts.create'].summary + ' (store API: needs the secret key).',
  description: 'Uses the profile\'s secret key ("payapp login --secret-key …") or PAYAPP_SECRET_KEY. The session reserves stock for 30 minutes.',
  examples: [
    '<%= config.bin %> checkouts create --product-id prod_123',
    '<%= config.bin %> checkouts create --product-id prod_123 --variant-id 0b5e2f4c-6d1a-4b8e-9f3a-2c7d8e9f0a1b --quantity 2 --json',
  ],
  render: storeCheckoutDetails,
})
