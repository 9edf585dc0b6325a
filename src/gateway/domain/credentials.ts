/**
 * Installations (App API tokens) and secret keys (store and merchant API): issued to a merchant by the
 * admin API or the seed, shown in full once, revoked for good. The hashes and the lookup cache live in
 * `Credentials` (platform.ts); these are the resource's rules and shapes.
 */
import type * as admin from '../../sdk/schemas/admin.js'
import {notFound} from '../errors.js'
import type {Platform} from '../platform.js'
import {requireMerchant} from './merchants.js'

export function createInstallation(gw: Platform, body: admin.AdminInstallationCreateOut) {
  const merchant = requireMerchant(gw, body.merchant)
  const {id, token} = gw.credentials.issue('installation', merchant.id, body.env, body.scopes, body.app_name)
  return {id, object: 'installation' as const, token, merchant: merchant.id, store: merchant.store.id, env: body.env, scopes: [...new Set(body.scopes)]}
}

export function createSecretKey(gw: Platform, body: admin.AdminKeyCreateOut) {
  const merchant = requireMerchant(gw, body.merchant)
  const {id, token} = gw.credentials.issue('secret_key', merchant.id, body.mode, body.scopes)
  return {id, object: 'secret_key' as const, secret_key: token, merchant: merchant.id, mode: body.mode, scopes: [...new Set(body.scopes)]}
}

/** The credential fails with 401 on its very next request; an unknown or already revoked id is a 404. */
export function revokeCredential(gw: Platform, kind: 'installation' | 'secret_key', id: string) {
  if (!gw.credentials.revoke(id, kind)) throw notFound(kind === 'installation' ? 'installation' : 'secret key', id)
  return {id, object: kind, revoked: true as const}
}
