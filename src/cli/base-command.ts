/**
 * The base of every payapp command: shared flags, profile and credential resolution, lazy SDK clients,
 * `--json` output, and the one error handler (message on stderr or JSON on stdout, exit code from
 * `exitCodeFor`). Loaded by every command, so top-level imports stay light: the SDK is imported lazily,
 * and only its client module (not the admin and webhook parts of `sdk/index.js`).
 */
import {Command, Errors, Flags, type Interfaces, ux} from '@oclif/core'

import {ConnectionError, PayappError} from '@payapp/sdk/errors'
import {isLoopbackHost} from '@payapp/sdk/hosts'
import type {EndpointId} from '@payapp/sdk/endpoints'
import type {RequestEvent, ResponseEvent} from '@payapp/sdk/transport'
import {type ConfigFile, type Env, ENV_VARS, type ResolvedContext, readConfig, resolveContext} from './config.js'
import {type CredentialKind, CredentialStore, envOfCredential, mask, type SetResult, saveCredential} from './credentials.js'
import {errorHint} from './error-hints.js'
import {cliFetch} from './http-sender.js'
import {CliError, ExitCode, exitCodeFor, missingCredentialError, usageError} from './exit-codes.js'
import {type Spinner, spinner} from './output.js'
import {canPrompt, promptLine, valueOrStdin} from './prompt.js'
import {bodyFromFlags, type DerivedFlags, missingRequired, parsePrompted, setPath, valueAt} from './schema-flags.js'

export type BaseFlags<T extends typeof Command> = Interfaces.InferredFlags<(typeof BaseCommand)['baseFlags'] & T['flags']>
export type BaseArgs<T extends typeof Command> = Interfaces.InferredArgs<T['args']>

/** The `--json` error shape: every key always present (null when unknown), like the API's envelope plus `status`. */
export interface JsonError {
  error: {type: string; code: string | null; param: string | null; message: string; request_id: string | null; status: number | null}
}

const truthy = (value: string | undefined) => Boolean(value && !['0', 'false', 'no', 'off'].includes(value.toLowerCase()))

// Exit without waiting for a timed-out keychain call still pending in libuv's thread pool.
const HUNG_KEYCHAIN_EXIT_DELAY_MS = 200
/** A CLI call gives up after this long, retries included, unless --timeout says otherwise. */
const DEFAULT_TIMEOUT_S = 60

/** Which credential each kind is read from in the environment. */
const CREDENTIAL_ENV: Record<CredentialKind, string> = {
  token: ENV_VARS.token, secret_key: ENV_VARS.secretKey, admin_key: ENV_VARS.adminKey, webhook_secret: ENV_VARS.webhookSecret,
}
const CREDENTIAL_NAME: Record<CredentialKind, string> = {
  token: 'installation token', secret_key: 'secret key', admin_key: 'gateway admin key', webhook_secret: 'webhook signing secret',
}

/** The global flags a command of the platform's APIs takes; a command that uses none of some hides them (see `globalFlags`). */
const GLOBAL_FLAGS = {
  env: Flags.option({
    options: ['live', 'test'] as const,
    env: ENV_VARS.env,
    helpGroup: 'GLOBAL',
    description: "Environment: the profile's saved one, else test.",
  })(),
  profile: Flags.string({env: ENV_VARS.profile, helpGroup: 'GLOBAL', description: 'Profile to use (default: the current profile).'}),
  'base-url': Flags.string({env: ENV_VARS.baseUrl, helpGroup: 'GLOBAL', description: 'Platform base URL (default: the profile\'s, else http://127.0.0.1:4242).'}),
  'max-retries': Flags.integer({
    env: ENV_VARS.maxRetries,
    min: 0,
    max: 10,
    helpGroup: 'GLOBAL',
    description: 'Retries of a request after 429, 5xx or a dropped connection (each wait is shown on stderr). [default: 4]',
  }),
  timeout: Flags.integer({
    env: ENV_VARS.timeout,
    min: 1,
    helpGroup: 'GLOBAL',
    description: `Give up after this many seconds, retries and waits included. [default: ${DEFAULT_TIMEOUT_S}]`,
  }),
  verbose: Flags.boolean({env: ENV_VARS.verbose, helpGroup: 'GLOBAL', description: 'Log HTTP requests and stack traces to stderr.'}),
}
type GlobalFlagName = keyof typeof GLOBAL_FLAGS

