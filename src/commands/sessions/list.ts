import {Flags} from '@oclif/core'

import {listCommand} from '../../cli/command-factory.js'
import {table} from '../../cli/output.js'
import {sessionColumns} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default listCommand({
  endpoint: 'checkoutSessions.list',
  summary: endpoints['checkoutSessions.list'].summary + ' (merchant API).',
  examples: ['<%= config.bin %> sessions list --status open', '<%= config.bin %> sessions list --starting-after cs_123 --limit 10 --json'],
  filters: true,
  flags: {'starting-after': Flags.string({description: 'Cursor: list sessions older than this session id.', exclusive: ['offset']})},
  query: (flags) => (flags['starting-after'] ? {starting_after: flags['starting-after']} : {}),
  render: (rows) => table(rows, sessionColumns),
})
