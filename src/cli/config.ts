/**
 * Profiles: `config.json` in oclif's config dir (`$XDG_CONFIG_HOME/payapp`), and the one place that
 * decides which profile, environment and base URL a command uses:
 * flags > env vars > the profile's saved values > defaults.
 * Holds no secrets; credentials live in the credential store.
 */
import {readFileSync} from 'node:fs'
import {chmod, mkdir, rename, rm, writeFile} from 'node:fs/promises'
import {join} from 'node:path'

import {CliError, ExitCode, usageError} from './exit-codes.js'

export type Env = 'live' | 'test'
export const ENVS: readonly Env[] = ['live', 'test']

export interface Profile {
  base_url?: string
  env?: Env
  /** The merchant of a local gateway's profile (`gateway start --seed`, `gateway merchants create --save`), for the admin commands. */
  merchant?: string
}

export interface ConfigFile {
  current_profile?: string
  profiles: Record<string, Profile>
  /** Set once the "no usable OS keychain" warning was shown, so it is shown only once. */
  keychain_fallback_warned?: boolean
}

export const DEFAULTS = {profile: 'default', env: 'test' as Env, baseUrl: 'http://127.0.0.1:4242'} as const

/** Every environment variable the CLI reads, by purpose. */
export const ENV_VARS = {
  profile: 'PAYAPP_PROFILE',
  env: 'PAYAPP_ENV',
  baseUrl: 'PAYAPP_BASE_URL',
  token: 'PAYAPP_TOKEN',
  secretKey: 'PAYAPP_SECRET_KEY',
  keychain: 'PAYAPP_KEYCHAIN',
  keychainTimeout: 'PAYAPP_KEYCHAIN_TIMEOUT_MS',
  verbose: 'PAYAPP_VERBOSE',
  maxRetries: 'PAYAPP_MAX_RETRIES',
  timeout: 'PAYAPP_TIMEOUT',
  adminKey: 'PAYAPP_ADMIN_KEY',
  merchant: 'PAYAPP_MERCHANT',
  webhookSecret: 'PAYAPP_WEBHOOK_SECRET',
} as const

export const CONFIG_FILE = 'config.json'

export function configPath(configDir: string): string {
  return join(configDir, CONFIG_FILE)
}

export function isEnv(value: unknown): value is Env {
  return value === 'live' || value === 'test'
}

/** A profile name is also a keychain account prefix and a JSON key: keep it boring. */
export function assertProfileName(name: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(name)) {
    throw usageError(`Invalid profile name "${name}": use letters, digits, ".", "_" or "-" (at most 64)`, '--profile')
  }
  return name
}

/** Reads `config.json`; a missing file is an empty config, a corrupt one is an error naming the file. */
export async function readConfig(configDir: string): Promise<ConfigFile> {
  const path = configPath(configDir)
  let text: string
  try {
    // Read at start-up by every command: a small file, read at once (node:fs/promises loads a dozen modules).
    text = readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {profiles: {}}
    throw error
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    throw new CliError(`${path} is not valid JSON; fix or delete it`, {exitCode: ExitCode.UNEXPECTED, code: 'config_invalid', cause: error})
  }
  const raw = (parsed && typeof parsed === 'object' ? parsed : {}) as Partial<ConfigFile>
  const profiles: Record<string, Profile> = {}
  for (const [name, p] of Object.entries(raw.profiles ?? {})) {
    if (!p || typeof p !== 'object') continue
    profiles[name] = {
      ...(typeof p.base_url === 'string' ? {base_url: p.base_url} : {}),
      ...(isEnv(p.env) ? {env: p.env} : {}),
      ...(typeof p.merchant === 'string' ? {merchant: p.merchant} : {}),
    }
  }
  return {
    ...raw,
    current_profile: typeof raw.current_profile === 'string' ? raw.current_profile : undefined,
    profiles,
  }
}

/** Writes a file readable by the owner only, atomically (tmp + rename) so a crash never leaves half a file. */
export async function writePrivateFile(dir: string, name: string, content: string): Promise<void> {
  await mkdir(dir, {recursive: true, mode: 0o700})
  // mkdir's mode only applies to directories it creates.
  await chmod(dir, 0o700).catch(() => {})
  const target = join(dir, name)
  const tmp = join(dir, `.${name}.${process.pid}.${Date.now()}.tmp`)
  try {
    await writeFile(tmp, content, {mode: 0o600})
    await chmod(tmp, 0o600)
    await rename(tmp, target)
  } catch (error) {
    await rm(tmp, {force: true}).catch(() => {})
    throw error
  }
}

export async function writeConfig(configDir: string, config: ConfigFile): Promise<void> {
  await writePrivateFile(configDir, CONFIG_FILE, JSON.stringify(config, null, 2) + '\n')
}

/** Read-modify-write of `config.json`; returns the config as written. */
export async function updateConfig(configDir: string, change: (config: ConfigFile) => void | ConfigFile): Promise<ConfigFile> {
  const config = await readConfig(configDir)
  const next = change(config) ?? config
  await writeConfig(configDir, next)
  return next
}

