/**
 * What the commands that script a running gateway share: the admin key and merchant flags (the
 * lookups behind them are in AdminCommand).
 */
import {Flags} from '@oclif/core'

import {ENV_VARS} from '../config.js'

export const adminFlags = {
  'admin-key': Flags.string({env: ENV_VARS.adminKey, description: 'The gateway\'s admin key ("gateway start" prints it; its --json output has it in full). [default: the profile\'s, saved by "gateway start --seed"]'}),
  merchant: Flags.string({env: ENV_VARS.merchant, description: "Merchant id (mch_…). [default: the profile's merchant, else the merchant of its token]"}),
}
