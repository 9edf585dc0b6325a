import {BaseCommand} from '../../cli/base-command.js'
import {table} from '../../cli/output.js'
import {balanceColumns, balanceRows} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default class Balance extends BaseCommand<typeof Balance> {
  static override endpoint = 'balance.retrieve' as const
  static override summary = `${endpoints['balance.retrieve'].summary}, per currency.`
  static override examples = ['<%= config.bin %> balance', '<%= config.bin %> balance --env live --json']

  async run() {
    const balance = await (await this.appClient()).balance.retrieve()
    return this.render(balance, (b) => this.log(table(balanceRows(b), balanceColumns)))
  }
}