/** The global flags with those a command does not use hidden from its help (still accepted, so scripts that pass them keep working). */
export function globalFlags<K extends GlobalFlagName>(...used: K[]): typeof GLOBAL_FLAGS {
  const out: Record<string, unknown> = {}
  for (const [name, flag] of Object.entries(GLOBAL_FLAGS)) out[name] = used.includes(name as K) ? flag : {...flag, hidden: true}
  return out as typeof GLOBAL_FLAGS
}

/** Seconds as a human wait: `56 s`, `2 min 5 s`, `800 ms`. */
function waitText(ms: number): string {
  if (ms < 1000) return `${ms} ms`
  const s = Math.round(ms / 1000)
  return s < 120 ? `${s} s` : `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`
}

export abstract class BaseCommand<T extends typeof Command> extends Command {
  static override enableJsonFlag = true
  /**
   * The endpoint of packages/sdk/src/endpoints.ts this command wraps, if it wraps one, or several when they are one
   * operation (a POST alias of a PATCH, a filtered form of a list); test/cli/coverage.test.ts holds each
   * endpoint to exactly one command.
   */
  static endpoint?: EndpointId | readonly EndpointId[]

  static override baseFlags = GLOBAL_FLAGS

  protected flags!: BaseFlags<T>
  protected args!: BaseArgs<T>

  #config?: Promise<ConfigFile>
  /** The context of this run, once resolved: error messages name its base URL. */
  #ctx?: ResolvedContext
  #store?: CredentialStore
  #spinners = new Set<Spinner>()

  public override async init(): Promise<void> {
    await super.init()
    const {args, flags} = await this.parse({
      flags: this.ctor.flags,
      baseFlags: (this.ctor as typeof BaseCommand).baseFlags,
      enableJsonFlag: this.ctor.enableJsonFlag,
      args: this.ctor.args,
      strict: this.ctor.strict,
    })
    this.flags = flags as BaseFlags<T>
    this.args = args as BaseArgs<T>
  }

  /** The saved config (read once per run). */
  protected loadConfig(): Promise<ConfigFile> {
    this.#config ??= readConfig(this.config.configDir)
    return this.#config
  }

  /** Profile, environment and base URL for this run: flags > env vars > profile > defaults. */
  protected async context(): Promise<ResolvedContext> {
    const flags = (this.flags ?? {}) as {profile?: string; env?: string; 'base-url'?: string}
    this.#ctx = resolveContext(await this.loadConfig(), flags)
    return this.#ctx
  }

  protected credentialStore(): CredentialStore {
    this.#store ??= this.createCredentialStore()
    return this.#store
  }

  /** Overridable so tests can inject a keychain. */
  protected createCredentialStore(): CredentialStore {
    return new CredentialStore({configDir: this.config.configDir})
  }

  /** Stores a credential for `login`-style commands and records the profile; returns where it went. */
  protected async saveCredential(kind: CredentialKind, secret: string, ctx?: {profile: string; env: Env; baseUrl?: string}): Promise<SetResult> {
    const target = ctx ?? (await this.context())
    return saveCredential(this.credentialStore(), {...target, kind, secret})
  }

