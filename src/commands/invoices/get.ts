import {Args} from '@oclif/core'

import {BaseCommand} from '../../cli/base-command.js'
import {invoiceDetails} from '../../cli/services/commerce-view.js'
import {endpoints} from '../../sdk/endpoints.js'

export default class InvoicesGet extends BaseCommand<typeof InvoicesGet> {
  static override endpoint = 'invoices.retrieve' as const
  static override summary = endpoints['invoices.retrieve'].summary + ' (live only).'
  static override examples = ['<%= config.bin %> invoices get in_123 --env live', '<%= config.bin %> invoices get in_123 --env live --json']
  static override args = {invoice_id: Args.string({required: true, description: 'Invoice id (in_…).'})}

  async run() {
    const invoice = await (await this.appClient()).invoices.retrieve(this.args.invoice_id)
    return this.render(invoice, (i) => this.log(invoiceDetails(i)))
  }
}
