import {Args} from '@oclif/core'

import {objectCommand} from '../../cli/command-factory.js'
import {customerDetails} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default objectCommand({
  endpoint: 'customers.retrieve',
  summary: endpoints['customers.retrieve'].summary + ' (merchant API, secret key).',
  examples: ['<%= config.bin %> customers get cus_123', '<%= config.bin %> customers get cus_123 --json'],
  args: {customer_id: Args.string({required: true, description: 'Customer id (cus_…).'})},
  render: customerDetails,
})
