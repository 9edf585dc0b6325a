import {Args} from '@oclif/core'

import {BaseCommand} from '../../cli/base-command.js'
import {CONFIG_KEYS, type ConfigKey, profileSettings} from '../../cli/services/settings.js'

export default class ConfigGet extends BaseCommand<typeof ConfigGet> {
  static override summary = "Show a profile's defaults (base-url, env, merchant) and where each value in effect comes from."
  static override examples = ['<%= config.bin %> config get', '<%= config.bin %> config get base-url --profile local', '<%= config.bin %> config get --json']
  static override args = {key: Args.string({options: [...CONFIG_KEYS], description: 'One setting; all when absent.'})}

  async run() {
    const settings = profileSettings(await this.loadConfig(), await this.context())
    const key = this.args.key as ConfigKey | undefined
    const shown = key ? settings.filter((s) => s.key === key) : settings
    return this.render(key ? shown[0] : {settings: shown}, () => {
      if (key) this.log(shown[0]?.value ?? '')
      else for (const s of shown) this.log(`${s.key.padEnd(9)} ${s.value ?? '-'}${s.source ? `  (${s.source})` : ''}`)
    })
  }
}
