import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../../cli/base-command.js'
import {bodyFromFlags, dataFlag, flagsFromSchema} from '../../../cli/schema-flags.js'
import {variantBlock} from '../../../cli/services/catalog-view.js'
import {resolveVariantOptions} from '../../../cli/services/variant-options.js'
import {endpoints, type BodyOf} from '../../../sdk/endpoints.js'

// `options` takes ids in the API; people pass names through --option instead.
const derived = flagsFromSchema(endpoints['variants.create'].body, {exclude: ['options']})

export default class VariantsCreate extends BaseCommand<typeof VariantsCreate> {
  static override summary = endpoints['variants.create'].summary + ': one --option GROUP=VALUE per option group of the product.'
  static override description = `Option groups and values are named as shown by "products options list" (case-insensitive) or by id; the names are resolved with one read of the product. Without --option, the combination comes from --data's "options" (ids).`

  static override examples = [
    '<%= config.bin %> products variants create prod_123 --option Size=M --option Color=Red --sku TEE-M-RED --track-inventory --stock-qty 5',
    '<%= config.bin %> products variants create prod_123 --option size=l --price price_456 --features "Organic cotton" --delivery-days 3',
    '<%= config.bin %> products variants create prod_123 --data @variant.json',
  ]

  static override args = {product_id: Args.string({required: true, description: 'Product id'})}
  static override flags = {
    option: Flags.string({
      multiple: true,
      multipleNonGreedy: true,
      description: 'GROUP=VALUE by name or id, e.g. Size=M (repeatable; one per option group)',
    }),
    ...derived.flags,
    data: dataFlag,
  }

  async run() {
    const body = await bodyFromFlags(derived, this.flags, this.flags.data)
    const client = await this.appClient()
    if (this.flags.option && this.flags.option.length > 0) {
      const product = await client.products.retrieve(this.args.product_id)
      body.options = resolveVariantOptions(product.option_groups ?? [], this.flags.option)
    }
    const variant = await client.products.variants.create(this.args.product_id, body as BodyOf<'variants.create'>)
    return this.render(variant, (v) => this.log(variantBlock(v)))
  }
}
