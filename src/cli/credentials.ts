/**
 * Where secrets live. First choice: the OS keychain through keytar (service `payapp`, account
 * `profile:env:kind`). Every keychain call has a time limit, because a locked or absent Secret Service
 * on headless Linux can fail or hang; on failure the store falls back to `credentials.json` (mode 0600)
 * in the config dir and says so once. `PAYAPP_KEYCHAIN=off` skips the keychain entirely.
 */
import {readFileSync} from 'node:fs'
import {rm} from 'node:fs/promises'
import {join} from 'node:path'

import {ENV_VARS, type Env, readConfig, saveProfile, updateConfig, writePrivateFile} from './config.js'

/**
 * `admin_key`: a local gateway's admin key, saved by `gateway start --seed` for `listen`, `trigger` and
 * `gateway tokens create`; `webhook_secret`: the signing secret `listen` registers its endpoints with.
 */
export type CredentialKind = 'token' | 'secret_key' | 'admin_key' | 'webhook_secret'
/** The credentials of the platform's APIs, which `login` stores. */
export const CREDENTIAL_KINDS = ['token', 'secret_key'] as const satisfies readonly CredentialKind[]
export const ALL_CREDENTIAL_KINDS: readonly CredentialKind[] = ['token', 'secret_key', 'admin_key', 'webhook_secret']
export type BackendName = 'keychain' | 'file'

export const KEYCHAIN_SERVICE = 'payapp'
export const CREDENTIALS_FILE = 'credentials.json'
export const DEFAULT_KEYCHAIN_TIMEOUT_MS = 3000

/** The part of keytar's API the store uses; tests inject their own. */
export interface Keychain {
  getPassword(service: string, account: string): Promise<string | null>
  setPassword(service: string, account: string, password: string): Promise<void>
  deletePassword(service: string, account: string): Promise<boolean>
  findCredentials(service: string): Promise<Array<{account: string; password: string}>>
}

export interface StoredCredential {
  profile: string
  env: Env
  kind: CredentialKind
  secret: string
  backend: BackendName
}

export interface SetResult {
  backend: BackendName
  /** Human description of where it went, e.g. `OS keychain (service "payapp")` or the file path. */
  location: string
}

export interface CredentialStoreOptions {
  configDir: string
  /** `undefined`: load keytar lazily; `null`: no keychain; an object: use it (tests). */
  keychain?: Keychain | null
  timeoutMs?: number
  /** Where the one-time fallback warning goes; default stderr. */
  warn?: (message: string) => void
  env?: NodeJS.ProcessEnv
}

export function accountFor(profile: string, env: Env, kind: CredentialKind): string {
  return `${profile}:${env}:${kind}`
}

function parseAccount(account: string): {profile: string; env: Env; kind: CredentialKind} | undefined {
  const match = /^(.+):(live|test):(token|secret_key|admin_key|webhook_secret)$/.exec(account)
  return match ? {profile: match[1], env: match[2] as Env, kind: match[3] as CredentialKind} : undefined
}

/** The one masking rule (packages/sdk/src/mask.ts), re-exported where the CLI's credential code has always offered it. */
export {mask} from '@payapp/sdk/mask'

/** The environment a credential's prefix names (`app_live_…`, `sk_test_…`), if it names one. */
export function envOfCredential(secret: string): Env | undefined {
  return /^(?:app|sk)_(live|test)_/.exec(secret)?.[1] as Env | undefined
}

/** What to do about an unusable keychain, by its reason; nothing when the user turned it off. */
export function keychainAdvice(reason: string): string {
  if (reason.startsWith('disabled by')) return ''
  if (reason.startsWith('keytar could not be loaded')) {
    return '. To use the OS keychain: install libsecret (Debian/Ubuntu: sudo apt-get install libsecret-1-dev; Fedora: libsecret-devel), then run "npm rebuild keytar" where payapp is installed; or set PAYAPP_KEYCHAIN=off to use the file without this warning'
  }
  return '. To use the OS keychain: unlock or start a Secret Service (e.g. gnome-keyring) in this session; or set PAYAPP_KEYCHAIN=off to use the file without this warning'
}

class KeychainTimeout extends Error {}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new KeychainTimeout(`${what} did not answer within ${ms} ms`)), ms)
    // A hung keychain must not keep the process alive on its own account.
    timer.unref()
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

