/**
 * `payapp config get|set`: a profile's defaults by their flag names, with where the value in effect
 * comes from (a flag, a variable, the profile or the built-in default).
 */
import {checkBaseUrl, type ConfigFile, ENV_VARS, isEnv, type Profile, type ResolvedContext} from '../config.js'
import {usageError} from '../exit-codes.js'

export const CONFIG_KEYS = ['base-url', 'env', 'merchant'] as const
export type ConfigKey = (typeof CONFIG_KEYS)[number]

export interface Setting {
  key: ConfigKey
  value: string | null
  source: string | null
}

const SOURCE_NAMES = {flag: 'flag', env: 'environment variable', profile: 'profile', default: 'default'} as const

/** The settings in effect for this run's profile. */
export function profileSettings(config: ConfigFile, ctx: ResolvedContext): Setting[] {
  const merchantEnv = process.env[ENV_VARS.merchant]
  const merchant = merchantEnv ?? config.profiles[ctx.profile]?.merchant ?? null
  return [
    {key: 'base-url', value: ctx.baseUrl, source: ctx.source.baseUrl === 'env' ? ENV_VARS.baseUrl : SOURCE_NAMES[ctx.source.baseUrl]},
    {key: 'env', value: ctx.env, source: ctx.source.env === 'env' ? ENV_VARS.env : SOURCE_NAMES[ctx.source.env]},
    {key: 'merchant', value: merchant, source: merchantEnv ? ENV_VARS.merchant : merchant ? 'profile' : null},
  ]
}

/** The profile field for a `config set`, validated like its flag. */
export function parseSetting(key: ConfigKey, value: string): Profile {
  switch (key) {
    case 'base-url':
      return {base_url: checkBaseUrl(value, 'VALUE').replace(/\/+$/, '')}
    case 'env':
      if (!isEnv(value)) throw usageError(`env must be "live" or "test", not "${value}"`, 'VALUE')
      return {env: value}
    case 'merchant':
      if (!/^mch_\w+$/.test(value)) throw usageError(`merchant must be a merchant id (mch_…), not "${value}"`, 'VALUE')
      return {merchant: value}
  }
}


