import {Args} from '@oclif/core'

import {writeCommand} from '../../../cli/command-factory.js'
import {optionGroupBlock} from '../../../cli/services/catalog-view.js'

export default writeCommand({
  endpoint: 'options.create',
  examples: [
    '<%= config.bin %> products options create prod_123 --name Size --value S --value M --value L',
    '<%= config.bin %> products options create prod_123 --data \'{"name": "Color", "values": ["Red", "Blue"]}\'',
  ],
  args: {product_id: Args.string({required: true, description: 'Product id'})},
  adjust: (derived) => {
    // `--value S --value M` reads better than the field's plural name.
    derived.flags.values = {...derived.flags.values, aliases: ['value'], description: 'Option values, e.g. --value S --value M (repeatable; --values works too)'}
  },
  render: optionGroupBlock,
})
