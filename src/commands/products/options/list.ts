import {Args} from '@oclif/core'

import {BaseCommand} from '../../../cli/base-command.js'
import {collect, listFlags, pageParams} from '../../../cli/list.js'
import {moreHint, optionGroupsTable} from '../../../cli/services/catalog-view.js'
import {endpoints} from '../../../sdk/endpoints.js'

export default class OptionsList extends BaseCommand<typeof OptionsList> {
  static override endpoint = 'options.list' as const
  static override summary = endpoints['options.list'].summary + ', one row per value with its id.'
  static override examples = ['<%= config.bin %> products options list prod_123', '<%= config.bin %> products options list prod_123 --json']
  static override args = {product_id: Args.string({required: true, description: 'Product id'})}
  static override flags = {...listFlags}

  async run() {
    const client = await this.appClient()
    const page = await collect(client.products.options.list(this.args.product_id, pageParams(this.flags)), this.flags)
    return this.render(page, (page) => {
      this.log(optionGroupsTable(page.data))
      const hint = moreHint(page, this.flags, 'option groups')
      if (hint) this.logToStderr(hint)
    })
  }
}
