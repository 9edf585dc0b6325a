import {BaseCommand} from '../../cli/base-command.js'
import {bodyFromFlags, dataFlag, flagsFromSchema} from '../../cli/schema-flags.js'
import {orderView} from '../../cli/services/commerce-view.js'
import {type BodyOf, endpoints} from '../../sdk/endpoints.js'

const fields = flagsFromSchema(endpoints['orders.create'].body)

export default class OrdersCreate extends BaseCommand<typeof OrdersCreate> {
  static override summary = endpoints['orders.create'].summary + ', as if a buyer had paid: test installations only.'
  static override examples = [
    '<%= config.bin %> orders create --product-id prod_123',
    '<%= config.bin %> orders create --product-id prod_123 --variant-id var_123 --quantity 2 --customer-email buyer@example.com --json',
  ]
  static override flags = {...fields.flags, data: dataFlag}

  async run() {
    const client = await this.appClient()
    const body = await bodyFromFlags(fields, this.flags, this.flags.data)
    const order = await client.orders.create(body as BodyOf<'orders.create'>)
    return this.render(order, (o) => this.log(orderView(o)))
  }
}
