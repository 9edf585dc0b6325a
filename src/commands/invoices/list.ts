import {listCommand} from '../../cli/command-factory.js'
import {table} from '../../cli/output.js'
import {invoiceColumns} from '../../cli/services/commerce-view.js'

export default listCommand({
  endpoint: 'invoices.list',
  examples: ['<%= config.bin %> invoices list', '<%= config.bin %> invoices list --env live --all --json'],
  render: (rows) => table(rows, invoiceColumns),
})
