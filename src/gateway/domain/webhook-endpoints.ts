/**
 * Webhook endpoints (spec: Events; set up through the admin API here): per merchant and mode, each
 * selecting event types (`*`, `prefix.*` or one type, see events.ts). The signing secret is shown in full
 * once, when created; lists mask it. Deleting an endpoint stops its pending deliveries. Delivery itself
 * (signing, retries on the gateway clock) is webhooks.ts.
 */
import type {z} from 'zod'

import {mask} from '../../sdk/mask.js'
import type {adminWebhookEndpointCreate} from '../../sdk/schemas/admin.js'
import {notFound} from '../errors.js'
import type {Platform} from '../platform.js'
import type {WebhookEndpointDoc} from '../webhooks.js'
import {requireMerchant} from './merchants.js'

export function createWebhookEndpoint(gw: Platform, body: z.output<typeof adminWebhookEndpointCreate>): WebhookEndpointDoc {
  requireMerchant(gw, body.merchant)
  return gw.webhooks.create(body)
}

export function listWebhookEndpoints(gw: Platform, merchant: string) {
  const data = gw.webhooks.list(merchant).map((e) => ({...e, secret: mask(e.secret)}))
  return {object: 'list' as const, has_more: false, data}
}

function requireEndpoint(gw: Platform, id: string): WebhookEndpointDoc {
  const endpoint = gw.webhooks.get(id)
  if (!endpoint) throw notFound('webhook endpoint', id)
  return endpoint
}

export function deleteWebhookEndpoint(gw: Platform, id: string) {
  requireEndpoint(gw, id)
  gw.webhooks.remove(id)
  return {id, object: 'webhook_endpoint' as const, deleted: true as const}
}

/** The endpoint's attempt log, oldest first. */
export function webhookDeliveries(gw: Platform, id: string) {
  requireEndpoint(gw, id)
  return {object: 'list' as const, has_more: false, data: gw.webhooks.deliveries(id)}
}
