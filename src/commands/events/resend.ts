import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../cli/base-command.js'
import {ADMIN_KEY_ENV, adminFlags, gatewayAdmin} from '../../cli/services/gateway-admin.js'

export default class EventsResend extends BaseCommand<typeof EventsResend> {
  static override summary = 'Deliver a logged event again: to one webhook endpoint, or to every endpoint that selects its type.'
  static override examples = ['<%= config.bin %> events resend evt_123', '<%= config.bin %> events resend evt_123 --endpoint we_456 --json']
  static override args = {event: Args.string({required: true, description: 'Event id (evt_…)'})}
  static override flags = {
    'admin-key': adminFlags['admin-key'],
    endpoint: Flags.string({description: 'Webhook endpoint id (we_…); default: every endpoint of the event\'s merchant and environment that selects it.'}),
  }

  async run() {
    const adminKey = await this.requireFlag('admin-key', this.flags['admin-key'], {envVar: ADMIN_KEY_ENV, secret: true})
    const admin = await gatewayAdmin((await this.context()).baseUrl, adminKey)
    const result = await admin.events.resend(this.args.event, this.flags.endpoint === undefined ? {} : {endpoint: this.flags.endpoint})
    return this.render(result, (r) => this.log(`Queued ${r.event} for ${r.queued_deliveries} endpoint${r.queued_deliveries === 1 ? '' : 's'}`))
  }
}
