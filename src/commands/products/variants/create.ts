import {Args, Flags} from '@oclif/core'

import {writeCommand} from '../../../cli/command-factory.js'
import {variantBlock} from '../../../cli/services/catalog-view.js'
import {requireEveryGroup, resolveVariantOptions, type OptionRef} from '../../../cli/services/variant-options.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default writeCommand({
  endpoint: 'variants.create',
  summary: endpoints['variants.create'].summary + ': one --option GROUP=VALUE per option group of the product.',
  description: `Option groups and values are named as shown by "products options list" (case-insensitive) or by id; the names are resolved with one read of the product, which also checks that every group has a value before anything is written. Without --option, the combination comes from --data's "options" (ids).`,
  examples: [
    '<%= config.bin %> products variants create prod_123 --option Size=M --option Color=Red --sku TEE-M-RED --track-inventory --stock-qty 5',
    '<%= config.bin %> products variants create prod_123 --option size=l --price price_456 --features "Organic cotton" --delivery-days 3',
    '<%= config.bin %> products variants create prod_123 --data @variant.json',
  ],
  args: {product_id: Args.string({required: true, description: 'Product id'})},
  // `options` takes ids in the API; people pass names through --option instead.
  exclude: ['options'],
  flags: {
    option: Flags.string({
      multiple: true,
      multipleNonGreedy: true,
      description: 'GROUP=VALUE by name or id, e.g. Size=M (repeatable; one per option group)',
    }),
  },
  async prepare({body, flags, args, client}) {
    const pairs = (flags.option as string[] | undefined) ?? []
    if (pairs.length === 0 && body.options !== undefined) return
    const product = await client.products.retrieve(args.product_id!)
    const groups = product.option_groups ?? []
    const refs = pairs.length > 0 ? resolveVariantOptions(groups, pairs) : []
    requireEveryGroup(groups, refs)
    if (refs.length > 0) body.options = refs satisfies OptionRef[]
  },
  render: variantBlock,
})
