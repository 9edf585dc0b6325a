import {Args} from '@oclif/core'

import {BaseCommand} from '../../../cli/base-command.js'
import {endpoints} from '../../../sdk/endpoints.js'

export default class VariantsDelete extends BaseCommand<typeof VariantsDelete> {
  static override endpoint = 'variants.delete' as const
  static override summary = endpoints['variants.delete'].summary + '.'
  static override examples = ['<%= config.bin %> products variants delete 0b5e2f4c-6d1a-4b8e-9f3a-2c7d8e9f0a1b']
  static override args = {variant_id: Args.string({required: true, description: 'Variant id (see "products variants list")'})}

  async run() {
    const client = await this.appClient()
    return this.render(await client.variants.delete(this.args.variant_id), (d) => this.log(`Deleted variant ${d.id}.`))
  }
}
