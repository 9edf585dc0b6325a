import {Args} from '@oclif/core'

import {BaseCommand} from '../../../cli/base-command.js'
import {bodyFromFlags, dataFlag, flagsFromSchema} from '../../../cli/schema-flags.js'
import {optionGroupBlock} from '../../../cli/services/catalog-view.js'
import {endpoints, type BodyOf} from '../../../sdk/endpoints.js'

const derived = flagsFromSchema(endpoints['options.update'].body)

export default class OptionsRename extends BaseCommand<typeof OptionsRename> {
  static override summary = endpoints['options.update'].summary + '.'
  static override examples = ['<%= config.bin %> products options rename GROUP_ID --name "Shirt size"']
  static override args = {group_id: Args.string({required: true, description: 'Option group id (see "products options list")'})}
  static override flags = {...derived.flags, data: dataFlag}

  async run() {
    const body = await bodyFromFlags(derived, this.flags, this.flags.data)
    const client = await this.appClient()
    const group = await client.options.update(this.args.group_id, body as BodyOf<'options.update'>)
    return this.render(group, (g) => this.log(optionGroupBlock(g)))
  }
}
