import {BaseCommand} from '../cli/base-command.js'
import {ENV_VARS, type ResolvedContext} from '../cli/config.js'
import {type CredentialKind, mask} from '../cli/credentials.js'
import {CliError, ExitCode} from '../cli/exit-codes.js'
import {block} from '../cli/services/catalog-view.js'
import {AuthenticationError, PermissionError} from '@payapp/sdk/errors'

type Source = 'env' | 'keychain' | 'file'

export default class Whoami extends BaseCommand<typeof Whoami> {
  static override summary = 'Show the profile, environment, base URL and credentials in use, and the merchant the token belongs to.'
  static override examples = ['<%= config.bin %> whoami', '<%= config.bin %> whoami --env live --profile shop2 --json']

  async run() {
    const ctx = await this.context()
    const stored = await this.credentialStore().list()
    const find = (kind: CredentialKind): {secret: string; source: Source} | undefined => {
      const envVar = kind === 'token' ? ENV_VARS.token : ENV_VARS.secretKey
      const fromEnv = process.env[envVar]
      const hit = stored.find((c) => c.profile === ctx.profile && c.env === ctx.env && c.kind === kind)
      const found = fromEnv ? {secret: fromEnv, source: 'env' as const} : hit && {secret: hit.secret, source: hit.backend}
      // PAYAPP_TOKEN=app_test_… with PAYAPP_ENV=live would read test data while saying live.
      if (found) this.checkCredentialEnv(kind, found.secret, ctx, found.source === 'env' ? envVar : `profile "${ctx.profile}"`)
      return found
    }
    const token = find('token')
    const secretKey = find('secret_key')
    // Neither: the usual "run payapp login" error, exit 3.
    if (!token && !secretKey) await this.resolveCredential('token', ctx)

    const merchant = token ? await this.#merchant(ctx, token.source) : undefined
    const result = {
      profile: ctx.profile,
      env: ctx.env,
      base_url: ctx.baseUrl,
      token: token ? mask(token.secret) : null,
      token_source: token?.source ?? null,
      merchant: merchant ? {id: merchant.id, company: merchant.company} : null,
      secret_key: secretKey ? mask(secretKey.secret) : null,
      secret_key_source: secretKey?.source ?? null,
    }
    return this.render(result, (r) => {
      const from = (source: Source | null, kind: CredentialKind) =>
        source === 'env' ? `from ${kind === 'token' ? ENV_VARS.token : ENV_VARS.secretKey}` : source === 'file' ? `from ${this.credentialStore().filePath}` : 'from the OS keychain'
      this.log(block([
        ['Profile', r.profile],
        ['Environment', r.env],
        ['Base URL', r.base_url],
        ['Token', r.token ? `${r.token} (${from(r.token_source, 'token')})` : 'none'],
        ['Merchant', r.merchant ? `${r.merchant.company} (${r.merchant.id})` : token ? 'not readable (the token has no merchant:read scope)' : undefined],
        ['Secret key', r.secret_key ? `${r.secret_key} (${from(r.secret_key_source, 'secret_key')})` : 'none'],
      ]))
    })
  }

  /** The token's merchant; undefined without merchant:read. A rejected token fails naming where it came from. */
  async #merchant(ctx: ResolvedContext, source: Source) {
    try {
      return await (await this.appClient()).merchant.retrieve()
    } catch (error) {
      if (error instanceof PermissionError) return undefined
      if (error instanceof AuthenticationError) {
        const where = source === 'env' ? ENV_VARS.token : `profile "${ctx.profile}"`
        throw new CliError(`The ${ctx.env} token from ${where} was rejected by ${ctx.baseUrl} (${error.toString()}): run "payapp login" again`, {
          exitCode: ExitCode.AUTHENTICATION, type: 'authentication_error', code: error.code, cause: error,
        })
      }
      throw error
    }
  }
}
