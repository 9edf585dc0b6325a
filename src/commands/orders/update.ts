import {Args} from '@oclif/core'

import {writeCommand} from '../../cli/command-factory.js'
import {orderView} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default writeCommand({
  endpoint: 'orders.update',
  summary: `${endpoints['orders.update'].summary}: shipped and completed need delivery evidence first ("orders evidence add").`,
  examples: ['<%= config.bin %> orders update ord_123 --status processing', '<%= config.bin %> orders update ord_123 --status shipped --json'],
  args: {order_id: Args.string({required: true, description: 'Order id.'})},
  render: orderView,
})
