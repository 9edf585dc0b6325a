import {Args} from '@oclif/core'

import {BaseCommand} from '../../cli/base-command.js'
import {pricesOf, productDetail} from '../../cli/services/catalog-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default class ProductsGet extends BaseCommand<typeof ProductsGet> {
  static override endpoint = 'products.retrieve' as const
  static override summary = endpoints['products.retrieve'].summary + '.'
  static override examples = ['<%= config.bin %> products get prod_123', '<%= config.bin %> products get prod_123 --json']
  static override args = {product_id: Args.string({required: true, description: 'Product id'})}

  async run() {
    const client = await this.appClient()
    const id = this.args.product_id
    // Human output shows amounts, which the App API's product lacks: read the prices alongside.
    const [product, prices] = await Promise.all([client.products.retrieve(id), this.jsonEnabled() ? undefined : pricesOf(client, id)])
    return this.render(product, (p) => this.log(productDetail(p, prices ?? new Map())))
  }
}
