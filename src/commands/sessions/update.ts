import {Args} from '@oclif/core'

import {writeCommand} from '../../cli/command-factory.js'
import {sessionDetails} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default writeCommand({
  endpoint: 'checkoutSessions.update',
  // The merchant API's POST alternative: the same operation.
  also: ['checkoutSessions.updateViaPost'],
  summary: endpoints['checkoutSessions.update'].summary + ' (merchant API).',
  description: 'Pass --revision with the revision you read to fail with revision_conflict (exit code of a 409) instead of overwriting a concurrent change.',
  examples: [
    '<%= config.bin %> sessions update cs_123 --amount 2500 --revision 0',
    '<%= config.bin %> sessions update cs_123 --reference order-17 --json',
    '<%= config.bin %> sessions update cs_123 --reference order-17 --idempotency-key order-17-ref',
  ],
  args: {session_id: Args.string({required: true, description: 'Checkout session id (cs_…).'})},
  render: (s) => sessionDetails(s),
})
