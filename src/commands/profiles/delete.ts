import {Args, Flags} from '@oclif/core'

import {BaseCommand, globalFlags} from '../../cli/base-command.js'
import {deleteProfile, profileNames} from '../../cli/config.js'
import {ALL_CREDENTIAL_KINDS, type CredentialKind} from '../../cli/credentials.js'
import {usageError} from '../../cli/exit-codes.js'
import {canPrompt, confirm} from '../../cli/prompt.js'

export default class ProfilesDelete extends BaseCommand<typeof ProfilesDelete> {
  static override summary = 'Delete a profile: its settings and every credential stored for it (both environments).'
  static override description = 'Asks first on a terminal; without one (CI), pass --yes.'
  static override examples = ['<%= config.bin %> profiles delete staging', '<%= config.bin %> profiles delete local --yes --json']
  static override baseFlags = globalFlags('verbose')
  static override args = {name: Args.string({required: true, description: 'Profile name (see "payapp profiles list").'})}
  static override flags = {yes: Flags.boolean({char: 'y', description: 'Do not ask for confirmation.'})}

  async run() {
    const {name} = this.args
    const store = this.credentialStore()
    const stored = (await store.list()).filter((c) => c.profile === name)
    if (!profileNames(await this.loadConfig()).includes(name) && stored.length === 0) {
      throw usageError(`No profile "${name}" (see "payapp profiles list")`, 'NAME')
    }
    if (!this.flags.yes) {
      if (!canPrompt() || this.jsonEnabled()) throw usageError(`Deleting profile "${name}" removes its credentials: pass --yes (not prompting: stdin is not a terminal)`, '--yes')
      if (!(await confirm(`Delete profile "${name}" and its ${stored.length} stored credential(s)?`, false))) this.exit(1)
    }
    const removed: Array<{env: string; kind: CredentialKind}> = []
    for (const c of stored) if (ALL_CREDENTIAL_KINDS.includes(c.kind) && (await store.delete(name, c.kind, c.env))) removed.push({env: c.env, kind: c.kind})
    await deleteProfile(this.config.configDir, name)
    return this.render({deleted: name, credentials_removed: removed}, (r) =>
      this.log(`Deleted profile "${r.deleted}"${removed.length ? ` and ${removed.length} stored credential(s)` : ''}`),
    )
  }
}
