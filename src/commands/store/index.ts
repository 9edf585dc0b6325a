import {BaseCommand} from '../../cli/base-command.js'
import {storeBlock} from '../../cli/services/catalog-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default class Store extends BaseCommand<typeof Store> {
  static override endpoint = 'store.retrieve' as const
  static override summary = endpoints['store.retrieve'].summary + ': slug, name, status, approval and URLs.'
  static override examples = ['<%= config.bin %> store', '<%= config.bin %> store --json', '<%= config.bin %> store --env live']

  async run() {
    const client = await this.appClient()
    return this.render(await client.store.retrieve(), (store) => this.log(storeBlock(store)))
  }
}
