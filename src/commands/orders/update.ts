import {Args} from '@oclif/core'

import {BaseCommand} from '../../cli/base-command.js'
import {bodyFromFlags, dataFlag, flagsFromSchema} from '../../cli/schema-flags.js'
import {orderView} from '../../cli/services/commerce-view.js'
import {type BodyOf, endpoints} from '../../sdk/endpoints.js'

const fields = flagsFromSchema(endpoints['orders.update'].body)

export default class OrdersUpdate extends BaseCommand<typeof OrdersUpdate> {
  static override summary = `${endpoints['orders.update'].summary}: shipped and completed need delivery evidence first ("orders evidence add").`
  static override examples = ['<%= config.bin %> orders update ord_123 --status processing', '<%= config.bin %> orders update ord_123 --status shipped --json']
  static override args = {order_id: Args.string({required: true, description: 'Order id.'})}
  static override flags = {...fields.flags, data: dataFlag}

  async run() {
    const client = await this.appClient()
    const body = await bodyFromFlags(fields, this.flags, this.flags.data)
    const order = await client.orders.update(this.args.order_id, body as BodyOf<'orders.update'>)
    return this.render(order, (o) => this.log(orderView(o)))
  }
}
