/**
 * Subscription links (spec: App API, Subscription links). Live installations only (the endpoint table
 * marks them `env: 'live'`). The merchant and store come from the installation, never from the body;
 * amount, currency and interval are fixed once created (the update schema answers them with
 * `parameter_immutable`). An update that changes nothing (archiving an archived link) answers the link
 * as it is, with no event; `active: false` archives (`subscription_link.archived`).
 */
import type {z} from 'zod'

import type {SubscriptionLinkUpdate, subscriptionLinkCreate} from '@payapp/sdk/schemas/commerce'
import {newId} from '../ids.js'
import type {Tx} from './context.js'
import type {Scope, SubscriptionLinkDoc} from '../storage/documents.js'
import {mergeMetadata, requireDoc, stamp} from './shared.js'

export const requireLink = async (tx: Tx, scope: Scope, id: string) => requireDoc(tx, 'subscription_link', scope, id, 'subscription link')

export async function createLink(tx: Tx, scope: Scope, body: z.output<typeof subscriptionLinkCreate>): Promise<SubscriptionLinkDoc> {
  const base = stamp(tx, scope, 'subscription_link', newId('sublink', 24))
  const link: SubscriptionLinkDoc = {
    ...base,
    name: body.name ?? 'Subscription',
    description: body.description ?? null,
    amount: body.amount,
    currency: body.currency,
    interval: body.interval,
    interval_count: body.interval_count,
    trial_period_days: body.trial_period_days ?? null,
    url: `${tx.baseUrl}/l/${base.id}`,
    active: true,
    archived_at: null,
    metadata: body.metadata ?? {},
    updated: base.created,
  }
  await tx.insert('subscription_link', scope, link, {created: link.created})
  await tx.emit(scope, 'subscription_link.created', link)
  return link
}

/** Applies an update; `active: false` archives. */
export async function updateLink(tx: Tx, scope: Scope, link: SubscriptionLinkDoc, body: SubscriptionLinkUpdate): Promise<SubscriptionLinkDoc> {
  const now = tx.now(scope)
  const next: SubscriptionLinkDoc = {
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
  await tx.save(next)
  await tx.emit(scope, link.active && !next.active ? 'subscription_link.archived' : 'subscription_link.updated', next)
  return next
}
