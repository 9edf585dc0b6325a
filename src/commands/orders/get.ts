import {Args} from '@oclif/core'

import {objectCommand} from '../../cli/command-factory.js'
import {orderView} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default objectCommand({
  endpoint: 'orders.retrieve',
  summary: endpoints['orders.retrieve'].summary + ', with its delivery evidence.',
  examples: ['<%= config.bin %> orders get ord_123', '<%= config.bin %> orders get ord_123 --json'],
  args: {order_id: Args.string({required: true, description: 'Order id.'})},
  render: (o) => orderView(o),
})
