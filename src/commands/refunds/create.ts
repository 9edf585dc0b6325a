import {writeCommand} from '../../cli/command-factory.js'
import {refundDetails} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default writeCommand({
  endpoint: 'refunds.create',
  summary: endpoints['refunds.create'].summary + ' (merchant API: needs the secret key).',
  description: 'Without --amount, refunds what is left. A full refund of a variant sale puts its units back in stock.',
  examples: [
    '<%= config.bin %> refunds create --payment py_123',
    '<%= config.bin %> refunds create --payment ch_123 --amount 500 --env live --json',
    '<%= config.bin %> refunds create --payment py_123 --idempotency-key refund-order-17',
  ],
  render: (r) => refundDetails(r),
})
