import {Args} from '@oclif/core'

import {objectCommand} from '../../cli/command-factory.js'
import {merchantSubscriptionDetails} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default objectCommand({
  endpoint: 'subscriptions.retrieve',
  summary: endpoints['subscriptions.retrieve'].summary + ' (merchant API, secret key).',
  examples: ['<%= config.bin %> subscriptions get sub_123', '<%= config.bin %> subscriptions get sub_123 --json'],
  args: {subscription_id: Args.string({required: true, description: 'Subscription id (sub_…).'})},
  render: merchantSubscriptionDetails,
})
