import {listCommand} from '../../cli/command-factory.js'
import {table} from '../../cli/output.js'
import {disputeColumns} from '../../cli/services/commerce-view.js'

export default listCommand({
  endpoint: 'disputes.list',
  examples: ['<%= config.bin %> disputes list', '<%= config.bin %> disputes list --env live --all --json'],
  render: (rows) => table(rows, disputeColumns),
})
