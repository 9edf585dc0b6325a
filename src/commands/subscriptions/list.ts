import {listCommand} from '../../cli/command-factory.js'
import {table} from '../../cli/output.js'
import {subscriptionColumns} from '../../cli/services/commerce-view.js'

export default listCommand({
  endpoint: 'subscriptions.list',
  examples: ['<%= config.bin %> subscriptions list', '<%= config.bin %> subscriptions list --env live --all --json'],
  render: (rows) => table(rows, subscriptionColumns),
})
