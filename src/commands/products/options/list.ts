import {Args} from '@oclif/core'

import {listCommand} from '../../../cli/command-factory.js'
import {optionGroupsTable} from '../../../cli/services/catalog-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default listCommand({
  endpoint: 'options.list',
  summary: endpoints['options.list'].summary + ', one row per value with its id.',
  examples: ['<%= config.bin %> products options list prod_123', '<%= config.bin %> products options list prod_123 --json'],
  args: {product_id: Args.string({required: true, description: 'Product id'})},
  render: optionGroupsTable,
  noun: 'option groups',
})
