import {stat} from 'node:fs/promises'

import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../../cli/base-command.js'
import {bodyFromFlags, dataFlag, flagsFromSchema} from '../../../cli/schema-flags.js'
import {orderView} from '../../../cli/services/commerce-view.js'
import {type BodyOf, endpoints} from '../../../sdk/endpoints.js'

const fields = flagsFromSchema(endpoints['orders.evidence.create'].body)
const isLocalFile = (path: string) => stat(path).then((s) => s.isFile(), () => false)

export default class OrdersEvidenceAdd extends BaseCommand<typeof OrdersEvidenceAdd> {
  static override summary = `${endpoints['orders.evidence.create'].summary}: a tracking number with its carrier, a file, or a note.`
  static override examples = [
    '<%= config.bin %> orders evidence add ord_123 --tracking-number 1Z999AA10123456784 --carrier UPS',
    '<%= config.bin %> orders evidence add ord_123 --file ./delivery-receipt.pdf',
    '<%= config.bin %> orders evidence add ord_123 --note "Handed to the customer in person" --json',
  ]
  static override args = {order_id: Args.string({required: true, description: 'Order id.'})}
  static override flags = {
    ...fields.flags,
    file: Flags.string({description: 'A local file to upload first (at most 5 MB), or the storage path (files/…) of one uploaded before'}),
    data: dataFlag,
  }

  async run() {
    const client = await this.appClient()
    const body = await bodyFromFlags(fields, this.flags, this.flags.data)
    if (typeof body.file === 'string' && (await isLocalFile(body.file))) {
      const s = this.spinner(`Uploading ${body.file}`)
      body.file = (await client.files.upload(body.file)).path
      s.stop()
    }
    const order = await client.orders.evidence.create(this.args.order_id, body as BodyOf<'orders.evidence.create'>)
    return this.render(order, (o) => this.log(orderView(o)))
  }
}
