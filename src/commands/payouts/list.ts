import {BaseCommand} from '../../cli/base-command.js'
import {collect, listFlags, pageParams} from '../../cli/list.js'
import {table} from '../../cli/output.js'
import {payoutColumns} from '../../cli/services/commerce-view.js'
import {endpoints} from '../../sdk/endpoints.js'

export default class PayoutsList extends BaseCommand<typeof PayoutsList> {
  static override endpoint = 'payouts.list' as const
  static override summary = endpoints['payouts.list'].summary + '.'
  static override examples = ['<%= config.bin %> payouts list', '<%= config.bin %> payouts list --env live --all --json']
  static override flags = {...listFlags}

  async run() {
    const client = await this.appClient()
    const page = await collect(client.payouts.list(pageParams(this.flags)), this.flags)
    return this.render(page, (p) => this.log(table(p.data, payoutColumns)))
  }
}
