import {Args} from '@oclif/core'

import {BaseCommand} from '../../../cli/base-command.js'
import {bodyFromFlags, dataFlag, flagsFromSchema} from '../../../cli/schema-flags.js'
import {variantBlock} from '../../../cli/services/catalog-view.js'
import {endpoints, type BodyOf} from '../../../sdk/endpoints.js'

// The combination is immutable: the schema declares `options` only to reject it.
const derived = flagsFromSchema(endpoints['variants.update'].body, {exclude: ['options']})

export default class VariantsUpdate extends BaseCommand<typeof VariantsUpdate> {
  static override summary = endpoints['variants.update'].summary + '.'
  static override examples = [
    '<%= config.bin %> products variants update VARIANT_ID --stock-qty 20',
    '<%= config.bin %> products variants update VARIANT_ID --price price_456 --highlight --features "Fast delivery" --features "2 revisions"',
    '<%= config.bin %> products variants update VARIANT_ID --data \'{"sku": null}\'',
  ]

  static override args = {variant_id: Args.string({required: true, description: 'Variant id (see "products variants list")'})}
  static override flags = {...derived.flags, data: dataFlag}

  async run() {
    const body = await bodyFromFlags(derived, this.flags, this.flags.data)
    const client = await this.appClient()
    const variant = await client.variants.update(this.args.variant_id, body as BodyOf<'variants.update'>)
    return this.render(variant, (v) => this.log(variantBlock(v)))
  }
}
