import {Args} from '@oclif/core'

import {BaseCommand} from '../../cli/base-command.js'
import {sessionDetails} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default class SessionsGet extends BaseCommand<typeof SessionsGet> {
  static override endpoint = 'checkoutSessions.retrieve' as const
  static override summary = 'A checkout session with its client secret (merchant API); an expired one exits with its 410.'
  static override description = endpoints['checkoutSessions.retrieve'].summary + '.'
  static override examples = ['<%= config.bin %> sessions get cs_123', '<%= config.bin %> sessions get cs_123 --json']
  static override args = {session_id: Args.string({required: true, description: 'Checkout session id (cs_…).'})}

  async run() {
    const session = await (await this.merchantClient()).checkout.sessions.retrieve(this.args.session_id)
    return this.render(session, (s) => this.log(sessionDetails(s)))
  }
}
