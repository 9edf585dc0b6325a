/** The flags `events list` and `events resend` select events with: the admin API's event filter, one flag per field. */
import {Flags} from '@oclif/core'

import {EVENT_DELIVERY_STATES} from '@payapp/sdk/schemas/admin'

export const eventFilterFlags = {
  type: Flags.string({description: 'An event type, or a prefix ending in * (e.g. "subscription.*").'}),
  since: Flags.string({description: 'An event id (the events after it) or a time, ISO 8601 or Unix seconds, on the gateway clock.'}),
  until: Flags.string({description: 'A time, ISO 8601 or Unix seconds, on the gateway clock: events created at or before it.'}),
  delivery: Flags.option({
    options: EVENT_DELIVERY_STATES,
    description: 'Delivery state: failed (an endpoint has not got it after an attempt: retrying or given up), pending (not tried yet), delivered (every endpoint got it), none (queued for no endpoint).',
  })(),
}

/** Whether any filter flag is set. */
export const hasFilter = (flags: {type?: string; since?: string; until?: string; delivery?: string}) =>
  [flags.type, flags.since, flags.until, flags.delivery].some((v) => v !== undefined)
