import {writeCommand} from '../../cli/command-factory.js'
import {subscriptionLinkDetails} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default writeCommand({
  endpoint: 'subscriptionLinks.create',
  summary: endpoints['subscriptionLinks.create'].summary + ' (live installations only).',
  examples: [
    '<%= config.bin %> subscription-links create --env live --amount 990 --currency eur --interval month --name "Pro plan"',
    '<%= config.bin %> subscription-links create --env live --amount 9900 --currency eur --interval year --trial-period-days 14 --metadata plan=pro --json',
  ],
  render: subscriptionLinkDetails,
})
