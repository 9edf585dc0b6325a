/**
 * Events (spec: Events): the merchant's log of state changes, appended by `Platform.emit` in the
 * transaction of the change. Webhook endpoints and the admin event list select types with one rule.
 * The admin API reads the log by type, time (gateway clock) and delivery state, and queues logged
 * events again, one or all that a filter selects.
 */
import type {z} from 'zod'

import type {adminEventsResend, EVENT_DELIVERY_STATES} from '@payapp/sdk/schemas/admin'
import {matchesEventType} from '@payapp/sdk/webhooks-node'
import {invalid, notFound} from '../errors.js'
import type {Tx} from './context.js'
import type {EventDoc, Scope} from '../storage/documents.js'
import {findDoc} from './shared.js'
import {requireEndpoint} from './webhook-endpoints.js'

export {matchesEventType}

/** Most events one resend of many queues. */
export const RESEND_MAX = 10_000

export type DeliveryState = (typeof EVENT_DELIVERY_STATES)[number]

export interface EventFilter {
  type?: string
  /** An event id (the events after it) or a time (Unix seconds or ISO 8601). */
  since?: string
  until?: string
  delivery?: DeliveryState
}

/** A time given as Unix seconds or ISO 8601, or the spec's 400 naming `param`. */
function parseTime(text: string, param: string): number {
  if (/^\d+$/.test(text)) return Number(text)
  const ms = Date.parse(text)
  if (Number.isNaN(ms)) throw invalid('parameter_invalid', `${param}: "${text}" is neither an event id (evt_…) nor a time (Unix seconds or ISO 8601)`, param)
  return Math.floor(ms / 1000)
}

/** An event's delivery state over the endpoints it was queued for: any endpoint that has not got it after an attempt makes it failed. */
function deliveryState(counts: {delivered: number; failing: number; unattempted: number} | undefined): DeliveryState {
  if (!counts) return 'none'
  if (counts.failing > 0) return 'failed'
  if (counts.unattempted > 0) return 'pending'
  return 'delivered'
}

/** The scope's events the filter selects, oldest first. */
export async function filterEvents(tx: Tx, scope: Scope, filter: EventFilter): Promise<EventDoc[]> {
  let events: EventDoc[] = await tx.all('event', scope)
  if (filter.since !== undefined) {
    if (filter.since.startsWith('evt_')) {
      const at = events.findIndex((e) => e.id === filter.since)
      if (at < 0) throw notFound('event', filter.since, 'resource_missing', 'since')
      events = events.slice(at + 1)
    } else {
      const since = parseTime(filter.since, 'since')
      events = events.filter((e) => e.created >= since)
    }
  }
  if (filter.until !== undefined) {
    const until = parseTime(filter.until, 'until')
    events = events.filter((e) => e.created <= until)
  }
  if (filter.type !== undefined) events = events.filter((e) => matchesEventType(filter.type!, e.type))
  if (filter.delivery !== undefined) {
    const counts = await tx.webhooks.deliveryCounts(events.map((e) => e.id))
    events = events.filter((e) => deliveryState(counts.get(e.id)) === filter.delivery)
  }
  return events
}

/** The scope's events, newest first (or oldest first), that the filter selects, at most `limit`. */
export async function listEvents(tx: Tx, scope: Scope, query: EventFilter & {order?: 'asc' | 'desc'; limit: number}) {
  const events = filterEvents(tx, scope, query)
  const data = query.order === 'asc' ? events : (await events).reverse()
  return {object: 'list' as const, has_more: (await data).length > query.limit, data: (await data).slice(0, query.limit)}
}

/**
 * Queues a logged event again, now (same id and body): to one endpoint of its merchant and environment,
 * or to every endpoint there that selects its type.
 */
export async function resendEvent(tx: Tx, id: string, endpoint?: string) {
  const {scope, doc} = await findDoc(tx, 'event', id, 'event')
  if (endpoint !== undefined) await checkEndpointScope(tx, endpoint, scope, `event ${id}`)
  return {object: 'event_resend' as const, event: id, queued_deliveries: await tx.endpoints.resend(scope, doc, endpoint)}
}

/** Queues again, oldest first, every event of the merchant and environment that the filter selects. */
export async function resendEvents(tx: Tx, body: z.output<typeof adminEventsResend>) {
  const scope: Scope = {merchant: body.merchant, env: body.env}
  if (body.endpoint !== undefined) await checkEndpointScope(tx, body.endpoint, scope, `merchant ${body.merchant} (${body.env})`)
  const events = await filterEvents(tx, scope, body)
  if (events.length > RESEND_MAX) {
    throw invalid('too_many_events', `The filter selects ${events.length} events; one resend queues at most ${RESEND_MAX}: narrow it with since/until/type`, 'since')
  }
  let queued = 0
  for (const event of events) queued += await tx.endpoints.resend(scope, event, body.endpoint)
  return {object: 'event_resend_batch' as const, events: events.length, queued_deliveries: queued, first: events[0]?.id ?? null, last: events.at(-1)?.id ?? null}
}

async function checkEndpointScope(tx: Tx, endpoint: string, scope: Scope, what: string): Promise<void> {
  const we = await requireEndpoint(tx,endpoint,'endpoint')
  if (we.merchant !== scope.merchant || we.env !== scope.env) throw invalid('endpoint_mismatch', `Endpoint ${endpoint} belongs to another merchant or environment than ${what}`, 'endpoint')
}
