import {Args} from '@oclif/core'

import {BaseCommand} from '../../cli/base-command.js'
import {paymentDetails} from '../../cli/services/commerce-view.js'
import {endpoints} from '../../sdk/endpoints.js'

export default class PaymentsGet extends BaseCommand<typeof PaymentsGet> {
  static override endpoint = 'payments.retrieve' as const
  static override summary = endpoints['payments.retrieve'].summary + '.'
  static override examples = ['<%= config.bin %> payments get py_123', '<%= config.bin %> payments get ch_123 --env live --json']
  static override args = {payment_id: Args.string({required: true, description: 'Payment id: the charge id (ch_…) in live, the row id (py_…) in the sandbox.'})}

  async run() {
    const payment = await (await this.appClient()).payments.retrieve(this.args.payment_id)
    return this.render(payment, (p) => this.log(paymentDetails(p)))
  }
}