  /**
   * The credential for this run: its env var first (`PAYAPP_TOKEN`, `PAYAPP_SECRET_KEY`, `PAYAPP_ADMIN_KEY`;
   * nothing is written), then the store. Missing → exit 3 with a message that names the way to provide it.
   * A credential whose prefix names the other environment is refused (exit 2), as `login` refuses it.
   */
  protected async resolveCredential(kind: CredentialKind, ctx?: ResolvedContext): Promise<string> {
    const found = await this.findCredential(kind, ctx)
    if (found) return found.secret
    const {profile, env} = ctx ?? (await this.context())
    const envVar = CREDENTIAL_ENV[kind]
    const profileArg = profile === 'default' ? '' : ` --profile ${profile}`
    const how = kind === 'admin_key'
      ? `pass --admin-key, set ${envVar}, or use the profile "payapp gateway start --seed" saved (--profile local)`
      : `run "payapp login --env ${env}${profileArg} ${kind === 'token' ? '--token' : '--secret-key'} …" or set ${envVar}`
    throw missingCredentialError(`No ${env} ${CREDENTIAL_NAME[kind]} for profile "${profile}": ${how}`, envVar)
  }

  /** The credential of this kind and where it came from, or undefined; checks its environment (see `resolveCredential`). */
  protected async findCredential(kind: CredentialKind, ctx?: ResolvedContext): Promise<{secret: string; source: 'env' | 'store'} | undefined> {
    const context = ctx ?? (await this.context())
    const fromEnv = process.env[CREDENTIAL_ENV[kind]]
    const found = fromEnv
      ? {secret: fromEnv, source: 'env' as const}
      : await this.credentialStore().get(context.profile, kind, context.env).then((secret) => (secret ? {secret, source: 'store' as const} : undefined))
    if (found) this.checkCredentialEnv(kind, found.secret, context, found.source === 'env' ? CREDENTIAL_ENV[kind] : `profile "${context.profile}"`)
    return found
  }

  /** Refuses (exit 2) a credential whose prefix (`app_test_…`) names another environment than this run's. */
  protected checkCredentialEnv(kind: CredentialKind, secret: string, ctx: ResolvedContext, from: string): void {
    const own = envOfCredential(secret)
    if (!own || own === ctx.env) return
    const envFrom = ctx.source.env === 'flag' ? '--env' : ctx.source.env === 'env' ? ENV_VARS.env : `profile "${ctx.profile}"`
    throw usageError(
      `The ${CREDENTIAL_NAME[kind]} from ${from} (${mask(secret)}) is a ${own} credential, but the environment is ${ctx.env} (from ${envFrom}): use --env ${own}, or a ${ctx.env} credential`,
      from.startsWith('PAYAPP_') ? from : '--env',
    )
  }

  /** An App API client for this run's profile and environment. */
  protected async appClient() {
    const ctx = await this.context()
    const token = await this.resolveCredential('token', ctx)
    const {AppClient} = await import('@payapp/sdk/client')
    return new AppClient({token, baseUrl: ctx.baseUrl, ...this.clientOptions()})
  }

  /** A Store API client (secret key) for this run's profile and environment. */
  protected async storeClient() {
    const ctx = await this.context()
    const secretKey = await this.resolveCredential('secret_key', ctx)
    const {StoreClient} = await import('@payapp/sdk/client')
    return new StoreClient({secretKey, baseUrl: ctx.baseUrl, ...this.clientOptions()})
  }

