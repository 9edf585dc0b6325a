import {BaseCommand} from '../../cli/base-command.js'
import {bodyFromFlags, dataFlag, flagsFromSchema} from '../../cli/schema-flags.js'
import {subscriptionLinkDetails} from '../../cli/services/commerce-view.js'
import {type BodyOf, endpoints} from '../../sdk/endpoints.js'

const fields = flagsFromSchema(endpoints['subscriptionLinks.create'].body)

export default class SubscriptionLinksCreate extends BaseCommand<typeof SubscriptionLinksCreate> {
  static override summary = endpoints['subscriptionLinks.create'].summary + ' (live installations only).'
  static override examples = [
    '<%= config.bin %> subscription-links create --env live --amount 990 --currency eur --interval month --name "Pro plan"',
    '<%= config.bin %> subscription-links create --env live --amount 9900 --currency eur --interval year --trial-period-days 14 --metadata plan=pro --json',
  ]
  static override flags = {...fields.flags, data: dataFlag}

  async run() {
    const client = await this.appClient()
    const body = await bodyFromFlags(fields, this.flags, this.flags.data)
    const link = await client.subscriptionLinks.create(body as BodyOf<'subscriptionLinks.create'>)
    return this.render(link, (l) => this.log(subscriptionLinkDetails(l)))
  }
}
