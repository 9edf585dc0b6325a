import {Args} from '@oclif/core'

import {BaseCommand} from '../../../cli/base-command.js'
import {bodyFromFlags, dataFlag, flagsFromSchema} from '../../../cli/schema-flags.js'
import {priceBlock} from '../../../cli/services/catalog-view.js'
import {endpoints, type BodyOf} from '../../../sdk/endpoints.js'

const derived = flagsFromSchema(endpoints['prices.create'].body)

export default class PricesCreate extends BaseCommand<typeof PricesCreate> {
  static override summary = endpoints['prices.create'].summary + ' (amount in minor units, at least 250).'
  static override examples = [
    '<%= config.bin %> products prices create prod_123 --currency eur --unit-amount 2500',
    '<%= config.bin %> products prices create prod_123 --currency eur --unit-amount 900 --recurring-interval month --set-as-default',
    '<%= config.bin %> products prices create prod_123 --data @price.json',
  ]

  static override args = {product_id: Args.string({required: true, description: 'Product id'})}
  static override flags = {...derived.flags, data: dataFlag}

  async run() {
    const body = await bodyFromFlags(derived, this.flags, this.flags.data)
    const client = await this.appClient()
    const price = await client.products.prices.create(this.args.product_id, body as BodyOf<'prices.create'>)
    return this.render(price, (p) => this.log(priceBlock(p)))
  }
}
