import {Args} from '@oclif/core'

import {BaseCommand} from '../../cli/base-command.js'
import {refundDetails} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default class RefundsGet extends BaseCommand<typeof RefundsGet> {
  static override endpoint = 'refunds.retrieve' as const
  static override summary = endpoints['refunds.retrieve'].summary + ' (merchant API).'
  static override examples = ['<%= config.bin %> refunds get re_123', '<%= config.bin %> refunds get re_123 --json']
  static override args = {refund_id: Args.string({required: true, description: 'Refund id (re_…).'})}

  async run() {
    const refund = await (await this.merchantClient()).refunds.retrieve(this.args.refund_id)
    return this.render(refund, (r) => this.log(refundDetails(r)))
  }
}
