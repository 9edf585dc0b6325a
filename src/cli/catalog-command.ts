/**
 * What the `catalog` commands share: the door (installation token or secret key), reading the file,
 * and an SDK client whose responses feed the pacer. The work itself is in services/catalog.
 */
import {Flags, type Command} from '@oclif/core'

import type {CatalogClient, Pacer} from './services/catalog/index.js'
import {BaseCommand} from './base-command.js'
import {ENV_VARS} from './config.js'
import {CliError, ExitCode, usageError} from './exit-codes.js'

export const catalogFlags = {
  door: Flags.option({
    options: ['app', 'store'] as const,
    env: 'PAYAPP_CATALOG_DOOR',
    description: 'app: the installation token (App API); store: the secret key (store API). Default: the token if one is configured, else the secret key.',
  })(),
  concurrency: Flags.integer({min: 1, max: 64, default: 8, env: 'PAYAPP_CATALOG_CONCURRENCY', description: 'Requests in flight at once.'}),
}

/** A long import meets rate limits and restarts by design: more retries than an interactive call. */
export const CATALOG_MAX_RETRIES = 8

/** The global --max-retries with the catalogue's default, so help says what a run does. */
export const catalogRetryFlag = {
  'max-retries': Flags.integer({
    env: ENV_VARS.maxRetries,
    min: 0,
    max: 10,
    helpGroup: 'GLOBAL',
    description: `Retries of a request after 429, 5xx or a dropped connection (each wait is shown once on stderr). [default: ${CATALOG_MAX_RETRIES}]`,
  }),
}

export abstract class CatalogCommand<T extends typeof Command> extends BaseCommand<T> {
  /** A client of the chosen door; `pacer` sees every response (for the rate-limit headers). */
  protected async catalogClient(pacer?: Pacer): Promise<CatalogClient> {
    const ctx = await this.context()
    const flags = this.flags as {door?: 'app' | 'store'}
    const door = flags.door ?? (process.env[ENV_VARS.token] || !process.env[ENV_VARS.secretKey] ? 'app' : 'store')
    let credential: string
    try {
      credential = await this.resolveCredential(door === 'app' ? 'token' : 'secret_key', ctx)
    } catch (err) {
      // No token: the secret key is the other door, unless one was asked for by name.
      if (door !== 'app' || flags.door) throw err
      return this.catalogClientFor('store', await this.resolveCredential('secret_key', ctx), ctx.baseUrl, pacer)
    }
    return this.catalogClientFor(door, credential, ctx.baseUrl, pacer)
  }

  private async catalogClientFor(door: 'app' | 'store', credential: string, baseUrl: string, pacer?: Pacer): Promise<CatalogClient> {
    const {AppClient, StoreClient} = await import('@payapp/sdk/client')
    const {retryLine} = await import('./base-command.js')
    const {oncePerWait} = await import('./services/catalog/view.js')
    const flags = this.flags as {'max-retries'?: number; timeout?: number}
    const options = this.clientOptions()
    const verbose = this.httpLogging()
    const news = oncePerWait()
    // Every request in flight meets the same 429 or outage: its wait is printed once, not once per request.
    const onResponse: typeof options.onResponse = (e) => {
      verbose.onResponse?.(e)
      if (e.retry && !verbose.onResponse && news(e.retry.delayMs)) process.stderr.write(retryLine(e, baseUrl) + '\n')
      pacer?.observe(e)
    }
    // A long import meets rate limits and restarts by design: more 429 retries than an interactive call (unless
    // --max-retries says), a refused local connection retried too, and no bound on a call's waits unless --timeout sets one.
    const common = {
      ...options,
      baseUrl,
      onResponse,
      maxRetries: flags['max-retries'] ?? CATALOG_MAX_RETRIES,
      loopbackRefused: 'retry' as const,
      totalTimeout: flags.timeout === undefined ? undefined : options.totalTimeout,
    }
    return door === 'app' ? new AppClient({token: credential, ...common}) : new StoreClient({secretKey: credential, ...common})
  }

  /** Loads and validates FILE (`-` for stdin); an invalid file is a usage error naming line and field. */
  protected async readCatalog(file: string) {
    const {loadCatalog, CatalogFileError} = await import('./services/catalog/index.js')
    try {
      return await loadCatalog(file)
    } catch (err) {
      if (err instanceof CatalogFileError) throw new CliError(err.message, {exitCode: ExitCode.USAGE, type: 'invalid_catalog', code: 'invalid_catalog', param: 'FILE'})
      throw err
    }
  }

  protected usage(message: string, flag: string): never {
    throw usageError(message, flag)
  }
}
