/**
 * Installations (App API tokens) and secret keys (store and merchant API): issued to a merchant by the
 * admin API or the seed, shown in full once, revoked for good. The hashes and the lookup cache live in
 * `Credentials` (platform.ts); these are the resource's rules and shapes.
 */
import type * as admin from '@payapp/sdk/schemas/admin'
import {notFound} from '../errors.js'
import type {Tx} from './context.js'
import {requireMerchant} from './merchants.js'

export async function createInstallation(tx: Tx, body: admin.AdminInstallationCreateOut) {
  const merchant = await requireMerchant(tx, body.merchant)
  const {id, token} = await tx.issueCredential('installation', merchant.id, body.env, body.scopes, {appName: body.app_name})
  return {id, object: 'installation' as const, token, merchant: merchant.id, store: merchant.store.id, env: body.env, scopes: [...new Set(body.scopes)]}
}

/**
 * A secret key (server-side, every scope it is given) or a publishable key (`pk_…`: browsers of its
 * allow-listed origins, creating checkout sessions with line items and nothing else).
 */
export async function createApiKey(tx: Tx, body: admin.AdminKeyCreateOut) {
  const merchant = await requireMerchant(tx, body.merchant)
  const scopes = [...new Set(body.scopes)]
  if (body.type === 'publishable') {
    const {id, token} = await tx.issueCredential('publishable_key', merchant.id, body.mode, scopes, {origins: body.allowed_origins})
    return {id, object: 'publishable_key' as const, publishable_key: token, merchant: merchant.id, mode: body.mode, scopes, allowed_origins: [...new Set(body.allowed_origins)]}
  }
  const {id, token} = await tx.issueCredential('secret_key', merchant.id, body.mode, scopes)
  return {id, object: 'secret_key' as const, secret_key: token, merchant: merchant.id, mode: body.mode, scopes}
}

/** The credential fails with 401 on its very next request; an unknown or already revoked id is a 404. */
export async function revokeCredential(tx: Tx, kind: 'installation' | 'key', id: string) {
  const kinds = kind === 'installation' ? (['installation'] as const) : (['secret_key', 'publishable_key'] as const)
  if (!await tx.revokeCredential(id, kinds)) throw notFound(kind === 'installation' ? 'installation' : 'API key', id)
  return {id, object: kind === 'installation' ? 'installation' : 'api_key', revoked: true as const}
}
