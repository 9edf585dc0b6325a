import {Args} from '@oclif/core'

import {BaseCommand} from '../../../cli/base-command.js'
import {collect, listFlags, moreHint, pageParams} from '../../../cli/list.js'
import {pricesOf, variantsTable} from '../../../cli/services/catalog-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default class VariantsList extends BaseCommand<typeof VariantsList> {
  static override endpoint = 'variants.list' as const
  static override summary = endpoints['variants.list'].summary + '.'
  static override examples = ['<%= config.bin %> products variants list prod_123', '<%= config.bin %> products variants list prod_123 --all --json']
  static override args = {product_id: Args.string({required: true, description: 'Product id'})}
  static override flags = {...listFlags}

  async run() {
    const client = await this.appClient()
    const {product_id: product} = this.args
    // Human output shows amounts, which variants only reference by id: read the prices alongside.
    const [page, prices] = await Promise.all([
      collect(client.products.variants.list(product, pageParams(this.flags)), this.flags),
      this.jsonEnabled() ? undefined : pricesOf(client, product),
    ])
    return this.render(page, (page) => {
      this.log(variantsTable(page.data, prices ?? new Map()))
      const hint = moreHint(page, this.flags, 'variants')
      if (hint) this.logToStderr(hint)
    })
  }
}
