import {Flags} from '@oclif/core'

import {BaseCommand} from '../../../cli/base-command.js'
import {mask} from '../../../cli/credentials.js'
import {ADMIN_KEY_ENV, adminFlags, gatewayAdmin, requireMerchant} from '../../../cli/services/gateway-admin.js'
import {SCOPES} from '../../../sdk/schemas/common.js'

export default class GatewayTokensCreate extends BaseCommand<typeof GatewayTokensCreate> {
  static override summary = 'Issue an installation token (or, with --secret-key, a secret key) for a merchant on a running gateway.'
  static override description = `The environment is --env (default: the profile's, else test). Without --scope the credential gets every scope.
The new credential is printed in full (under --json, the admin API's answer); with --save it is stored in the profile instead and shown masked.`
  static override examples = [
    '<%= config.bin %> gateway tokens create --merchant mch_123 --env test --scope products:read --scope orders:read',
    '<%= config.bin %> gateway tokens create --merchant mch_123 --secret-key --scope checkout:write --json',
    '<%= config.bin %> gateway tokens create --merchant mch_123 --scope products:read --save --profile readonly',
  ]

  static override flags = {
    ...adminFlags,
    scope: Flags.string({multiple: true, options: [...SCOPES], description: 'Scope to grant (repeatable). [default: every scope]'}),
    'secret-key': Flags.boolean({description: 'Issue a secret key for the store API instead of an installation token.'}),
    'app-name': Flags.string({description: 'Name of the app the installation is for.', exclusive: ['secret-key']}),
    save: Flags.boolean({description: 'Store the credential in the profile (--profile) with this base URL, as "login" would.'}),
  }

  async run() {
    const {flags} = this
    const merchant = requireMerchant(flags.merchant)
    const adminKey = await this.requireFlag('admin-key', flags['admin-key'], {envVar: ADMIN_KEY_ENV, secret: true})
    const ctx = await this.context()
    const admin = await gatewayAdmin(ctx.baseUrl, adminKey)
    const scopes = flags.scope?.length ? (flags.scope as typeof SCOPES[number][]) : [...SCOPES]

    const issued = flags['secret-key']
      ? await admin.keys.create({merchant, mode: ctx.env, scopes})
      : await admin.installations.create({merchant, env: ctx.env, scopes, ...(flags['app-name'] ? {app_name: flags['app-name']} : {})})
    const secret = issued.object === 'installation' ? issued.token : issued.secret_key
    const kind = issued.object === 'installation' ? 'token' : 'secret_key'
    const saved = flags.save ? await this.saveCredential(kind, secret, {profile: ctx.profile, env: ctx.env, baseUrl: ctx.baseUrl}) : undefined

    return this.render(issued, (i) => {
      const what = kind === 'token' ? 'installation' : 'secret key'
      this.log(`Created ${ctx.env} ${what} ${i.id} for ${i.merchant} with ${i.scopes.length === SCOPES.length ? 'every scope' : i.scopes.join(', ')}`)
      if (saved) this.log(`${mask(secret)} saved to profile "${ctx.profile}" (${saved.backend === 'file' ? saved.location : 'OS keychain'})`)
      else this.log(secret)
    })
  }
}