export type Source = 'flag' | 'env' | 'profile' | 'default'

export interface ResolvedContext {
  profile: string
  env: Env
  baseUrl: string
  /** Where each value came from, for `whoami`-style reporting and error messages. */
  source: {profile: Source; env: Source; baseUrl: Source}
}

export interface ContextFlags {
  profile?: string
  env?: string
  'base-url'?: string
}

/**
 * Which profile, environment and base URL to use. Flags win, then `PAYAPP_*` variables, then the
 * profile's saved values, then the defaults. (oclif fills flags from their env vars too; reading the
 * variables here as well keeps this usable outside a command.)
 */
export function resolveContext(config: ConfigFile, flags: ContextFlags = {}, env: NodeJS.ProcessEnv = process.env): ResolvedContext {
  const pick = <T>(flag: T | undefined, envValue: T | undefined, profileValue: T | undefined, fallback: T): [T, Source] => {
    // A flag equal to its env var most likely came from it (oclif fills flags from env vars).
    if (envValue !== undefined && envValue !== '' && (flag === undefined || flag === envValue)) return [envValue, 'env']
    if (flag !== undefined && flag !== '') return [flag, 'flag']
    if (profileValue !== undefined) return [profileValue, 'profile']
    return [fallback, 'default']
  }

  const [profile, profileSource] = pick(flags.profile, env[ENV_VARS.profile], config.current_profile, DEFAULTS.profile)
  assertProfileName(profile)
  const saved = config.profiles[profile] ?? {}

  const envFromVar = env[ENV_VARS.env]
  if (envFromVar && !isEnv(envFromVar)) throw usageError(`${ENV_VARS.env} must be "live" or "test", not "${envFromVar}"`, ENV_VARS.env)
  if (flags.env !== undefined && !isEnv(flags.env)) throw usageError(`--env must be "live" or "test", not "${flags.env}"`, '--env')
  const [mode, envSource] = pick<Env>(flags.env as Env | undefined, envFromVar as Env | undefined, saved.env, DEFAULTS.env)

  const [baseUrl, baseUrlSource] = pick(flags['base-url'], env[ENV_VARS.baseUrl], saved.base_url, DEFAULTS.baseUrl)
  checkBaseUrl(baseUrl, baseUrlSource === 'flag' ? '--base-url' : baseUrlSource === 'env' ? ENV_VARS.baseUrl : `profile "${profile}"`)

  return {profile, env: mode, baseUrl: baseUrl.replace(/\/+$/, ''), source: {profile: profileSource, env: envSource, baseUrl: baseUrlSource}}
}

/**
 * A base URL must be an absolute http(s) URL. `localhost:4343` parses as a URL with the scheme
 * `localhost:`, so the scheme is checked by name, and the error suggests the likely intent.
 */
export function checkBaseUrl(value: string, from: string): string {
  const param = from.startsWith('--') ? from : '--base-url'
  if (/^https?:\/\/[^/]/i.test(value) && URL.canParse(value)) return value
  const hasScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(value)
  const suggestion = hasScheme ? '' : ` (did you mean "http://${value.replace(/^\/+/, '')}"?)`
  throw usageError(`Invalid base URL "${value}" (from ${from}): it must start with http:// or https://${suggestion}`, param)
}

/** Every profile name known to the config (plus `default`, which always exists implicitly). */
export function profileNames(config: ConfigFile): string[] {
  const names = new Set([DEFAULTS.profile, ...Object.keys(config.profiles)])
  if (config.current_profile) names.add(config.current_profile)
  return [...names].sort()
}

/** Makes `name` the current profile; it must exist (or be `default`). */
export async function useProfile(configDir: string, name: string): Promise<ConfigFile> {
  assertProfileName(name)
  return updateConfig(configDir, (config) => {
    if (name !== DEFAULTS.profile && !config.profiles[name]) {
      const known = profileNames(config).join(', ')
      throw usageError(`No profile "${name}" (known: ${known}). Create it with "payapp login --profile ${name}"`, 'NAME')
    }
    config.profiles[name] ??= {}
    config.current_profile = name
  })
}

/** Removes a profile from the config (its credentials are the caller's to delete); false if it was not there. */
export async function deleteProfile(configDir: string, name: string): Promise<boolean> {
  assertProfileName(name)
  let existed = false
  await updateConfig(configDir, (config) => {
    existed = name in config.profiles
    delete config.profiles[name]
    if (config.current_profile === name) delete config.current_profile
  })
  return existed
}

/** Creates or updates a profile; the first profile saved becomes the current one. */
export async function saveProfile(configDir: string, name: string, values: Profile): Promise<ConfigFile> {
  assertProfileName(name)
  return updateConfig(configDir, (config) => {
    config.profiles[name] = {...config.profiles[name], ...values}
    config.current_profile ??= name
  })
}
