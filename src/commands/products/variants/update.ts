import {Args} from '@oclif/core'

import {writeCommand} from '../../../cli/command-factory.js'
import {variantBlock} from '../../../cli/services/catalog-view.js'

export default writeCommand({
  endpoint: 'variants.update',
  examples: [
    '<%= config.bin %> products variants update 0b5e2f4c-6d1a-4b8e-9f3a-2c7d8e9f0a1b --stock-qty 20',
    '<%= config.bin %> products variants update 0b5e2f4c-6d1a-4b8e-9f3a-2c7d8e9f0a1b --price price_456 --highlight --features "Fast delivery" --features "2 revisions"',
    '<%= config.bin %> products variants update 0b5e2f4c-6d1a-4b8e-9f3a-2c7d8e9f0a1b --data \'{"sku": null}\'',
  ],
  args: {variant_id: Args.string({required: true, description: 'Variant id (see "products variants list")'})},
  render: variantBlock,
})
