import {Args} from '@oclif/core'

import {BaseCommand} from '../../../cli/base-command.js'
import {bodyFromFlags, dataFlag, flagsFromSchema} from '../../../cli/schema-flags.js'
import {optionGroupBlock} from '../../../cli/services/catalog-view.js'
import {endpoints, type BodyOf} from '../../../sdk/endpoints.js'

const derived = flagsFromSchema(endpoints['options.create'].body)
// `--value S --value M` reads better than the field's plural name.
derived.flags.values = {...derived.flags.values, aliases: ['value'], description: 'Option values, e.g. --value S --value M (repeatable; --values works too)'}

export default class OptionsCreate extends BaseCommand<typeof OptionsCreate> {
  static override summary = endpoints['options.create'].summary + '.'
  static override examples = [
    '<%= config.bin %> products options create prod_123 --name Size --value S --value M --value L',
    '<%= config.bin %> products options create prod_123 --data \'{"name": "Color", "values": ["Red", "Blue"]}\'',
  ]

  static override args = {product_id: Args.string({required: true, description: 'Product id'})}
  static override flags = {...derived.flags, data: dataFlag}

  async run() {
    const body = await bodyFromFlags(derived, this.flags, this.flags.data)
    const client = await this.appClient()
    const group = await client.products.options.create(this.args.product_id, body as BodyOf<'options.create'>)
    return this.render(group, (g) => this.log(optionGroupBlock(g)))
  }
}
