import {Args} from '@oclif/core'

import {BaseCommand} from '../../../cli/base-command.js'
import {bodyFromFlags, dataFlag, flagsFromSchema} from '../../../cli/schema-flags.js'
import {priceBlock} from '../../../cli/services/catalog-view.js'
import {endpoints, type BodyOf} from '../../../sdk/endpoints.js'
import {PRICE_IMMUTABLE_FIELDS} from '../../../sdk/schemas/catalog.js'

// The schema declares the immutable fields only to reject them; they are no flags.
const derived = flagsFromSchema(endpoints['prices.update'].body, {exclude: PRICE_IMMUTABLE_FIELDS})

export default class PricesUpdate extends BaseCommand<typeof PricesUpdate> {
  static override summary = endpoints['prices.update'].summary + '; amount, currency and billing are immutable.'
  static override examples = [
    '<%= config.bin %> products prices update prod_123 price_456 --nickname "Launch price"',
    '<%= config.bin %> products prices update prod_123 price_456 --no-active',
  ]

  static override args = {
    product_id: Args.string({required: true, description: 'Product id'}),
    price_id: Args.string({required: true, description: 'Price id'}),
  }

  static override flags = {...derived.flags, data: dataFlag}

  async run() {
    const body = await bodyFromFlags(derived, this.flags, this.flags.data)
    const client = await this.appClient()
    const price = await client.products.prices.update(this.args.product_id, this.args.price_id, body as BodyOf<'prices.update'>)
    return this.render(price, (p) => this.log(priceBlock(p)))
  }
}
