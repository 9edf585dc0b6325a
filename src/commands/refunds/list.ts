import {BaseCommand} from '../../cli/base-command.js'
import {collect, listFlags, pageParams} from '../../cli/list.js'
import {table} from '../../cli/output.js'
import {refundColumns} from '../../cli/services/commerce-view.js'
import {endpoints} from '../../sdk/endpoints.js'

export default class RefundsList extends BaseCommand<typeof RefundsList> {
  static override summary = endpoints['refunds.list'].summary + '.'
  static override examples = ['<%= config.bin %> refunds list', '<%= config.bin %> refunds list --env live --all --json']
  static override flags = {...listFlags}

  async run() {
    const client = await this.appClient()
    const page = await collect(client.refunds.list(pageParams(this.flags)), this.flags)
    return this.render(page, (p) => this.log(table(p.data, refundColumns)))
  }
}
