import {Args} from '@oclif/core'

import {BaseCommand} from '../../cli/base-command.js'
import {subscriptionLinkDetails} from '../../cli/services/commerce-view.js'
import {endpoints} from '../../sdk/endpoints.js'

export default class SubscriptionLinksArchive extends BaseCommand<typeof SubscriptionLinksArchive> {
  static override endpoint = 'subscriptionLinks.archive' as const
  static override summary = endpoints['subscriptionLinks.archive'].summary + ' (live installations only); buyers can no longer subscribe through it.'
  static override examples = ['<%= config.bin %> subscription-links archive sl_123 --env live', '<%= config.bin %> subscription-links archive sl_123 --env live --json']
  static override args = {link_id: Args.string({required: true, description: 'Subscription link id.'})}

  async run() {
    const link = await (await this.appClient()).subscriptionLinks.archive(this.args.link_id)
    return this.render(link, (l) => this.log(subscriptionLinkDetails(l)))
  }
}
