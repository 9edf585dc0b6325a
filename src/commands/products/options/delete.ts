import {Args} from '@oclif/core'

import {objectCommand} from '../../../cli/command-factory.js'

export default objectCommand({
  endpoint: 'options.delete',
  examples: ['<%= config.bin %> products options delete GROUP_ID'],
  args: {group_id: Args.string({required: true, description: 'Option group id (see "products options list")'})},
  render: (d) => `Deleted option group ${d.id}.`,
})
