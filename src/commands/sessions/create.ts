import {BaseCommand} from '../../cli/base-command.js'
import {bodyFromFlags, dataFlag, flagsFromSchema} from '../../cli/schema-flags.js'
import {sessionDetails} from '../../cli/services/commerce-view.js'
import {type BodyOf, endpoints} from '@payapp/sdk/endpoints'

const fields = flagsFromSchema(endpoints['checkoutSessions.create'].body)

export default class SessionsCreate extends BaseCommand<typeof SessionsCreate> {
  static override endpoint = 'checkoutSessions.create' as const
  static override summary = endpoints['checkoutSessions.create'].summary + ' (merchant API: needs the secret key).'
  static override description =
    'Uses the profile\'s secret key ("payapp login --secret-key …") or PAYAPP_SECRET_KEY. A raw amount needs --customer-name and --customer-email; line items (--data or --line-items as JSON) may name a variant, whose price decides and whose stock is held for 24 hours.'
  static override examples = [
    '<%= config.bin %> sessions create --amount 1999 --currency eur --customer-name "Ada Buyer" --customer-email ada@example.com',
    '<%= config.bin %> sessions create --data \'{"line_items":[{"variant":"var_123","quantity":2}]}\' --json',
  ]
  static override flags = {...fields.flags, data: dataFlag}

  async run() {
    const client = await this.merchantClient()
    const body = await bodyFromFlags(fields, this.flags, this.flags.data)
    const session = await client.checkout.sessions.create(body as BodyOf<'checkoutSessions.create'>)
    return this.render(session, (s) => this.log(sessionDetails(s)))
  }
}
