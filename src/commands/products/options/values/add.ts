import {Args} from '@oclif/core'

import {writeCommand} from '../../../../cli/command-factory.js'
import {optionGroupBlock} from '../../../../cli/services/catalog-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default writeCommand({
  endpoint: 'values.create',
  summary: endpoints['values.create'].summary + '; prints the group with its values.',
  examples: [
    '<%= config.bin %> products options values add GROUP_ID --value XL',
    '<%= config.bin %> products options values add GROUP_ID --value XS --sort-order 0',
  ],
  args: {group_id: Args.string({required: true, description: 'Option group id (see "products options list")'})},
  render: optionGroupBlock,
})
