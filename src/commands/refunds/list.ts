import {BaseCommand} from '../../cli/base-command.js'
import {collect, listFlags, pageParams} from '../../cli/list.js'
import {table} from '../../cli/output.js'
import {bodyFromFlags, flagsFromSchema} from '../../cli/schema-flags.js'
import {refundColumns} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

const filters = flagsFromSchema(endpoints['refunds.search'].query!)

export default class RefundsList extends BaseCommand<typeof RefundsList> {
  static override endpoint = ['refunds.list', 'refunds.search'] as const
  static override summary = endpoints['refunds.list'].summary + '.'
  static override description =
    'Through the App API (installation token). With --charge or --payment-intent, lists the refunds of that one payment through the merchant API (secret key) instead.'
  static override examples = ['<%= config.bin %> refunds list', '<%= config.bin %> refunds list --env live --all --json', '<%= config.bin %> refunds list --charge py_123']
  static override flags = {...listFlags, ...filters.flags}

  async run() {
    const query = await bodyFromFlags(filters, this.flags)
    const page =
      Object.keys(query).length > 0
        ? await collect((await this.merchantClient()).refunds.list({...pageParams(this.flags), ...query}), this.flags)
        : await collect((await this.appClient()).refunds.list(pageParams(this.flags)), this.flags)
    return this.render(page, (p) => this.log(table(p.data, refundColumns)))
  }
}
