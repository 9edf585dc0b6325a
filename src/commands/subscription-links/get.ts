import {Args} from '@oclif/core'

import {objectCommand} from '../../cli/command-factory.js'
import {subscriptionLinkDetails} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default objectCommand({
  endpoint: 'subscriptionLinks.retrieve',
  summary: endpoints['subscriptionLinks.retrieve'].summary + ' (live installations only).',
  examples: ['<%= config.bin %> subscription-links get sl_123 --env live', '<%= config.bin %> subscription-links get sl_123 --env live --json'],
  args: {link_id: Args.string({required: true, description: 'Subscription link id.'})},
  render: (l) => subscriptionLinkDetails(l),
})
