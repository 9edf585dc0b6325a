import {Args} from '@oclif/core'

import {BaseCommand} from '../../cli/base-command.js'
import {saveProfile} from '../../cli/config.js'
import {CONFIG_KEYS, type ConfigKey, parseSetting} from '../../cli/services/settings.js'

export default class ConfigSet extends BaseCommand<typeof ConfigSet> {
  static override summary = "Set a default of the profile (--profile, default the current one): base-url, env or merchant."
  static override description = 'Flags and PAYAPP_* variables still override these for a single run.'
  static override examples = [
    '<%= config.bin %> config set base-url https://platform.example.com',
    '<%= config.bin %> config set env live --profile shop2',
    '<%= config.bin %> config set merchant mch_123 --profile local',
  ]
  static override args = {
    key: Args.string({required: true, options: [...CONFIG_KEYS], description: 'Setting to change.'}),
    value: Args.string({required: true, description: 'New value.'}),
  }

  async run() {
    const key = this.args.key as ConfigKey
    const {profile} = await this.context()
    const value = parseSetting(key, this.args.value)
    await saveProfile(this.config.configDir, profile, value)
    return this.render({profile, key, value: this.args.value}, (r) => this.log(`Set ${r.key} of profile "${r.profile}" to ${r.value}`))
  }
}
