import {stat} from 'node:fs/promises'

import {Args, Flags} from '@oclif/core'

import {writeCommand} from '../../../cli/command-factory.js'
import {orderView} from '../../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

const isLocalFile = (path: string) => stat(path).then((s) => s.isFile(), () => false)

export default writeCommand({
  endpoint: 'orders.evidence.create',
  summary: `${endpoints['orders.evidence.create'].summary}: a tracking number with its carrier, a file, or a note.`,
  examples: [
    '<%= config.bin %> orders evidence add ord_123 --tracking-number 1Z999AA10123456784 --carrier UPS',
    '<%= config.bin %> orders evidence add ord_123 --file ./delivery-receipt.pdf',
    '<%= config.bin %> orders evidence add ord_123 --note "Handed to the customer in person" --json',
  ],
  args: {order_id: Args.string({required: true, description: 'Order id.'})},
  adjust: (derived) => {
    derived.flags.file = Flags.string({description: 'A local file to upload first (at most 5 MB), or the storage path (files/…) of one uploaded before'})
  },
  async prepare({body, client, spinner}) {
    if (typeof body.file === 'string' && (await isLocalFile(body.file))) {
      const s = spinner(`Uploading ${body.file}`)
      body.file = (await client.files.upload(body.file)).path
      s.stop()
    }
  },
  render: orderView,
})
