import {listCommand} from '../../cli/command-factory.js'
import {table} from '../../cli/output.js'
import {payoutColumns} from '../../cli/services/commerce-view.js'

export default listCommand({
  endpoint: 'payouts.list',
  examples: ['<%= config.bin %> payouts list', '<%= config.bin %> payouts list --env live --all --json'],
  render: (rows) => table(rows, payoutColumns),
})
