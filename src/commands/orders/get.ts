import {Args} from '@oclif/core'

import {BaseCommand} from '../../cli/base-command.js'
import {orderView} from '../../cli/services/commerce-view.js'
import {endpoints} from '../../sdk/endpoints.js'

export default class OrdersGet extends BaseCommand<typeof OrdersGet> {
  static override endpoint = 'orders.retrieve' as const
  static override summary = endpoints['orders.retrieve'].summary + ', with its delivery evidence.'
  static override examples = ['<%= config.bin %> orders get ord_123', '<%= config.bin %> orders get ord_123 --json']
  static override args = {order_id: Args.string({required: true, description: 'Order id.'})}

  async run() {
    const order = await (await this.appClient()).orders.retrieve(this.args.order_id)
    return this.render(order, (o) => this.log(orderView(o)))
  }
}
