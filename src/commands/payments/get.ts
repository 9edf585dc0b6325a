import {Args} from '@oclif/core'

import {objectCommand} from '../../cli/command-factory.js'
import {paymentDetails} from '../../cli/services/commerce-view.js'

export default objectCommand({
  endpoint: 'payments.retrieve',
  examples: ['<%= config.bin %> payments get py_123', '<%= config.bin %> payments get ch_123 --env live --json'],
  args: {payment_id: Args.string({required: true, description: 'Payment id: the charge id (ch_…) in live, the row id (py_…) in the sandbox.'})},
  render: (p) => paymentDetails(p),
})
