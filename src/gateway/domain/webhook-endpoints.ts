/**
 * Webhook endpoints (spec: Events; set up through the admin API here): per merchant and mode, each
 * selecting event types (`*`, `prefix.*` or one type, see events.ts). The signing secret is shown in full
 * once, when created; lists mask it. Deleting an endpoint stops its pending deliveries. An endpoint may
 * belong to an installed app (`installation`): it then gets only what the app's scopes may read.
 * Delivery itself (signing, retries on the gateway clock) is webhooks.ts.
 */
import type {z} from 'zod'

import {mask} from '@payapp/sdk/mask'
import type {adminWebhookEndpointCreate, adminWebhookSecretRotate} from '@payapp/sdk/schemas/admin'
import {notFound} from '../errors.js'
import type {Tx} from './context.js'
import type {WebhookEndpointDoc} from '../webhooks.js'
import {requireMerchant} from './merchants.js'

export async function createWebhookEndpoint(tx: Tx, body: z.output<typeof adminWebhookEndpointCreate>): Promise<WebhookEndpointDoc> {
  await requireMerchant(tx, body.merchant)
  if (body.installation !== undefined) {
    // An app's endpoint belongs to an installation of this merchant and environment.
    const inst = await tx.credentials.byId(body.installation)
    if (inst?.kind !== 'installation' || inst.merchant !== body.merchant || inst.env !== body.env) {
      throw notFound('installation of this merchant and environment', body.installation, 'resource_missing', 'installation')
    }
  }
  return await tx.endpoints.create(body)
}

export async function listWebhookEndpoints(tx: Tx, merchant: string) {
  const data = (await tx.endpoints.list(merchant)).map((e) => ({...e, secret: mask(e.secret)}))
  return {object: 'list' as const, has_more: false, data}
}

export async function requireEndpoint(tx: Tx, id: string, param?: string): Promise<WebhookEndpointDoc> {
  const endpoint = await tx.endpoints.get(id)
  if (!endpoint) throw notFound('webhook endpoint', id, undefined, param)
  return endpoint
}

/** How long a rotated-out secret keeps signing unless the rotation says otherwise (seconds, gateway clock). */
export const DEFAULT_SECRET_OVERLAP_SECONDS = 24 * 3600

/**
 * A new signing secret, answered in full this once (lists mask it). The secret it replaces keeps signing,
 * as a second `v1` of each delivery's signature, for `expirePreviousIn` seconds of gateway-clock time
 * (default 24 h, like the platforms receivers know; 0 ends it at once), so receivers can switch without
 * dropping events.
 */
export async function rotateWebhookSecret(tx: Tx, id: string, body: z.output<typeof adminWebhookSecretRotate>): Promise<WebhookEndpointDoc> {
  await requireEndpoint(tx, id)
  return (await tx.endpoints.rotateSecret(id, body.expire_previous_in_seconds ?? DEFAULT_SECRET_OVERLAP_SECONDS, body.secret))!
}

export async function deleteWebhookEndpoint(tx: Tx, id: string) {
  await requireEndpoint(tx, id)
  await tx.endpoints.remove(id)
  return {id, object: 'webhook_endpoint' as const, deleted: true as const}
}

/** The endpoint's attempt log, oldest first. */
export async function webhookDeliveries(tx: Tx, id: string) {
  await requireEndpoint(tx, id)
  return {object: 'list' as const, has_more: false, data: await tx.endpoints.deliveries(id)}
}
