import {Flags} from '@oclif/core'

import {BaseCommand} from '../cli/base-command.js'
import {ENV_VARS, type Env, readConfig} from '../cli/config.js'
import {envOfCredential, mask, type SetResult} from '../cli/credentials.js'
import {usageError} from '../cli/exit-codes.js'
import {valueOrStdin} from '../cli/prompt.js'
import {PermissionError} from '@payapp/sdk/errors'

export default class Login extends BaseCommand<typeof Login> {
  static override summary = 'Check an installation token against the platform, then store it for a profile.'
  static override description = `The token goes to the OS keychain, or to a file readable by you only (mode 0600) when there is no usable keychain. The profile records the base URL and, if it has none yet, the environment.
The environment is the token's own (app_live_… or app_test_…); --env, if given, must match it.
A token that cannot read the merchant (403, no merchant:read scope) is still valid and is stored.
Without --token, the token is prompted for on a terminal; in CI pass --token - to read it from stdin (so it is not in the process list or shell history), or --token (nothing ever waits for input without a terminal).
To use a token without storing it, set ${ENV_VARS.token} instead.`

  static override examples = [
    '<%= config.bin %> login --token app_test_…',
    '<%= config.bin %> login --env live --token app_live_… --secret-key sk_live_… --profile shop2',
    'printenv PAYAPP_CI_TOKEN | <%= config.bin %> login --token - --base-url https://platform.example.com --json',
  ]

  static override flags = {
    token: Flags.string({description: 'Installation access token (app_live_… or app_test_…); - reads it from stdin. Prompted for on a terminal when absent.'}),
    'secret-key': Flags.string({env: ENV_VARS.secretKey, description: 'Secret key for the store API (sk_live_… or sk_test_…), checked and stored the same way; - reads it from stdin.'}),
  }

  async run() {
    const ctx = await this.context()
    if (this.flags.token === '-' && this.flags['secret-key'] === '-') throw usageError('Only one of --token and --secret-key can be read from stdin', '--secret-key')
    const token = await this.requireFlag('token', this.flags.token, {secret: true, message: 'Installation token: '})
    const secretKey = await valueOrStdin(this.flags['secret-key'], '--secret-key')

    // --env (or PAYAPP_ENV) is a claim to check; otherwise the token says which environment it is for.
    const claimed = ctx.source.env === 'flag' || ctx.source.env === 'env' ? ctx.env : undefined
    const env = this.#envFor(token, 'app', claimed) ?? claimed ?? ctx.env
    if (secretKey) this.#envFor(secretKey, 'sk', env)
    const target = {profile: ctx.profile, env, baseUrl: ctx.baseUrl}

    // Both are checked before anything is stored: a rejected credential leaves the store as it was.
    const {AppClient, StoreClient} = await import('@payapp/sdk/client')
    const s = this.spinner(`Checking the token against ${ctx.baseUrl}`)
    const merchant = await new AppClient({token, baseUrl: ctx.baseUrl, ...this.clientOptions()}).merchant.retrieve().catch(acceptForbidden)
    const store = secretKey ? await new StoreClient({secretKey, baseUrl: ctx.baseUrl, ...this.clientOptions()}).store.retrieve().catch(acceptForbidden) : undefined
    s.stop()

    const stored = await this.saveCredential('token', token, target)
    const storedKey = secretKey ? await this.saveCredential('secret_key', secretKey, target) : undefined
    const profileEnv = (await readConfig(this.config.configDir)).profiles[ctx.profile]?.env ?? env

    const result = {
      profile: ctx.profile,
      env,
      base_url: ctx.baseUrl,
      merchant: merchant ? {id: merchant.id, company: merchant.company} : null,
      token: {value: mask(token), ...stored},
      secret_key: secretKey && storedKey ? {value: mask(secretKey), store: store ? store.id : null, ...storedKey} : null,
    }
    return this.render(result, (r) => {
      const where = (s: SetResult) => (s.backend === 'file' ? s.location : 'the OS keychain')
      const who = r.merchant ? `${r.merchant.company} (${r.merchant.id})` : `${r.base_url} (the token has no merchant:read scope)`
      this.log(`Logged in to ${who} as ${env} installation ${r.token.value}, stored in ${where(stored)}`)
      if (r.secret_key && storedKey) this.log(`Secret key ${r.secret_key.value} checked against the store API, stored in ${where(storedKey)}`)
      if (profileEnv !== env) this.log(`Profile "${r.profile}" still defaults to ${profileEnv}: pass --env ${env} to use this token.`)
    })
  }

  /** Refuses a credential whose prefix names another environment than the one claimed (exit 2). */
  #envFor(secret: string, prefix: 'app' | 'sk', claimed: Env | undefined): Env | undefined {
    const own = envOfCredential(secret)
    if (own && claimed && own !== claimed) {
      const what = prefix === 'app' ? 'installation token' : 'secret key'
      const flag = prefix === 'app' ? '--token' : '--secret-key'
      throw usageError(`${flag} ${mask(secret)} is a ${own} ${what}, but the environment is ${claimed}: pass --env ${own}, or a ${claimed} ${what} (${prefix}_${claimed}_…)`, flag)
    }
    return own
  }
}

/** A 403 (missing scope) still proves the credential authentic: accept it, with nothing to show. */
function acceptForbidden(err: unknown): undefined {
  if (err instanceof PermissionError) return undefined
  throw err
}
