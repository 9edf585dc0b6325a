import {BaseCommand} from '../../cli/base-command.js'
import {bodyFromFlags, dataFlag, flagsFromSchema} from '../../cli/schema-flags.js'
import {storeCheckoutDetails} from '../../cli/services/commerce-view.js'
import {type BodyOf, endpoints} from '../../sdk/endpoints.js'

const fields = flagsFromSchema(endpoints['checkouts.create'].body)

export default class CheckoutsCreate extends BaseCommand<typeof CheckoutsCreate> {
  static override summary = endpoints['checkouts.create'].summary + ' (store API: needs the secret key).'
  static override description = 'Uses the profile\'s secret key ("payapp login --secret-key …") or PAYAPP_SECRET_KEY. The session reserves stock for 30 minutes.'
  static override examples = [
    '<%= config.bin %> checkouts create --product-id prod_123',
    '<%= config.bin %> checkouts create --product-id prod_123 --variant-id var_123 --quantity 2 --json',
  ]
  static override flags = {...fields.flags, data: dataFlag}

  async run() {
    const client = await this.storeClient()
    const body = await bodyFromFlags(fields, this.flags, this.flags.data)
    const checkout = await client.checkouts.create(body as BodyOf<'checkouts.create'>)
    return this.render(checkout, (c) => this.log(storeCheckoutDetails(c)))
  }
}
