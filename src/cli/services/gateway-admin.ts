/**
 * What the `gateway` commands that script a running gateway share: the admin key and merchant flags,
 * and the admin client for this run's base URL.
 */
import {Flags} from '@oclif/core'

import {usageError} from '../exit-codes.js'

export const ADMIN_KEY_ENV = 'PAYAPP_ADMIN_KEY'
export const MERCHANT_ENV = 'PAYAPP_MERCHANT'

export const adminFlags = {
  'admin-key': Flags.string({env: ADMIN_KEY_ENV, description: 'The gateway\'s admin key ("gateway start" prints it; its --json output has it in full).'}),
  merchant: Flags.string({env: MERCHANT_ENV, description: 'Merchant id (mch_…); "gateway start --seed" prints the seeded one.'}),
}

/** The merchant id, or an error that says where to find it: the admin API cannot tell which merchant was seeded. */
export function requireMerchant(merchant: string | undefined): string {
  if (merchant) return merchant
  throw usageError(
    `Missing --merchant or set ${MERCHANT_ENV}: the gateway's admin API does not say which merchant was seeded; "payapp gateway start --seed" prints it (seed.merchant in its --json line)`,
    '--merchant',
  )
}

/** A GatewayAdmin for the gateway at `baseUrl`; the SDK is loaded only when a command runs. */
export async function gatewayAdmin(baseUrl: string, adminKey: string) {
  const {GatewayAdmin} = await import('../../sdk/index.js')
  return new GatewayAdmin({baseUrl, adminKey})
}
