import {Args} from '@oclif/core'

import {BaseCommand} from '../../cli/base-command.js'
import {endpoints} from '../../sdk/endpoints.js'

export default class CheckoutSessionsExpire extends BaseCommand<typeof CheckoutSessionsExpire> {
  static override endpoint = 'checkoutSessions.expire' as const
  static override summary = endpoints['checkoutSessions.expire'].summary + ' (merchant API, secret key): its reserved stock is released.'
  static override examples = ['<%= config.bin %> checkout-sessions expire cs_123', '<%= config.bin %> checkout-sessions expire cs_123 --json']
  static override args = {session_id: Args.string({required: true, description: 'Checkout session id (cs_…).'})}

  async run() {
    const expired = await (await this.merchantClient()).checkoutSessions.expire(this.args.session_id)
    return this.render(expired, (e) => this.log(`Expired checkout session ${e.id}`))
  }
}
