/**
 * The base of every payapp command: shared flags, profile and credential resolution, lazy SDK clients,
 * `--json` output, and the one error handler (message on stderr or JSON on stdout, exit code from
 * `exitCodeFor`). Loaded by every command, so top-level imports stay light: the SDK is imported lazily,
 * and only its client module (not the admin and webhook parts of `sdk/index.js`).
 */
import {Command, Errors, Flags, type Interfaces} from '@oclif/core'

import {PayappError} from '../sdk/errors.js'
import type {RequestEvent, ResponseEvent} from '../sdk/transport.js'
import {type ConfigFile, type Env, ENV_VARS, type ResolvedContext, readConfig, resolveContext} from './config.js'
import {type CredentialKind, CredentialStore, type SetResult, saveCredential} from './credentials.js'
import {CliError, ExitCode, exitCodeFor, missingCredentialError, usageError} from './exit-codes.js'
import {type Spinner, spinner} from './output.js'

export type BaseFlags<T extends typeof Command> = Interfaces.InferredFlags<(typeof BaseCommand)['baseFlags'] & T['flags']>
export type BaseArgs<T extends typeof Command> = Interfaces.InferredArgs<T['args']>

/** The `--json` error shape: every key always present (null when unknown), like the API's envelope plus `status`. */
export interface JsonError {
  error: {type: string; code: string | null; param: string | null; message: string; request_id: string | null; status: number | null}
}

const truthy = (value: string | undefined) => Boolean(value && !['0', 'false', 'no', 'off'].includes(value.toLowerCase()))

// Exit without waiting for a timed-out keychain call still pending in libuv's thread pool.
const HUNG_KEYCHAIN_EXIT_DELAY_MS = 200

export abstract class BaseCommand<T extends typeof Command> extends Command {
  static override enableJsonFlag = true

  static override baseFlags = {
    env: Flags.option({
      options: ['live', 'test'] as const,
      env: ENV_VARS.env,
      helpGroup: 'GLOBAL',
      description: "Environment: the profile's saved one, else test.",
    })(),
    profile: Flags.string({env: ENV_VARS.profile, helpGroup: 'GLOBAL', description: 'Profile to use (default: the current profile).'}),
    'base-url': Flags.string({env: ENV_VARS.baseUrl, helpGroup: 'GLOBAL', description: 'Platform base URL (default: the profile\'s, else http://127.0.0.1:4242).'}),
    verbose: Flags.boolean({env: ENV_VARS.verbose, helpGroup: 'GLOBAL', description: 'Log HTTP requests and stack traces to stderr.'}),
  }

  protected flags!: BaseFlags<T>
  protected args!: BaseArgs<T>

  #config?: Promise<ConfigFile>
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
    return resolveContext(await this.loadConfig(), flags)
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
   * The credential for this run: `PAYAPP_TOKEN`/`PAYAPP_SECRET_KEY` first (nothing is written), then the
   * store. Missing → exit 3 with a message that names the way to provide it.
   */
  protected async resolveCredential(kind: CredentialKind, ctx?: ResolvedContext): Promise<string> {
    const envVar = kind === 'token' ? ENV_VARS.token : ENV_VARS.secretKey
    const fromEnv = process.env[envVar]
    if (fromEnv) return fromEnv
    const {profile, env} = ctx ?? (await this.context())
    const stored = await this.credentialStore().get(profile, kind, env)
    if (stored) return stored
    const what = kind === 'token' ? 'installation token' : 'secret key'
    const flag = kind === 'token' ? '--token' : '--secret-key'
    const profileArg = profile === 'default' ? '' : ` --profile ${profile}`
    throw missingCredentialError(
      `No ${env} ${what} for profile "${profile}": run "payapp login --env ${env}${profileArg} ${flag} …" or set ${envVar}`,
      envVar,
    )
  }

  /** An App API client for this run's profile and environment. */
  protected async appClient() {
    const ctx = await this.context()
    const token = await this.resolveCredential('token', ctx)
    const {AppClient} = await import('../sdk/client.js')
    return new AppClient({token, baseUrl: ctx.baseUrl, ...this.httpLogging()})
  }

  /** A Store API client (secret key) for this run's profile and environment. */
  protected async storeClient() {
    const ctx = await this.context()
    const secretKey = await this.resolveCredential('secret_key', ctx)
    const {StoreClient} = await import('../sdk/client.js')
    return new StoreClient({secretKey, baseUrl: ctx.baseUrl, ...this.httpLogging()})
  }

  /** A merchant API client (`/v1`, the same secret key as the store API) for this run's profile and environment. */
  protected async merchantClient() {
    const ctx = await this.context()
    const secretKey = await this.resolveCredential('secret_key', ctx)
    const {MerchantClient} = await import('../sdk/client.js')
    return new MerchantClient({secretKey, baseUrl: ctx.baseUrl, ...this.httpLogging()})
  }

  protected httpLogging(): {onRequest?: (e: RequestEvent) => void; onResponse?: (e: ResponseEvent) => void} {
    if (!this.#verbose()) return {}
    const log = (line: string) => process.stderr.write(line + '\n')
    return {
      onRequest: (e) => {
        log(`→ ${e.method} ${e.url}${e.attempt > 1 ? ` (attempt ${e.attempt}/${e.maxAttempts})` : ''}`)
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
    if (value === '-' && options.secret) {
      let input = ''
      for await (const chunk of process.stdin) input += chunk
      const line = input.split(/\r?\n/)[0].trim()
      if (!line) throw usageError(`--${name} - reads the value from stdin, which was empty`, `--${name}`)
      return line
    }
    if (value) return value
    const how = `--${name}${options.envVar ? ` or set ${options.envVar}` : ''}`
    if (!process.stdin.isTTY || !process.stderr.isTTY || this.jsonEnabled()) {
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

/** Reads one line from the terminal, prompting on stderr so stdout stays clean; secrets are not echoed. */
async function promptLine(message: string, secret: boolean): Promise<string> {
  const {createInterface} = await import('node:readline')
  const rl = createInterface({input: process.stdin, output: process.stderr, terminal: true})
  if (secret) {
    // Echo nothing while a secret is typed; readline writes everything through `_writeToOutput`.
    const internal = rl as unknown as {_writeToOutput: (s: string) => void}
    internal._writeToOutput = (s: string) => {
      if (s.startsWith(message)) process.stderr.write(message)
    }
  }
  try {
    return await new Promise<string>((resolve) => rl.question(message, (answer) => resolve(answer.trim())))
  } finally {
    rl.close()
    if (secret) process.stderr.write('\n')
  }
}
