import {Args} from '@oclif/core'

import {BaseCommand} from '../../cli/base-command.js'
import {checkoutSessionDetails} from '../../cli/services/commerce-view.js'
import {endpoints} from '../../sdk/endpoints.js'

export default class CheckoutSessionsGet extends BaseCommand<typeof CheckoutSessionsGet> {
  static override endpoint = 'checkoutSessions.retrieve' as const
  static override summary = 'One checkout session of the merchant API (secret key): status, amount, expiry, checkout URL.'
  static override description = endpoints['checkoutSessions.retrieve'].summary + '. Uses the profile\'s secret key or PAYAPP_SECRET_KEY.'
  static override examples = ['<%= config.bin %> checkout-sessions get cs_123', '<%= config.bin %> checkout-sessions get cs_123 --json']
  static override args = {session_id: Args.string({required: true, description: 'Checkout session id (cs_…).'})}

  async run() {
    const session = await (await this.merchantClient()).checkoutSessions.retrieve(this.args.session_id)
    return this.render(session, (s) => this.log(checkoutSessionDetails(s)))
  }
}
