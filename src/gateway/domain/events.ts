/**
 * Events (spec: Events): the merchant's log of state changes, appended by `Platform.emit` in the
 * transaction of the change. Webhook endpoints and the admin event list select types with one rule.
 */
import {matchesEventType} from '@payapp/sdk/webhooks-node'
import {invalid} from '../errors.js'
import type {Tx} from './context.js'
import type {EventDoc, Scope} from '../storage/documents.js'
import {findDoc} from './shared.js'
import {requireEndpoint} from './webhook-endpoints.js'

export {matchesEventType}

/** The scope's events, newest first, of a type or pattern if given, at most `limit`. */
export async function listEvents(tx: Tx, scope: Scope, query: {type?: string; limit: number}) {
  const events: EventDoc[] = (await tx.all('event', scope)).reverse()
  const data = query.type === undefined ? events : events.filter((e) => matchesEventType(query.type!, e.type))
  return {object: 'list' as const, has_more: data.length > query.limit, data: data.slice(0, query.limit)}
}

/**
 * Queues a logged event again, now (same id and body): to one endpoint of its merchant and environment,
 * or to every endpoint there that selects its type.
 */
export async function resendEvent(tx: Tx, id: string, endpoint?: string) {
  const {scope, doc} = await findDoc(tx, 'event', id, 'event')
  if (endpoint !== undefined) {
    const we = await requireEndpoint(tx, endpoint)
    if (we.merchant !== scope.merchant || we.env !== scope.env) throw invalid('endpoint_mismatch', `Endpoint ${endpoint} belongs to another merchant or environment than event ${id}`, 'endpoint')
  }
  return {object: 'event_resend' as const, event: id, queued_deliveries: await tx.endpoints.resend(scope, doc, endpoint)}
}
