import {Args} from '@oclif/core'

import {writeCommand} from '../../cli/command-factory.js'
import {merchantSubscriptionDetails} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default writeCommand({
  endpoint: 'subscriptions.cancel',
  summary: endpoints['subscriptions.cancel'].summary + ' (merchant API, secret key); --no-at-period-end ends it now.',
  examples: ['<%= config.bin %> subscriptions cancel sub_123', '<%= config.bin %> subscriptions cancel sub_123 --no-at-period-end --json'],
  args: {subscription_id: Args.string({required: true, description: 'Subscription id (sub_…).'})},
  render: merchantSubscriptionDetails,
})
