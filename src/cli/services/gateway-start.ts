/**
 * `payapp gateway start`'s work, without oclif: the `--rate-limit` and `--faults` flags read into the
 * gateway's options, and the seeded credentials saved to a profile only when that cannot silently
 * repoint another gateway's profile. The command declares flags, starts the gateway and prints.
 */
import type {Bucket} from '@payapp/sdk/endpoints'
import type {ConfigFile, Env} from '../config.js'
import type {CredentialKind} from '../credentials.js'
import type {RateLimitConfig} from '../../gateway/server.js'
import {usageError} from '../exit-codes.js'

const BUCKET_NAMES = {writes: 'write', reads: 'read', checkout: 'checkout'} as const

/** `on`, `off`, or `writes=N,reads=N,checkout=N[,window=S]` (limits per window, default one minute). */
export function parseRateLimit(value: string): {enabled: boolean; config?: RateLimitConfig} {
  if (value === 'on') return {enabled: true}
  if (value === 'off') return {enabled: false}
  const config: RateLimitConfig & {limits: Partial<Record<Bucket, number>>} = {limits: {}}
  for (const part of value.split(',')) {
    const [name, raw] = part.split('=').map((s) => s.trim())
    const n = Number(raw)
    if (!Number.isInteger(n) || n < 1) throw usageError(`--rate-limit ${part}: expected NAME=N with a positive whole N`, '--rate-limit')
    if (name === 'window') config.windowSeconds = n
    else if (name && name in BUCKET_NAMES) config.limits[BUCKET_NAMES[name as keyof typeof BUCKET_NAMES]] = n
    else throw usageError(`--rate-limit: unknown limit "${name}"; use on, off, or writes=N,reads=N,checkout=N[,window=SECONDS]`, '--rate-limit')
  }
  return {enabled: true, config}
}

/** The rules of a `--faults` file, checked against the admin API's schema: a usage error names what is wrong. */
export async function readFaultFile(file: string) {
  const [{readFile}, {parse}, {adminFaultFile}] = await Promise.all([import('node:fs/promises'), import('yaml'), import('@payapp/sdk/schemas/admin')])
  let content: unknown
  try {
    // YAML is a superset of JSON: one parser reads both.
    content = parse(await readFile(file, 'utf8'))
  } catch (error) {
    throw usageError(`--faults ${file}: ${(error as Error).message}`, '--faults')
  }
  const parsed = adminFaultFile.safeParse(content)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw usageError(`--faults ${file}: ${issue.path.join('.') || 'the file'}: ${issue.message}`, '--faults')
  }
  return Array.isArray(parsed.data) ? parsed.data : parsed.data.faults
}

export interface SeededCredentials {
  merchant: string
  installations: Record<Env, {token: string}>
  secret_keys: Record<Env, {secret_key: string}>
}

/** What saving a profile needs of the CLI: its config, its credential store, and a way to ask. */
export interface ProfileStore {
  loadConfig(): Promise<ConfigFile>
  saveCredential(kind: CredentialKind, secret: string, ctx: {profile: string; env: Env; baseUrl: string}): Promise<unknown>
  saveProfile(profile: string, values: {merchant: string}): Promise<unknown>
  /** Asks on a terminal; undefined when no one can be asked (no TTY, --json). */
  confirm?(question: string): Promise<boolean>
  /** Where a refusal is reported for a human (stderr). */
  warn(note: string): void
}

/**
 * Saves the seeded credentials to the profile when that cannot repoint another gateway's profile
 * silently: it is new, already points at this URL, or the user agreed (`confirm`, or `choice` true);
 * `choice` false never writes.
 */
export async function saveSeedProfile(
  store: ProfileStore,
  opts: {profile: string; url: string; adminKey: string; seed: SeededCredentials; choice: boolean | undefined},
): Promise<{saved: boolean; note: string}> {
  const {profile, url, adminKey, seed, choice} = opts
  if (choice === false) return {saved: false, note: `Profile "${profile}" not written (--no-save-profile)`}
  const existing = (await store.loadConfig()).profiles[profile]
  const elsewhere = existing?.base_url !== undefined && existing.base_url !== url
  if (elsewhere && choice === undefined) {
    const agreed = store.confirm !== undefined && (await store.confirm(`Profile "${profile}" points at ${existing.base_url}. Point it at this gateway (${url}) instead?`))
    if (!agreed) {
      const note = `Profile "${profile}" points at ${existing.base_url} and was left as it is: pass --save-profile to point it here, or --profile NAME to save elsewhere`
      store.warn(note)
      return {saved: false, note}
    }
  }
  const ctx = {profile, baseUrl: url}
  for (const env of ['test', 'live'] as const) {
    await store.saveCredential('token', seed.installations[env].token, {...ctx, env})
    await store.saveCredential('secret_key', seed.secret_keys[env].secret_key, {...ctx, env})
    await store.saveCredential('admin_key', adminKey, {...ctx, env})
  }
  await store.saveProfile(profile, {merchant: seed.merchant})
  const what = existing === undefined ? `Saved to the new profile "${profile}"` : elsewhere ? `Repointed profile "${profile}" (was ${existing.base_url})` : `Updated profile "${profile}"`
  return {saved: true, note: `${what}: tokens, secret keys, admin key and merchant ${seed.merchant}`}
}
