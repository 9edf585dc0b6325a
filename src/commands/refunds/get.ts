import {Args} from '@oclif/core'

import {objectCommand} from '../../cli/command-factory.js'
import {refundDetails} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default objectCommand({
  endpoint: 'refunds.retrieve',
  summary: endpoints['refunds.retrieve'].summary + ' (merchant API).',
  examples: ['<%= config.bin %> refunds get re_123', '<%= config.bin %> refunds get re_123 --json'],
  args: {refund_id: Args.string({required: true, description: 'Refund id (re_…).'})},
  render: refundDetails,
})
