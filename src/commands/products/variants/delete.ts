import {Args} from '@oclif/core'

import {objectCommand} from '../../../cli/command-factory.js'

export default objectCommand({
  endpoint: 'variants.delete',
  examples: ['<%= config.bin %> products variants delete 0b5e2f4c-6d1a-4b8e-9f3a-2c7d8e9f0a1b'],
  args: {variant_id: Args.string({required: true, description: 'Variant id (see "products variants list")'})},
  render: (d) => `Deleted variant ${d.id}.`,
})
