import {listCommand} from '../../cli/command-factory.js'
import {table} from '../../cli/output.js'
import {orderColumns} from '../../cli/services/commerce-view.js'

export default listCommand({
  endpoint: 'orders.list',
  examples: ['<%= config.bin %> orders list', '<%= config.bin %> orders list --env live --all --json'],
  render: (rows) => table(rows, orderColumns),
})
