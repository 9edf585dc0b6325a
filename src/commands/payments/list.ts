import {BaseCommand} from '../../cli/base-command.js'
import {collect, listFlags, pageParams} from '../../cli/list.js'
import {table} from '../../cli/output.js'
import {bodyFromFlags, flagsFromSchema} from '../../cli/schema-flags.js'
import {paymentColumns} from '../../cli/services/commerce-view.js'
import {endpoints} from '../../sdk/endpoints.js'

const filters = flagsFromSchema(endpoints['payments.list'].query!)

export default class PaymentsList extends BaseCommand<typeof PaymentsList> {
  static override endpoint = 'payments.list' as const
  static override summary = endpoints['payments.list'].summary + '.'
  static override description = 'Live tokens list charges (ids ch_…); test tokens list sandbox payment rows (ids py_…).'
  static override examples = ['<%= config.bin %> payments list', '<%= config.bin %> payments list --env live --status succeeded --limit 100', '<%= config.bin %> payments list --all --json']
  static override flags = {...listFlags, ...filters.flags}

  async run() {
    const client = await this.appClient()
    const query = await bodyFromFlags(filters, this.flags)
    const page = await collect(client.payments.list({...pageParams(this.flags), ...query}), this.flags)
    return this.render(page, (p) => this.log(table(p.data, paymentColumns)))
  }
}
