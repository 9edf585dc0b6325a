import {BaseCommand} from '../../cli/base-command.js'
import {collect, listFlags, moreHint, pageParams} from '../../cli/list.js'
import {defaultPrices, productsTable} from '../../cli/services/catalog-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default class ProductsList extends BaseCommand<typeof ProductsList> {
  static override endpoint = 'products.list' as const
  static override summary = endpoints['products.list'].summary + '.'
  static override examples = [
    '<%= config.bin %> products list',
    '<%= config.bin %> products list --limit 100 --offset 100',
    '<%= config.bin %> products list --all --json',
  ]

  static override flags = {...listFlags}

  async run() {
    const client = await this.appClient()
    const page = await collect(client.products.list(pageParams(this.flags)), this.flags)
    // Amounts, not only price ids: the App API's products carry ids, so human output reads their prices (in parallel).
    const prices = this.jsonEnabled() ? new Map() : await defaultPrices(client, page.data)
    return this.render(page, (page) => {
      this.log(productsTable(page.data, prices))
      const hint = moreHint(page, this.flags, 'products')
      if (hint) this.logToStderr(hint)
    })
  }
}
