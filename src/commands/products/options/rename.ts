import {Args} from '@oclif/core'

import {writeCommand} from '../../../cli/command-factory.js'
import {optionGroupBlock} from '../../../cli/services/catalog-view.js'

export default writeCommand({
  endpoint: 'options.update',
  examples: ['<%= config.bin %> products options rename GROUP_ID --name "Shirt size"'],
  args: {group_id: Args.string({required: true, description: 'Option group id (see "products options list")'})},
  render: optionGroupBlock,
})
