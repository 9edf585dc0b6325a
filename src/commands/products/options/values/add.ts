import {Args} from '@oclif/core'

import {BaseCommand} from '../../../../cli/base-command.js'
import {bodyFromFlags, dataFlag, flagsFromSchema} from '../../../../cli/schema-flags.js'
import {optionGroupBlock} from '../../../../cli/services/catalog-view.js'
import {endpoints, type BodyOf} from '../../../../sdk/endpoints.js'

const derived = flagsFromSchema(endpoints['values.create'].body)

export default class ValuesAdd extends BaseCommand<typeof ValuesAdd> {
  static override summary = endpoints['values.create'].summary + '; prints the group with its values.'
  static override examples = [
    '<%= config.bin %> products options values add GROUP_ID --value XL',
    '<%= config.bin %> products options values add GROUP_ID --value XS --sort-order 0',
  ]

  static override args = {group_id: Args.string({required: true, description: 'Option group id (see "products options list")'})}
  static override flags = {...derived.flags, data: dataFlag}

  async run() {
    const body = await bodyFromFlags(derived, this.flags, this.flags.data)
    const client = await this.appClient()
    const group = await client.options.values.create(this.args.group_id, body as BodyOf<'values.create'>)
    return this.render(group, (g) => this.log(optionGroupBlock(g)))
  }
}
