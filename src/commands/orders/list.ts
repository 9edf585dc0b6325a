import {BaseCommand} from '../../cli/base-command.js'
import {collect, listFlags, pageParams} from '../../cli/list.js'
import {table} from '../../cli/output.js'
import {orderColumns} from '../../cli/services/commerce-view.js'
import {endpoints} from '../../sdk/endpoints.js'

export default class OrdersList extends BaseCommand<typeof OrdersList> {
  static override endpoint = 'orders.list' as const
  static override summary = endpoints['orders.list'].summary + '.'
  static override examples = ['<%= config.bin %> orders list', '<%= config.bin %> orders list --env live --all --json']
  static override flags = {...listFlags}

  async run() {
    const client = await this.appClient()
    const page = await collect(client.orders.list(pageParams(this.flags)), this.flags)
    return this.render(page, (p) => this.log(table(p.data, orderColumns)))
  }
}
