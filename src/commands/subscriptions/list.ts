import {BaseCommand} from '../../cli/base-command.js'
import {collect, listFlags, pageParams} from '../../cli/list.js'
import {table} from '../../cli/output.js'
import {subscriptionColumns} from '../../cli/services/commerce-view.js'
import {endpoints} from '../../sdk/endpoints.js'

export default class SubscriptionsList extends BaseCommand<typeof SubscriptionsList> {
  static override endpoint = 'subscriptions.list' as const
  static override summary = endpoints['subscriptions.list'].summary + '.'
  static override examples = ['<%= config.bin %> subscriptions list', '<%= config.bin %> subscriptions list --env live --all --json']
  static override flags = {...listFlags}

  async run() {
    const client = await this.appClient()
    const page = await collect(client.subscriptions.list(pageParams(this.flags)), this.flags)
    return this.render(page, (p) => this.log(table(p.data, subscriptionColumns)))
  }
}
