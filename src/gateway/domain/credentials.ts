/**
 * Installations (App API tokens) and secret keys (store and merchant API): issued to a merchant by the
 * admin API or the seed, shown in full once, revoked for good. The hashes and the lookup cache live in
 * `Credentials` (platform.ts); these are the resource's rules and shapes.
 */
import type * as admin from '@payapp/sdk/schemas/admin'
import {notFound} from '../errors.js'
import type {Platform} from '../platform.js'
import {requireMerchant} from './merchants.js'

export function createInstallation(gw: Platform, body: admin.AdminInstallationCreateOut) {
  const merchant = requireMerchant(gw, body.merchant)
  const {id, token} = gw.credentials.issue('installation', merchant.id, body.env, body.scopes, {appName: body.app_name})
  return {id, object: 'installation' as const, token, merchant: merchant.id, store: merchant.store.id, env: body.env, scopes: [...new Set(body.scopes)]}
}

/**
 * A secret key (server-side, every scope it is given) or a publishable key (`pk_…`: browsers of its
 * allow-listed origins, creating checkout sessions with line items and nothing else).
 */
export function createApiKey(gw: Platform, body: admin.AdminKeyCreateOut) {
  const merchant = requireMerchant(gw, body.merchant)
  const scopes = [...new Set(body.scopes)]
  if (body.type === 'publishable') {
    const {id, token} = gw.credentials.issue('publishable_key', merchant.id, body.mode, scopes, {origins: body.allowed_origins})
    return {id, object: 'publishable_key' as const, publishable_key: token, merchant: merchant.id, mode: body.mode, scopes, allowed_origins: [...new Set(body.allowed_origins)]}
  }
  const {id, token} = gw.credentials.issue('secret_key', merchant.id, body.mode, scopes)
  return {id, object: 'secret_key' as const, secret_key: token, merchant: merchant.id, mode: body.mode, scopes}
}

/** The credential fails with 401 on its very next request; an unknown or already revoked id is a 404. */
export function revokeCredential(gw: Platform, kind: 'installation' | 'key', id: string) {
  const kinds = kind === 'installation' ? (['installation'] as const) : (['secret_key', 'publishable_key'] as const)
  if (!gw.credentials.revoke(id, kinds)) throw notFound(kind === 'installation' ? 'installation' : 'API key', id)
  return {id, object: kind === 'installation' ? 'installation' : 'api_key', revoked: true as const}
}
