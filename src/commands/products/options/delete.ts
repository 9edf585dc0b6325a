import {Args} from '@oclif/core'

import {BaseCommand} from '../../../cli/base-command.js'
import {endpoints} from '../../../sdk/endpoints.js'

export default class OptionsDelete extends BaseCommand<typeof OptionsDelete> {
  static override endpoint = 'options.delete' as const
  static override summary = endpoints['options.delete'].summary + '.'
  static override examples = ['<%= config.bin %> products options delete GROUP_ID']
  static override args = {group_id: Args.string({required: true, description: 'Option group id (see "products options list")'})}

  async run() {
    const client = await this.appClient()
    return this.render(await client.options.delete(this.args.group_id), (d) => this.log(`Deleted option group ${d.id}.`))
  }
}
