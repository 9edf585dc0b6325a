import {Args, Flags} from '@oclif/core'

import {AdminCommand} from '../../cli/admin-command.js'
import {adminFlags} from '../../cli/services/gateway-admin.js'

export default class EventsResend extends AdminCommand<typeof EventsResend> {
  static override summary = 'Deliver a logged event again: to one webhook endpoint, or to every endpoint that selects its type.'
  static override examples = ['<%= config.bin %> events resend evt_123', '<%= config.bin %> events resend evt_123 --endpoint we_456 --json']
  static override args = {event: Args.string({required: true, description: 'Event id (evt_…)'})}
  static override flags = {
    'admin-key': adminFlags['admin-key'],
    endpoint: Flags.string({description: 'Webhook endpoint id (we_…); default: every endpoint of the event\'s merchant and environment that selects it.'}),
  }

  async run() {
    const admin = await this.admin()
    const result = await admin.events.resend(this.args.event, this.flags.endpoint === undefined ? {} : {endpoint: this.flags.endpoint})
    return this.render(result, (r) => this.log(`Queued ${r.event} for ${r.queued_deliveries} endpoint${r.queued_deliveries === 1 ? '' : 's'}`))
  }
}
