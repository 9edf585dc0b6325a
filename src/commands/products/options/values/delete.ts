import {Args} from '@oclif/core'

import {BaseCommand} from '../../../../cli/base-command.js'
import {endpoints} from '../../../../sdk/endpoints.js'

export default class ValuesDelete extends BaseCommand<typeof ValuesDelete> {
  static override endpoint = 'values.delete' as const
  static override summary = endpoints['values.delete'].summary + '.'
  static override examples = ['<%= config.bin %> products options values delete VALUE_ID']
  static override args = {value_id: Args.string({required: true, description: 'Option value id (see "products options list")'})}

  async run() {
    const client = await this.appClient()
    return this.render(await client.values.delete(this.args.value_id), (d) => this.log(`Deleted option value ${d.id}.`))
  }
}
