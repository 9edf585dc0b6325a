import {listCommand} from '../../cli/command-factory.js'
import {table} from '../../cli/output.js'
import {subscriptionLinkColumns} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default listCommand({
  endpoint: 'subscriptionLinks.list',
  summary: endpoints['subscriptionLinks.list'].summary + ' (live installations only).',
  examples: ['<%= config.bin %> subscription-links list --env live', '<%= config.bin %> subscription-links list --env live --all --json'],
  render: (rows) => table(rows, subscriptionLinkColumns),
})
