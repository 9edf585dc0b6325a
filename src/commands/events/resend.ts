import {Args, Flags} from '@oclif/core'

import {AdminCommand} from '../../cli/admin-command.js'
import {usageError} from '../../cli/exit-codes.js'
import {eventFilterFlags, hasFilter} from '../../cli/services/event-filter.js'
import {adminFlags} from '../../cli/services/gateway-admin.js'

export default class EventsResend extends AdminCommand<typeof EventsResend> {
  static override summary = 'Deliver logged events again: one by id, or every event a filter selects (oldest first); to one webhook endpoint, or to every endpoint that selects each.'
  static override examples = [
    '<%= config.bin %> events resend evt_123',
    '<%= config.bin %> events resend evt_123 --endpoint we_456 --json',
    '<%= config.bin %> events resend --delivery failed --since 2026-05-01T00:00:00Z',
    '<%= config.bin %> events resend --type "checkout.session.*" --since evt_123 --endpoint we_456',
  ]
  static override args = {event: Args.string({description: 'Event id (evt_…); without it, the filter flags select the events.'})}
  static override flags = {
    ...adminFlags,
    ...eventFilterFlags,
    endpoint: Flags.string({description: "Webhook endpoint id (we_…); default: every endpoint of the event's merchant and environment that selects it."}),
  }

  async run() {
    const {args, flags} = this
    const admin = await this.admin()
    const endpoint = flags.endpoint === undefined ? {} : {endpoint: flags.endpoint}
    if (args.event !== undefined) {
      if (hasFilter(flags)) throw usageError('Give an event id or filter flags (--type, --since, --until, --delivery), not both', '--since')
      const result = await admin.events.resend(args.event, endpoint)
      return this.render(result, (r) => this.log(`Queued ${r.event} for ${r.queued_deliveries} endpoint${r.queued_deliveries === 1 ? '' : 's'}`))
    }
    if (!hasFilter(flags)) throw usageError('Give an event id, or select events with --type, --since, --until or --delivery', 'event')
    const merchant = await this.merchant()
    const ctx = await this.context()
    const result = await admin.events.resendMany({merchant, env: ctx.env, type: flags.type, since: flags.since, until: flags.until, delivery: flags.delivery, ...endpoint})
    return this.render(result, (r) =>
      this.log(
        r.events === 0
          ? 'No event matches the filter; nothing queued'
          : `Queued ${r.events} event${r.events === 1 ? '' : 's'} (${r.first} … ${r.last}), ${r.queued_deliveries} deliver${r.queued_deliveries === 1 ? 'y' : 'ies'}`,
      ),
    )
  }
}
