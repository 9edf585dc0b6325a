/**
 * Events (spec: Events): the merchant's log of state changes, appended by `Platform.emit` in the
 * transaction of the change. Webhook endpoints and the admin event list select types with one rule.
 */
import {matchesEventType} from '../../sdk/webhooks.js'
import type {Platform} from '../platform.js'
import type {EventDoc, Scope} from '../storage/documents.js'

export {matchesEventType}

/** The scope's events, newest first, of a type or pattern if given, at most `limit`. */
export function listEvents(gw: Platform, scope: Scope, query: {type?: string; limit: number}) {
  const events: EventDoc[] = gw.storage.all('event', scope).reverse()
  const data = query.type === undefined ? events : events.filter((e) => matchesEventType(query.type!, e.type))
  return {object: 'list' as const, has_more: data.length > query.limit, data: data.slice(0, query.limit)}
}
