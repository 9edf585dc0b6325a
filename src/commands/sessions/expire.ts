import {Args} from '@oclif/core'

import {BaseCommand} from '../../cli/base-command.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default class SessionsExpire extends BaseCommand<typeof SessionsExpire> {
  static override endpoint = 'checkoutSessions.expire' as const
  static override summary = endpoints['checkoutSessions.expire'].summary + ': its client secret dies and held stock returns (merchant API).'
  static override examples = ['<%= config.bin %> sessions expire cs_123', '<%= config.bin %> sessions expire cs_123 --json']
  static override args = {session_id: Args.string({required: true, description: 'Checkout session id (cs_…).'})}

  async run() {
    const result = await (await this.merchantClient()).checkout.sessions.expire(this.args.session_id)
    return this.render(result, (r) => this.log(`Expired ${r.id}`))
  }
}