async function loadKeytar(): Promise<Keychain> {
  // A variable specifier: keytar is an optional native dependency and may be absent at build and run time.
  const specifier = 'keytar'
  const mod = (await import(specifier)) as {default?: Keychain} & Keychain
  const keytar = mod.default ?? mod
  if (typeof keytar.getPassword !== 'function') throw new Error('keytar has no getPassword')
  return keytar
}

type FileShape = {credentials: Record<string, string>}

export class CredentialStore {
  readonly configDir: string
  readonly filePath: string
  readonly timeoutMs: number
  #keychain: Keychain | null | undefined
  /** Why the keychain is not used in this process, once known. */
  #keychainUnusable?: string
  /** True once a keychain call timed out: its native call may still be pending in the thread pool. */
  #keychainHung = false
  /** True once a keychain call failed or timed out: what the keychain holds is then unknown. */
  #keychainFailed = false
  readonly #warn: (message: string) => void
  readonly #env: NodeJS.ProcessEnv

  constructor(options: CredentialStoreOptions) {
    this.configDir = options.configDir
    this.filePath = join(options.configDir, CREDENTIALS_FILE)
    this.#env = options.env ?? process.env
    const fromEnv = Number(this.#env[ENV_VARS.keychainTimeout])
    this.timeoutMs = options.timeoutMs ?? (Number.isFinite(fromEnv) && fromEnv > 0 ? fromEnv : DEFAULT_KEYCHAIN_TIMEOUT_MS)
    this.#keychain = options.keychain
    this.#warn = options.warn ?? ((message) => process.stderr.write(message + '\n'))
    const setting = this.#env[ENV_VARS.keychain]?.toLowerCase()
    if (setting && ['off', '0', 'false', 'no'].includes(setting)) this.#keychainUnusable = `disabled by ${ENV_VARS.keychain}=${this.#env[ENV_VARS.keychain]}`
    else if (options.keychain === null) this.#keychainUnusable = 'no keychain available'
  }

  /** Whether a keychain call timed out in this process (the CLI then exits without waiting for it). */
  get keychainHung(): boolean {
    return this.#keychainHung
  }

  async get(profile: string, kind: CredentialKind, env: Env): Promise<string | undefined> {
    const account = accountFor(profile, env, kind)
    // The file first: it only holds an account when the keychain failed at save time, so a hit spares a keychain round trip.
    const fromFile = (await this.#readFile()).credentials[account]
    if (fromFile) return fromFile
    const value = await this.#keychainCall('read', (k) => k.getPassword(KEYCHAIN_SERVICE, account))
    return value.ok && value.result ? value.result : undefined
  }

  /** Saves a secret, preferring the keychain; says which backend took it. */
  async set(profile: string, kind: CredentialKind, env: Env, secret: string): Promise<SetResult> {
    const account = accountFor(profile, env, kind)
    const stored = await this.#keychainCall('write', (k) => k.setPassword(KEYCHAIN_SERVICE, account, secret))
    if (stored.ok) {
      // Drop any older copy in the file, which `get` would otherwise prefer.
      await this.#removeFromFile([account])
      return {backend: 'keychain', location: `OS keychain (service "${KEYCHAIN_SERVICE}", account "${account}")`}
    }
    await this.#warnOnce(stored.reason)
    const file = await this.#readFile()
    file.credentials[account] = secret
    await this.#writeFile(file)
    return {backend: 'file', location: this.filePath}
  }

  /** Removes a secret from both backends; true if either held it. */
  async delete(profile: string, kind: CredentialKind, env: Env): Promise<boolean> {
    const account = accountFor(profile, env, kind)
    const fromKeychain = await this.#keychainCall('delete', (k) => k.deletePassword(KEYCHAIN_SERVICE, account))
    // A secret saved while the keychain worked would outlive this delete: say so rather than report it gone.
    if (!fromKeychain.ok && this.#keychainFailed) {
      this.#warn(`Warning: the OS keychain did not answer (${fromKeychain.reason}); account "${account}" may still be stored there`)
    }
    const fromFile = await this.#removeFromFile([account])
    return (fromKeychain.ok && fromKeychain.result) || fromFile
  }

  /** Every stored credential, from both backends (the file wins, as in `get`), in one keychain call. */
  async list(): Promise<StoredCredential[]> {
    const byAccount = new Map<string, StoredCredential>()
    const found = await this.#keychainCall('list', (k) => k.findCredentials(KEYCHAIN_SERVICE))
    for (const {account, password} of found.ok ? found.result : []) {
      const parsed = parseAccount(account)
      if (parsed && password) byAccount.set(account, {...parsed, secret: password, backend: 'keychain'})
    }
    for (const [account, secret] of Object.entries((await this.#readFile()).credentials)) {
      const parsed = parseAccount(account)
      if (parsed && secret) byAccount.set(account, {...parsed, secret, backend: 'file'})
    }
    return [...byAccount.values()]
  }

  async #keychainCall<T>(what: string, call: (k: Keychain) => Promise<T>): Promise<{ok: true; result: T} | {ok: false; reason: string}> {
    if (this.#keychainUnusable) return {ok: false, reason: this.#keychainUnusable}
    try {
      this.#keychain ??= await loadKeytar()
    } catch (error) {
      // keytar is optional: a missing module or native library is a setup matter, not an error to quote in full.
      const code = (error as NodeJS.ErrnoException).code
      this.#keychainUnusable = code === 'ERR_MODULE_NOT_FOUND' ? 'keytar could not be loaded: it is not installed' : `keytar could not be loaded: ${(error as Error).message.split('\n')[0]}`
      return {ok: false, reason: this.#keychainUnusable}
    }
    const keychain = this.#keychain
    if (!keychain) return {ok: false, reason: 'no keychain available'}
    try {
      return {ok: true, result: await withTimeout(Promise.resolve().then(() => call(keychain)), this.timeoutMs, `keychain ${what}`)}
    } catch (error) {
      if (error instanceof KeychainTimeout) this.#keychainHung = true
      this.#keychainFailed = true
      // Once it failed, skip it for the rest of this process: one slow failure, not one per call.
      this.#keychainUnusable = (error as Error).message.split('\n')[0] || 'keychain error'
      return {ok: false, reason: this.#keychainUnusable}
    }
  }

  async #warnOnce(reason: string): Promise<void> {
    const config = await readConfig(this.configDir)
    if (config.keychain_fallback_warned) return
    this.#warn(`Warning: no usable OS keychain (${reason}); storing credentials in ${this.filePath} (mode 0600)${keychainAdvice(reason)}`)
    await updateConfig(this.configDir, (c) => {
      c.keychain_fallback_warned = true
    })
  }

  async #readFile(): Promise<FileShape> {
    let text: string
    try {
      // Sync: a file of a few hundred bytes, and fs/promises (with its readline and watchers) stays unloaded.
      text = readFileSync(this.filePath, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {credentials: {}}
      throw error
    }
    try {
      const parsed = JSON.parse(text) as Partial<FileShape>
      return {credentials: {...(parsed.credentials ?? {})}}
    } catch {
      throw new Error(`${this.filePath} is not valid JSON; fix or delete it (then log in again)`)
    }
  }

  async #writeFile(file: FileShape): Promise<void> {
    if (Object.keys(file.credentials).length === 0) {
      await rm(this.filePath, {force: true})
      return
    }
    await writePrivateFile(this.configDir, CREDENTIALS_FILE, JSON.stringify({credentials: file.credentials}, null, 2) + '\n')
  }

  async #removeFromFile(accounts: string[]): Promise<boolean> {
    const file = await this.#readFile()
    const present = accounts.filter((a) => a in file.credentials)
    if (present.length === 0) return false
    for (const account of present) delete file.credentials[account]
    await this.#writeFile(file)
    return true
  }
}

export interface SaveCredentialInput {
  profile: string
  env: Env
  kind: CredentialKind
  secret: string
  /** Saved on the profile when given. */
  baseUrl?: string
}

/**
 * What `login` does: store the secret, then record the profile (its base URL, and its environment if
 * it had none) so later commands find it. The first profile saved becomes the current one.
 */
export async function saveCredential(store: CredentialStore, input: SaveCredentialInput): Promise<SetResult> {
  const result = await store.set(input.profile, input.kind, input.env, input.secret)
  const existing = (await readConfig(store.configDir)).profiles[input.profile]
  await saveProfile(store.configDir, input.profile, {
    ...(existing?.env ? {} : {env: input.env}),
    ...(input.baseUrl ? {base_url: input.baseUrl} : {}),
  })
  return result
}
