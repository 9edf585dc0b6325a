import {Args} from '@oclif/core'

import {objectCommand} from '../../cli/command-factory.js'
import {invoiceDetails} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default objectCommand({
  endpoint: 'invoices.retrieve',
  summary: endpoints['invoices.retrieve'].summary + ' (live only).',
  examples: ['<%= config.bin %> invoices get in_123 --env live', '<%= config.bin %> invoices get in_123 --env live --json'],
  args: {invoice_id: Args.string({required: true, description: 'Invoice id (in_…).'})},
  render: (i) => invoiceDetails(i),
})
