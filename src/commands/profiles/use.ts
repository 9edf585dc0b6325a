import {Args} from '@oclif/core'

import {BaseCommand} from '../../cli/base-command.js'
import {ENV_VARS, resolveContext, useProfile} from '../../cli/config.js'

export default class ProfilesUse extends BaseCommand<typeof ProfilesUse> {
  static override summary = 'Make a profile the current one.'
  static override examples = ['<%= config.bin %> profiles use staging']
  static override args = {name: Args.string({required: true, description: 'Profile name (see "payapp profiles list").'})}

  async run() {
    const config = await useProfile(this.config.configDir, this.args.name)
    // The saved choice is what later runs use; report it without this run's --profile/PAYAPP_PROFILE.
    const {env, baseUrl} = resolveContext(config, {}, {})
    if (process.env[ENV_VARS.profile] && process.env[ENV_VARS.profile] !== this.args.name) {
      this.warn(`${ENV_VARS.profile}=${process.env[ENV_VARS.profile]} is set and overrides the current profile`)
    }
    return this.render({current_profile: this.args.name, env, base_url: baseUrl}, (r) =>
      this.log(`Now using profile "${r.current_profile}" (${r.env}, ${r.base_url})`),
    )
  }
}
