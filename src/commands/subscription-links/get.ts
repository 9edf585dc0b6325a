import {Args} from '@oclif/core'

import {BaseCommand} from '../../cli/base-command.js'
import {subscriptionLinkDetails} from '../../cli/services/commerce-view.js'
import {endpoints} from '../../sdk/endpoints.js'

export default class SubscriptionLinksGet extends BaseCommand<typeof SubscriptionLinksGet> {
  static override endpoint = 'subscriptionLinks.retrieve' as const
  static override summary = endpoints['subscriptionLinks.retrieve'].summary + ' (live installations only).'
  static override examples = ['<%= config.bin %> subscription-links get sl_123 --env live', '<%= config.bin %> subscription-links get sl_123 --env live --json']
  static override args = {link_id: Args.string({required: true, description: 'Subscription link id.'})}

  async run() {
    const link = await (await this.appClient()).subscriptionLinks.retrieve(this.args.link_id)
    return this.render(link, (l) => this.log(subscriptionLinkDetails(l)))
  }
}
