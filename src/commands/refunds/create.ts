import {BaseCommand} from '../../cli/base-command.js'
import {bodyFromFlags, dataFlag, flagsFromSchema} from '../../cli/schema-flags.js'
import {refundDetails} from '../../cli/services/commerce-view.js'
import {type BodyOf, endpoints} from '@payapp/sdk/endpoints'

const fields = flagsFromSchema(endpoints['refunds.create'].body)

export default class RefundsCreate extends BaseCommand<typeof RefundsCreate> {
  static override endpoint = 'refunds.create' as const
  static override summary = endpoints['refunds.create'].summary + ' (merchant API: needs the secret key).'
  static override description = 'Without --amount, refunds what is left. A full refund of a variant sale puts its units back in stock.'
  static override examples = ['<%= config.bin %> refunds create --payment py_123', '<%= config.bin %> refunds create --payment ch_123 --amount 500 --env live --json']
  static override flags = {...fields.flags, data: dataFlag}

  async run() {
    const client = await this.merchantClient()
    const body = await bodyFromFlags(fields, this.flags, this.flags.data)
    const refund = await client.refunds.create(body as BodyOf<'refunds.create'>)
    return this.render(refund, (r) => this.log(refundDetails(r)))
  }
}
