import {Args} from '@oclif/core'

import {BaseCommand} from '../../cli/base-command.js'
import {bodyFromFlags, dataFlag, flagsFromSchema} from '../../cli/schema-flags.js'
import {sessionDetails} from '../../cli/services/commerce-view.js'
import {type BodyOf, endpoints} from '@payapp/sdk/endpoints'

const fields = flagsFromSchema(endpoints['checkoutSessions.update'].body)

export default class SessionsUpdate extends BaseCommand<typeof SessionsUpdate> {
  static override endpoint = ['checkoutSessions.update', 'checkoutSessions.updateViaPost'] as const
  static override summary = endpoints['checkoutSessions.update'].summary + ' (merchant API).'
  static override description = 'Pass --revision with the revision you read to fail with revision_conflict (exit code of a 409) instead of overwriting a concurrent change.'
  static override examples = ['<%= config.bin %> sessions update cs_123 --amount 2500 --revision 0', '<%= config.bin %> sessions update cs_123 --reference order-17 --json']
  static override args = {session_id: Args.string({required: true, description: 'Checkout session id (cs_…).'})}
  static override flags = {...fields.flags, data: dataFlag}

  async run() {
    const client = await this.merchantClient()
    const body = await bodyFromFlags(fields, this.flags, this.flags.data)
    const session = await client.checkout.sessions.update(this.args.session_id, body as BodyOf<'checkoutSessions.update'>)
    return this.render(session, (s) => this.log(sessionDetails(s)))
  }
}
