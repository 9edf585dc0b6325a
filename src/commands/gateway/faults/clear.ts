import {Args} from '@oclif/core'

import {AdminCommand} from '../../../cli/admin-command.js'
import {adminFlags} from '../../../cli/services/gateway-admin.js'

export default class GatewayFaultsClear extends AdminCommand<typeof GatewayFaultsClear> {
  static override summary = 'Remove one fault-injection rule (by id), or every rule, from a running gateway.'
  static override examples = ['<%= config.bin %> gateway faults clear', '<%= config.bin %> gateway faults clear flt_123 --json']
  static override args = {id: Args.string({description: 'The rule to remove (flt_…); all rules when absent.'})}
  static override flags = {'admin-key': adminFlags['admin-key']}

  async run() {
    const admin = await this.admin()
    if (this.args.id) {
      const removed = await admin.faults.delete(this.args.id)
      return this.render(removed, (r) => this.log(`Removed fault ${r.id}`))
    }
    const cleared = await admin.faults.clear()
    return this.render(cleared, (c) => this.log(`Removed ${c.deleted} fault rule${c.deleted === 1 ? '' : 's'}`))
  }
}
