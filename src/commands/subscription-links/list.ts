import {BaseCommand} from '../../cli/base-command.js'
import {collect, listFlags, pageParams} from '../../cli/list.js'
import {table} from '../../cli/output.js'
import {subscriptionLinkColumns} from '../../cli/services/commerce-view.js'
import {endpoints} from '../../sdk/endpoints.js'

export default class SubscriptionLinksList extends BaseCommand<typeof SubscriptionLinksList> {
  static override endpoint = 'subscriptionLinks.list' as const
  static override summary = endpoints['subscriptionLinks.list'].summary + ' (live installations only).'
  static override examples = ['<%= config.bin %> subscription-links list --env live', '<%= config.bin %> subscription-links list --env live --all --json']
  static override flags = {...listFlags}

  async run() {
    const client = await this.appClient()
    const page = await collect(client.subscriptionLinks.list(pageParams(this.flags)), this.flags)
    return this.render(page, (p) => this.log(table(p.data, subscriptionLinkColumns)))
  }
}
