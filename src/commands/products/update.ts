import {Args} from '@oclif/core'

import {BaseCommand} from '../../cli/base-command.js'
import {bodyFromFlags, dataFlag, flagsFromSchema} from '../../cli/schema-flags.js'
import {productBlock} from '../../cli/services/catalog-view.js'
import {endpoints, type BodyOf} from '../../sdk/endpoints.js'

const derived = flagsFromSchema(endpoints['products.update'].body)

export default class ProductsUpdate extends BaseCommand<typeof ProductsUpdate> {
  static override summary = endpoints['products.update'].summary + '.'
  static override examples = [
    '<%= config.bin %> products update prod_123 --name "Organic T-shirt" --no-store-visible',
    '<%= config.bin %> products update prod_123 --default-price-id price_456',
    '<%= config.bin %> products update prod_123 --data \'{"description": null}\'',
  ]

  static override args = {product_id: Args.string({required: true, description: 'Product id'})}
  static override flags = {...derived.flags, data: dataFlag}

  async run() {
    const body = await bodyFromFlags(derived, this.flags, this.flags.data)
    const client = await this.appClient()
    const product = await client.products.update(this.args.product_id, body as BodyOf<'products.update'>)
    return this.render(product, (p) => this.log(productBlock(p, new Map((p.prices ?? []).map((x) => [x.id, x])))))
  }
}
