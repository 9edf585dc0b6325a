import {Flags} from '@oclif/core'

import {AdminCommand} from '../../cli/admin-command.js'
import {date, table} from '../../cli/output.js'
import {adminFlags} from '../../cli/services/gateway-admin.js'
import {eventFilterFlags} from '../../cli/services/event-filter.js'

export default class EventsList extends AdminCommand<typeof EventsList> {
  static override summary = "The gateway's event log for a merchant and environment, newest first (what webhooks deliver): by type, time and delivery state."
  static override examples = [
    '<%= config.bin %> events list --merchant mch_123',
    '<%= config.bin %> events list --type "invoice.*" --limit 50 --json',
    '<%= config.bin %> events list --delivery failed --since 2026-05-01T00:00:00Z',
    '<%= config.bin %> events list --since evt_123 --until 1777600000',
  ]
  static override flags = {
    ...adminFlags,
    ...eventFilterFlags,
    limit: Flags.integer({char: 'l', min: 1, max: 1000, default: 25, description: 'Events to show (at most 1000).'}),
  }

  async run() {
    const merchant = await this.merchant()
    const ctx = await this.context()
    const admin = await this.admin()
    const {type, since, until, delivery, limit} = this.flags
    const page = await admin.events.list({merchant, env: ctx.env, type, since, until, delivery, limit})
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
