import {BaseCommand} from '../../cli/base-command.js'
import {bodyFromFlags, dataFlag, flagsFromSchema} from '../../cli/schema-flags.js'
import {productBlock} from '../../cli/services/catalog-view.js'
import {endpoints, type BodyOf} from '../../sdk/endpoints.js'

// `default_price` is a synonym of `price`: one set of --price-* flags is enough (--data still takes either).
const derived = flagsFromSchema(endpoints['products.create'].body, {exclude: ['default_price']})

export default class ProductsCreate extends BaseCommand<typeof ProductsCreate> {
  static override summary = endpoints['products.create'].summary + '.'
  static override examples = [
    '<%= config.bin %> products create --name "T-shirt" --price-currency eur --price-unit-amount 2500',
    '<%= config.bin %> products create --name Mug --images files/abc/mug.png --tags kitchen --metadata sku_family=mugs',
    '<%= config.bin %> products create --data @product.json',
    'cat product.json | <%= config.bin %> products create --data -',
  ]

  static override flags = {...derived.flags, data: dataFlag}

  async run() {
    const body = await bodyFromFlags(derived, this.flags, this.flags.data)
    const client = await this.appClient()
    const product = await client.products.create(body as BodyOf<'products.create'>)
    return this.render(product, (p) => this.log(productBlock(p, new Map((p.prices ?? []).map((x) => [x.id, x])))))
  }
}
