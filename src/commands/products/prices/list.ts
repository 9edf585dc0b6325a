import {Args} from '@oclif/core'

import {BaseCommand} from '../../../cli/base-command.js'
import {collect, listFlags, pageParams} from '../../../cli/list.js'
import {moreHint, pricesTable} from '../../../cli/services/catalog-view.js'
import {endpoints} from '../../../sdk/endpoints.js'

export default class PricesList extends BaseCommand<typeof PricesList> {
  static override endpoint = 'prices.list' as const
  static override summary = endpoints['prices.list'].summary + ', newest first; amounts in major units.'
  static override examples = ['<%= config.bin %> products prices list prod_123', '<%= config.bin %> products prices list prod_123 --all --json']
  static override args = {product_id: Args.string({required: true, description: 'Product id'})}
  static override flags = {...listFlags}

  async run() {
    const client = await this.appClient()
    const page = await collect(client.products.prices.list(this.args.product_id, pageParams(this.flags)), this.flags)
    return this.render(page, (page) => {
      this.log(pricesTable(page.data))
      const hint = moreHint(page, this.flags, 'prices')
      if (hint) this.logToStderr(hint)
    })
  }
}
