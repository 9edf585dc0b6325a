import {Args} from '@oclif/core'

import {BaseCommand} from '../../cli/base-command.js'
import {endpoints} from '../../sdk/endpoints.js'

export default class ProductsArchive extends BaseCommand<typeof ProductsArchive> {
  static override endpoint = 'products.archive' as const
  static override summary = endpoints['products.archive'].summary + '.'
  static override examples = ['<%= config.bin %> products archive prod_123', '<%= config.bin %> products archive prod_123 --json']
  static override args = {product_id: Args.string({required: true, description: 'Product id'})}

  async run() {
    const client = await this.appClient()
    return this.render(await client.products.archive(this.args.product_id), (p) => this.log(`Archived product ${p.id} and its prices.`))
  }
}
