import {Flags} from '@oclif/core'

import {AdminCommand} from '../../cli/admin-command.js'
import {date, table} from '../../cli/output.js'
import {adminFlags} from '../../cli/services/gateway-admin.js'

export default class EventsList extends AdminCommand<typeof EventsList> {
  static override summary = "The gateway's event log for a merchant and environment, newest first (what webhooks deliver)."
  static override examples = [
    '<%= config.bin %> events list --merchant mch_123',
    '<%= config.bin %> events list --type "invoice.*" --limit 50 --json',
  ]
  static override flags = {
    ...adminFlags,
    type: Flags.string({description: 'An event type, or a prefix ending in * (e.g. "subscription.*").'}),
    limit: Flags.integer({char: 'l', min: 1, max: 1000, default: 25, description: 'Events to show (at most 1000).'}),
  }

  async run() {
    const merchant = await this.merchant()
    const ctx = await this.context()
    const admin = await this.admin()
    const page = await admin.events.list({merchant, env: ctx.env, type: this.flags.type, limit: this.flags.limit})
    return this.render(page, (p) =>
      this.log(
        table(p.data, [
          {key: 'id'},
          {key: 'type'},
          {key: 'object', header: 'OBJECT', get: (e) => String((e.data.object as {id?: unknown}).id ?? '')},
          {key: 'created', get: (e) => date(e.created)},
        ]),
      ),
    )
  }
}