  /**
   * Transport options of every client this run makes: the retry budget and total time bound from the
   * flags, a refused connection to this machine reported at once, each retry's wait shown on stderr,
   * and with --verbose every request.
   */
  protected clientOptions() {
    const flags = (this.flags ?? {}) as {'max-retries'?: number; timeout?: number}
    const verbose = this.httpLogging()
    const onResponse = (e: ResponseEvent) => {
      verbose.onResponse?.(e)
      if (e.retry && !this.#verbose()) process.stderr.write(retryLine(e, this.#ctx?.baseUrl) + '\n')
    }
    return {
      ...(flags['max-retries'] === undefined ? {} : {maxRetries: flags['max-retries']}),
      totalTimeout: (flags.timeout ?? DEFAULT_TIMEOUT_S) * 1000,
      loopbackRefused: 'fail' as const,
      fetch: cliFetch(),
      onRequest: verbose.onRequest,
      onResponse,
    }
  }

  /** Per-call SDK options from the flags: the `--idempotency-key` of write commands. */
  protected requestOptions(): {idempotencyKey?: string} {
    const key = (this.flags as {'idempotency-key'?: string} | undefined)?.['idempotency-key']
    return key ? {idempotencyKey: key} : {}
  }

  /**
   * The request body from derived flags and `--data`, with every field the schema requires present:
   * a missing one is prompted for on a terminal, and otherwise fails at once (exit 2) naming its flag,
   * before any request is sent. `extraRequired`: flags a command needs beyond the schema's required
   * fields, or a function of the body naming them (rules that depend on other fields).
   */
  protected async requestBody(derived: DerivedFlags, extraRequired: string[] | ((body: Record<string, unknown>) => string[]) = []): Promise<Record<string, unknown>> {
    const flags = this.flags as Record<string, unknown>
    const body = await bodyFromFlags(derived, flags, flags.data as string | undefined)
    const extra = typeof extraRequired === 'function' ? extraRequired(body) : extraRequired.filter((f) => flags[f] === undefined)
    const missing = [...missingRequired(derived, body), ...extra]
    if (missing.length === 0) return body
    if (!canPrompt() || this.jsonEnabled()) {
      // Given but empty (`--name "$NAME"` with NAME unset, or `"name": ""` in --data): say so, not that it is missing.
      const empty = missing.find((f) => flags[f] === '' || (derived.fields[f] && valueAt(body, derived.fields[f].path) === ''))
      if (empty !== undefined) {
        const where = flags[empty] === '' ? `--${empty}` : `--data's ${derived.fields[empty]!.path.join('.')}`
        throw usageError(`${where} is empty: it needs a value (not prompting: ${this.jsonEnabled() ? '--json is set' : 'stdin is not a terminal'})`, `--${empty}`)
      }
      const names = missing.map((f) => `--${f}`)
      throw usageError(
        `Missing required ${names.length === 1 ? 'flag' : 'flags'} ${names.join(', ')} (or the field${names.length === 1 ? '' : 's'} in --data; not prompting: ${this.jsonEnabled() ? '--json is set' : 'stdin is not a terminal'})`,
        names[0],
      )
    }
    for (const flag of missing) {
      const answer = await promptLine(`${flag.replace(/-/g, ' ')}: `)
      if (!answer) throw usageError(`Missing --${flag}`, `--${flag}`)
      if (derived.fields[flag]) setPath(body, derived.fields[flag].path, parsePrompted(derived, flag, answer))
      else flags[flag] = answer
    }
    return body
  }

  /** A merchant API client (`/v1`, the same secret key as the store API) for this run's profile and environment. */
  protected async merchantClient() {
    const ctx = await this.context()
    const secretKey = await this.resolveCredential('secret_key', ctx)
    const {MerchantClient} = await import('@payapp/sdk/client')
    return new MerchantClient({secretKey, baseUrl: ctx.baseUrl, ...this.clientOptions()})
  }

  protected httpLogging(): {onRequest?: (e: RequestEvent) => void; onResponse?: (e: ResponseEvent) => void} {
    if (!this.#verbose()) return {}
    const log = (line: string) => process.stderr.write(line + '\n')
    return {
      onRequest: (e) => {
        log(`→ ${e.method} ${e.url}${e.query ? `?${e.query}` : ''}${e.attempt > 1 ? ` (attempt ${e.attempt}/${e.maxAttempts})` : ''}`)
        for (const [name, value] of Object.entries(e.headers ?? {})) {
          // The SDK already redacts; never trust that alone for a header that carries the secret.
          const redacted = /…|\[REDACTED\]/.test(value) ? value : `${value.split(/\s+/)[0]} [REDACTED]`
          log(`  ${name}: ${/^(proxy-)?authorization$/i.test(name) ? redacted : value}`)
        }
      },
      onResponse: (e) => {
        const outcome = e.status ?? e.errorCode ?? 'no response'
        const retry = e.retry ? `; retrying in ${e.retry.delayMs} ms (${e.retry.reason})` : ''
        log(`← ${outcome} ${e.method} ${e.url} ${e.elapsedMs} ms${e.requestId ? ` ${e.requestId}` : ''}${retry}`)
      },
    }
  }

  #verbose(): boolean {
    return Boolean((this.flags as {verbose?: boolean} | undefined)?.verbose) || this.argv.includes('--verbose') || truthy(process.env[ENV_VARS.verbose])
  }

  /**
   * Human output unless `--json`. Return its result from `run()`: oclif prints exactly that object as
   * JSON on stdout under `--json` (and `this.log` is silent then).
   */
  protected render<D>(data: D, human: (data: D) => void): D {
    if (!this.jsonEnabled()) human(data)
    return data
  }

  /**
   * The `--json` document. oclif tokenizes the JSON to colour it even when no JSON theme is set: without one,
   * the same text is written as is (API data has no cycles, which oclif's own stringify would mark).
   */
  override logJson(json: unknown): void {
    if (this.config.theme?.json) super.logJson(json)
    else ux.stdout(JSON.stringify(json, null, 2))
  }

  /** A spinner on stderr; a no-op unless stderr is a TTY and output is not JSON. Stopped on error. */
  protected spinner(text: string): Spinner {
    const s = spinner(text, {json: this.jsonEnabled()})
    this.#spinners.add(s)
    return s
  }

  /**
   * A required input that has no value: prompt on a TTY, otherwise fail at once (exit 2) naming the
   * flag, so CI never hangs on a prompt. A secret given as `-` is read from stdin's first line, which
   * keeps it out of argv (the process list, `DEBUG=*` output, shell history).
   */
  protected async requireFlag(name: string, value: string | undefined, options: {envVar?: string; message?: string; secret?: boolean} = {}): Promise<string> {
    if (value === '-' && options.secret) return (await valueOrStdin(value, `--${name}`))!
    if (value) return value
    const how = `--${name}${options.envVar ? ` or set ${options.envVar}` : ''}`
    if (!canPrompt() || this.jsonEnabled()) {
      throw usageError(`Missing ${how} (not prompting: stdin is not a terminal${this.jsonEnabled() ? ' or --json is set' : ''})`, `--${name}`)
    }
    const answer = await promptLine(options.message ?? `${name}: `, Boolean(options.secret))
    if (!answer) throw usageError(`Missing ${how}`, `--${name}`)
    return answer
  }

  /** Errors, defined once: one line on stderr (or the JSON envelope on stdout), then the mapped exit code. */
  protected override async catch(err: Error & {exitCode?: number}): Promise<unknown> {
    for (const s of this.#spinners) s.stop()
    // `this.exit(n)` inside a command: pass it through untouched.
    if (err instanceof Errors.ExitError) throw err
    err = await this.#explain(err)
    const code = exitCodeFor(err)
    if (this.jsonEnabled()) {
      this.logJson(toJsonError(err))
    } else {
      process.stderr.write(formatError(err) + '\n')
      if ((this.#verbose() || process.env.DEBUG) && err.stack) process.stderr.write(err.stack + '\n')
    }
    // oclif's handler exits with this code without printing anything more.
    this.exit(code === ExitCode.OK ? ExitCode.UNEXPECTED : code)
  }

  /** A failure in the user's terms: where the CLI could not connect, and which command fixes a refusal. */
  async #explain<E extends Error>(err: E): Promise<E> {
    if (err instanceof ConnectionError && err.code === 'ECONNREFUSED' && this.#ctx) {
      const local = isLoopbackHost(new URL(this.#ctx.baseUrl).hostname)
      const hint = local ? ' — is "payapp gateway start" running?' : ' (connection refused)'
      return new ConnectionError({message: `cannot reach ${this.#ctx.baseUrl}${hint}`, type: err.type, code: err.code, cause: err}) as unknown as E
    }
    // oclif's `Nonexistent flag: --limt`: the closest flag of this command, as the hook does for commands.
    const typed = (err as {flags?: unknown}).flags
    if (err instanceof Errors.CLIError && 'parse' in err && Array.isArray(typed) && typed.length === 1) {
      // Loaded for this error only: fast-levenshtein builds ICU's collator at import (some 6 ms of every start).
      const {closestId} = await import('./did-you-mean.js')
      const ctor = this.ctor as typeof Command
      const flags = Object.entries({...ctor.baseFlags, ...ctor.flags}).filter(([, flag]) => !flag.hidden).map(([name]) => name)
      // Names compared without their dashes, which would make every short name look close.
      const meant = closestId(String(typed[0]).replace(/^-+/, '').split('=')[0]!, ctor.enableJsonFlag ? [...flags, 'json'] : flags)
      if (meant) err.message = err.message.replace(/^(Nonexistent flag: \S+)/, `$1 (did you mean --${meant}?)`)
    }
    const hint = errorHint(err)
    if (hint && err instanceof PayappError && !err.message.includes(hint)) err.message = `${err.message} (${hint})`
    return err
  }

  protected override async finally(err: Error | undefined): Promise<unknown> {
    for (const s of this.#spinners) s.stop()
    if (this.#store?.keychainHung) {
      // Unref'd: fires only if the pending native keychain call is all that keeps the process alive.
      setTimeout(() => process.exit(), HUNG_KEYCHAIN_EXIT_DELAY_MS).unref()
    }
    return super.finally(err)
  }
}

/** `code: message (request_id)` for API errors; `Error: message` for everything else. */
export function formatError(err: unknown): string {
  if (err instanceof PayappError) return err.toString()
  return `Error: ${err instanceof Error ? err.message : String(err)}`
}

const snake = (name: string) => name.replace(/Error$/, '').replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase() + '_error'

/** The `--json` error envelope for anything thrown. */
export function toJsonError(err: unknown): JsonError {
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null)
  const message = err instanceof Error ? err.message : String(err)
  if (err instanceof PayappError) {
    const {type, code, param, request_id: requestId, status} = err.toJSON()
    return {error: {type: str(type) ?? snake(err.name), code: str(code), param: str(param), message, request_id: str(requestId), status: typeof status === 'number' ? status : null}}
  }
  if (err instanceof CliError) {
    return {error: {type: err.type, code: err.code ?? null, param: err.param ?? null, message, request_id: null, status: null}}
  }
  // oclif's parse errors carry exit 2.
  const usage = (err as {oclif?: {exit?: unknown}} | undefined)?.oclif?.exit === ExitCode.USAGE
  return {error: {type: usage ? 'usage_error' : 'cli_error', code: usage ? 'invalid_usage' : null, param: null, message, request_id: null, status: null}}
}

/** The stderr line for a retry: `rate limited; retrying in 56 s (attempt 2/5)`. */
export function retryLine(e: ResponseEvent, baseUrl?: string): string {
  const wait = `retrying in ${waitText(e.retry?.delayMs ?? 0)} (attempt ${e.attempt + 1}${e.maxAttempts ? `/${e.maxAttempts}` : ''})`
  if (e.status === 429) return `rate limited; ${wait}`
  if (e.status === undefined) return `cannot reach ${baseUrl ?? new URL(e.url).origin} (${e.errorCode ?? 'no response'}); ${wait}`
  return `${e.retry?.reason ?? `HTTP ${e.status}`}; ${wait}`
}
