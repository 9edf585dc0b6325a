import {Args} from '@oclif/core'

import {objectCommand} from '../../../../cli/command-factory.js'

export default objectCommand({
  endpoint: 'values.delete',
  examples: ['<%= config.bin %> products options values delete VALUE_ID'],
  args: {value_id: Args.string({required: true, description: 'Option value id (see "products options list")'})},
  render: (d) => `Deleted option value ${d.id}.`,
})
