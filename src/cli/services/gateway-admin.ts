/**
 * What the commands that script a running gateway share: the admin key and merchant flags (the
 * lookups behind them are in AdminCommand).
 */
import {Flags} from '@oclif/core'

import {ENV_VARS} from '../config.js'
import {date} from '../output.js'

export const adminFlags = {
  'admin-key': Flags.string({env: ENV_VARS.adminKey, description: 'The gateway\'s admin key ("gateway start" prints it; its --json output has it in full). [default: the profile\'s, saved by "gateway start --seed"]'}),
  merchant: Flags.string({env: ENV_VARS.merchant, description: "Merchant id (mch_…). [default: the profile's merchant, else the merchant of its token]"}),
}

/** Whose test clock a `gateway clock` command reads or moves: the merchant's, or with --all every clock. */
export const clockFlags = {
  merchant: Flags.string({env: ENV_VARS.merchant, description: "Whose clock: merchant id (mch_…). [default: the profile's merchant; none configured: every clock]", exclusive: ['all']}),
  all: Flags.boolean({description: "Every merchant's clock (the shared clock) instead of the profile's merchant's.", default: false}),
}

/** The merchant whose clock to use, or undefined for every clock (--all, or no merchant configured). */
export const clockMerchant = async (all: boolean, configured: () => Promise<string | undefined>) => (all ? undefined : configured())

/** "Clock of mch_… at <date> (offset N s)", or "Shared clock at …". */
export const describeClock = (c: {merchant: string | null; now: number; offset_seconds: number}) =>
  `${c.merchant ? `Clock of ${c.merchant}` : 'Shared clock'} at ${date(c.now)} (offset ${c.offset_seconds} s)`
