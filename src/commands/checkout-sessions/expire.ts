import {Args} from '@oclif/core'

import {objectCommand} from '../../cli/command-factory.js'
import {endpoints} from '../../sdk/endpoints.js'

export default objectCommand({
  endpoint: 'checkoutSessions.expire',
  summary: endpoints['checkoutSessions.expire'].summary + ' (merchant API, secret key): its reserved stock is released.',
  examples: ['<%= config.bin %> checkout-sessions expire cs_123', '<%= config.bin %> checkout-sessions expire cs_123 --json'],
  args: {session_id: Args.string({required: true, description: 'Checkout session id (cs_…).'})},
  render: (e) => `Expired checkout session ${e.id}`,
})
