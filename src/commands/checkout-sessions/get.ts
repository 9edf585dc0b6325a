import {Args} from '@oclif/core'

import {objectCommand} from '../../cli/command-factory.js'
import {checkoutSessionDetails} from '../../cli/services/commerce-view.js'
import {endpoints} from '../../sdk/endpoints.js'

export default objectCommand({
  endpoint: 'checkoutSessions.retrieve',
  summary: 'One checkout session of the merchant API (secret key): status, amount, expiry, checkout URL.',
  description: endpoints['checkoutSessions.retrieve'].summary + '. Uses the profile\'s secret key or PAYAPP_SECRET_KEY.',
  examples: ['<%= config.bin %> checkout-sessions get cs_123', '<%= config.bin %> checkout-sessions get cs_123 --json'],
  args: {session_id: Args.string({required: true, description: 'Checkout session id (cs_…).'})},
  render: (s) => checkoutSessionDetails(s),
})
