import {BaseCommand} from '../../cli/base-command.js'
import {collect, listFlags, pageParams} from '../../cli/list.js'
import {table} from '../../cli/output.js'
import {invoiceColumns} from '../../cli/services/commerce-view.js'
import {endpoints} from '../../sdk/endpoints.js'

export default class InvoicesList extends BaseCommand<typeof InvoicesList> {
  static override endpoint = 'invoices.list' as const
  static override summary = endpoints['invoices.list'].summary + '.'
  static override examples = ['<%= config.bin %> invoices list', '<%= config.bin %> invoices list --env live --all --json']
  static override flags = {...listFlags}

  async run() {
    const client = await this.appClient()
    const page = await collect(client.invoices.list(pageParams(this.flags)), this.flags)
    return this.render(page, (p) => this.log(table(p.data, invoiceColumns)))
  }
}
