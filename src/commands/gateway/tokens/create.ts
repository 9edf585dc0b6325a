import {Flags} from '@oclif/core'

import {AdminCommand} from '../../../cli/admin-command.js'
import {mask} from '../../../cli/credentials.js'
import {adminFlags} from '../../../cli/services/gateway-admin.js'
import {SCOPES} from '@payapp/sdk/schemas/common'

export default class GatewayTokensCreate extends AdminCommand<typeof GatewayTokensCreate> {
  static override summary = 'Issue an installation token (or, with --secret-key, a secret key) for a merchant on a running gateway.'
  static override description = `The environment is --env (default: the profile's, else test). Without --scope the credential gets every scope.
The merchant is --merchant, else the profile's (saved by "gateway start --seed" or "gateway merchants create --save"), else the merchant of the profile's token; the admin key likewise.
On a fresh gateway without --seed: "payapp gateway merchants create --save", then this command.
The new credential is printed in full (under --json, the admin API's answer); with --save it is stored in the profile instead and shown masked.`
  static override examples = [
    '<%= config.bin %> gateway tokens create --profile local --scope products:read --scope orders:read',
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
    const ctx = await this.context()
    const merchant = await this.merchant()
    const admin = await this.admin()
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
