import {Flags} from '@oclif/core'

import {BaseCommand} from '../cli/base-command.js'
import {ENV_VARS} from '../cli/config.js'
import {CREDENTIAL_KINDS} from '../cli/credentials.js'

export default class Logout extends BaseCommand<typeof Logout> {
  static override summary = 'Remove stored credentials (token and secret key) for a profile and environment.'
  static override examples = ['<%= config.bin %> logout', '<%= config.bin %> logout --env live --profile shop2', '<%= config.bin %> logout --all']
  static override flags = {all: Flags.boolean({description: 'Remove every stored credential: all profiles, both environments.'})}

  async run() {
    const store = this.credentialStore()
    const {profile, env} = await this.context()
    const targets = this.flags.all ? await store.list() : CREDENTIAL_KINDS.map((kind) => ({profile, env, kind}))
    const removed = []
    for (const t of targets) if (await store.delete(t.profile, t.kind, t.env)) removed.push({profile: t.profile, env: t.env, kind: t.kind})
    for (const v of [ENV_VARS.token, ENV_VARS.secretKey]) if (process.env[v]) this.warn(`${v} is set in the environment; logout does not unset it`)
    return this.render({removed}, ({removed}) =>
      this.log(removed.length === 0
        ? `Nothing to remove${this.flags.all ? '' : ` for profile "${profile}" (${env})`}`
        : removed.map((r) => `Removed ${r.env} ${r.kind.replace('_', ' ')} for profile "${r.profile}"`).join('\n')),
    )
  }
}
