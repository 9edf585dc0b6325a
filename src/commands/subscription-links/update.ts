import {Args} from '@oclif/core'

import {writeCommand} from '../../cli/command-factory.js'
import {subscriptionLinkDetails} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default writeCommand({
  endpoint: 'subscriptionLinks.update',
  summary: `${endpoints['subscriptionLinks.update'].summary} (live installations only): amount, currency and interval are fixed once created.`,
  examples: [
    '<%= config.bin %> subscription-links update sl_123 --env live --name "Pro plan (2025)"',
    '<%= config.bin %> subscription-links update sl_123 --env live --no-active --json',
  ],
  args: {link_id: Args.string({required: true, description: 'Subscription link id.'})},
  render: subscriptionLinkDetails,
})
