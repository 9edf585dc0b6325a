import {BaseCommand} from '../../cli/base-command.js'
import {merchantDetails} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default class Merchant extends BaseCommand<typeof Merchant> {
  static override endpoint = 'merchant.retrieve' as const
  static override summary = `${endpoints['merchant.retrieve'].summary}: company, country, VAT number, status.`
  static override examples = ['<%= config.bin %> merchant', '<%= config.bin %> merchant --env live --json']

  async run() {
    const merchant = await (await this.appClient()).merchant.retrieve()
    return this.render(merchant, (m) => this.log(merchantDetails(m)))
  }
}
