import {Args} from '@oclif/core'

import {BaseCommand} from '../../cli/base-command.js'
import {bodyFromFlags, dataFlag, flagsFromSchema} from '../../cli/schema-flags.js'
import {subscriptionLinkDetails} from '../../cli/services/commerce-view.js'
import {type BodyOf, endpoints} from '../../sdk/endpoints.js'
import {SUBSCRIPTION_LINK_IMMUTABLE_FIELDS} from '../../sdk/schemas/commerce.js'

// The schema declares the immutable fields only to reject them; they are no flags.
const fields = flagsFromSchema(endpoints['subscriptionLinks.update'].body, {exclude: SUBSCRIPTION_LINK_IMMUTABLE_FIELDS})

export default class SubscriptionLinksUpdate extends BaseCommand<typeof SubscriptionLinksUpdate> {
  static override summary = `${endpoints['subscriptionLinks.update'].summary} (live installations only): amount, currency and interval are fixed once created.`
  static override examples = [
    '<%= config.bin %> subscription-links update sl_123 --env live --name "Pro plan (2025)"',
    '<%= config.bin %> subscription-links update sl_123 --env live --no-active --json',
  ]
  static override args = {link_id: Args.string({required: true, description: 'Subscription link id.'})}
  static override flags = {...fields.flags, data: dataFlag}

  async run() {
    const client = await this.appClient()
    const body = await bodyFromFlags(fields, this.flags, this.flags.data)
    const link = await client.subscriptionLinks.update(this.args.link_id, body as BodyOf<'subscriptionLinks.update'>)
    return this.render(link, (l) => this.log(subscriptionLinkDetails(l)))
  }
}
