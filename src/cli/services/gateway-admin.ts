/**
 * What the commands that script a running gateway share: the admin key and merchant flags (the
 * lookups behind them are in AdminCommand).
 */
import {Flags} from '@oclif/core'

export const ADMIN_KEY_ENV = 'PAYAPP_ADMIN_KEY'
export const MERCHANT_ENV = 'PAYAPP_MERCHANT'

export const adminFlags = {
  'admin-key': Flags.string({env: ADMIN_KEY_ENV, description: 'The gateway\'s admin key ("gateway start" prints it; its --json output has it in full). [default: the profile\'s, saved by "gateway start --seed"]'}),
  merchant: Flags.string({env: MERCHANT_ENV, description: "Merchant id (mch_…). [default: the profile's merchant, else the merchant of its token]"}),
}
