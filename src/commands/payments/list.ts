import {listCommand} from '../../cli/command-factory.js'
import {table} from '../../cli/output.js'
import {paymentColumns} from '../../cli/services/commerce-view.js'

export default listCommand({
  endpoint: 'payments.list',
  description: 'Live tokens list charges (ids ch_…); test tokens list sandbox payment rows (ids py_…).',
  examples: ['<%= config.bin %> payments list', '<%= config.bin %> payments list --env live --status succeeded --limit 100', '<%= config.bin %> payments list --all --json'],
  filters: true,
  render: (rows) => table(rows, paymentColumns),
})
