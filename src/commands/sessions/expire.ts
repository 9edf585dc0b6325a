import {Args} from '@oclif/core'

import {objectCommand} from '../../cli/command-factory.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default objectCommand({
  endpoint: 'checkoutSessions.expire',
  summary: endpoints['checkoutSessions.expire'].summary + ': its client secret dies and held stock returns (merchant API).',
  examples: ['<%= config.bin %> sessions expire cs_123', '<%= config.bin %> sessions expire cs_123 --json'],
  args: {session_id: Args.string({required: true, description: 'Checkout session id (cs_…).'})},
  render: (r) => `Expired ${r.id}`,
})
