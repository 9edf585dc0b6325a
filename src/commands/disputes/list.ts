import {BaseCommand} from '../../cli/base-command.js'
import {collect, listFlags, pageParams} from '../../cli/list.js'
import {table} from '../../cli/output.js'
import {disputeColumns} from '../../cli/services/commerce-view.js'
import {endpoints} from '../../sdk/endpoints.js'

export default class DisputesList extends BaseCommand<typeof DisputesList> {
  static override endpoint = 'disputes.list' as const
  static override summary = endpoints['disputes.list'].summary + '.'
  static override examples = ['<%= config.bin %> disputes list', '<%= config.bin %> disputes list --env live --all --json']
  static override flags = {...listFlags}

  async run() {
    const client = await this.appClient()
    const page = await collect(client.disputes.list(pageParams(this.flags)), this.flags)
    return this.render(page, (p) => this.log(table(p.data, disputeColumns)))
  }
}
