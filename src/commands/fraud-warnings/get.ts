import {Args} from '@oclif/core'

import {objectCommand} from '../../cli/command-factory.js'
import {fraudWarningDetails} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default objectCommand({
  endpoint: 'fraudWarnings.retrieve',
  summary: endpoints['fraudWarnings.retrieve'].summary + ' (merchant API, secret key).',
  examples: ['<%= config.bin %> fraud-warnings get 0b5e2f4c-6d1a-4b8e-9f3a-2c7d8e9f0a1b --json'],
  args: {warning_id: Args.string({required: true, description: 'Fraud warning id.'})},
  render: fraudWarningDetails,
})
