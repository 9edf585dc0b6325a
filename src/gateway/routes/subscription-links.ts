/**
 * Subscription links (spec: App API, Subscription links). Live installations only: the endpoint table
 * marks them `env: 'live'`, so app.ts answers a test installation with 400 `livemode_required`. The
 * merchant and store come from the installation, never from the body (the strict schemas reject a
 * `merchant` field), and another merchant's link is a 404 like a missing one. Amount, currency and
 * interval are fixed once created (the update schema answers them with `parameter_immutable`).
 */
import type {SubscriptionLink, SubscriptionLinkUpdate} from '../../sdk/schemas/commerce.js'
import {created, rawList, type Handlers} from '../app.js'
import type {Scope} from '../db.js'
import {notFound} from '../errors.js'
import {newId} from '../ids.js'
import type {Platform} from '../platform.js'

const KIND = 'subscription_link'

export const subscriptionLinkHandlers: Partial<Handlers> = {
  'subscriptionLinks.list'({gw, scope, query}) {
    const {rows, hasMore} = gw.storage.pageRaw(KIND, scope, query.limit, query.offset)
    return rawList(rows, hasMore)
  },

  'subscriptionLinks.retrieve'({gw, scope, params}) {
    return requireLink(gw, scope, params.id)
  },

  'subscriptionLinks.create'({gw, scope, body}) {
    const now = gw.now()
    const id = newId('sublink', 24)
    const link: SubscriptionLink = {
      id,
      object: 'subscription_link',
      livemode: scope.env === 'live',
      name: body.name ?? 'Subscription',
      description: body.description ?? null,
      amount: body.amount,
      currency: body.currency,
      interval: body.interval,
      interval_count: body.interval_count,
      trial_period_days: body.trial_period_days ?? null,
      url: `${gw.baseUrl}/l/${id}`,
      active: true,
      archived_at: null,
      metadata: body.metadata ?? {},
      created: now,
      updated: now,
    }
    gw.storage.insert(KIND, scope, link, {created: now})
    gw.emit(scope, 'subscription_link.created', link)
    return created(link)
  },

  'subscriptionLinks.update'({gw, scope, params, body}) {
    return change(gw, scope, requireLink(gw, scope, params.id), body)
  },

  'subscriptionLinks.archive'({gw, scope, params}) {
    return change(gw, scope, requireLink(gw, scope, params.id), {active: false})
  },
}

function requireLink(gw: Platform, scope: Scope, id: string): SubscriptionLink {
  const link = gw.storage.get<SubscriptionLink>(KIND, scope, id)
  if (!link) throw notFound('subscription link', id)
  return link
}

/**
 * Applies an update; `active: false` archives. A request that changes nothing (archiving an archived
 * link) answers the link as it is, with no event.
 */
function change(gw: Platform, scope: Scope, link: SubscriptionLink, body: SubscriptionLinkUpdate): SubscriptionLink {
  const now = gw.now()
  const next: SubscriptionLink = {
    ...link,
    name: body.name ?? link.name,
    description: body.description === undefined ? link.description : body.description,
    trial_period_days: body.trial_period_days === undefined ? link.trial_period_days : body.trial_period_days,
    metadata: body.metadata === undefined ? link.metadata : mergeMetadata(link.metadata, body.metadata),
  }
  if (body.active !== undefined && body.active !== link.active) {
    next.active = body.active
    next.archived_at = body.active ? null : now
  }
  if (JSON.stringify(next) === JSON.stringify(link)) return link
  next.updated = now
  gw.storage.save(next)
  gw.emit(scope, link.active && !next.active ? 'subscription_link.archived' : 'subscription_link.updated', next)
  return next
}

/** Sent keys replace stored ones and an empty value deletes its key, as the best-known payments APIs merge metadata. */
function mergeMetadata(stored: Record<string, string>, sent: Record<string, string>): Record<string, string> {
  const merged = {...stored, ...sent}
  for (const [key, value] of Object.entries(sent)) if (value === '') delete merged[key]
  return merged
}
