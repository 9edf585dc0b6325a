import {AdminCommand} from '../../../cli/admin-command.js'
import {adminFlags} from '../../../cli/services/gateway-admin.js'
import {faultLine} from '../../../cli/services/faults-view.js'

export default class GatewayFaultsList extends AdminCommand<typeof GatewayFaultsList> {
  static override summary = 'List the fault-injection rules of a running gateway (API and webhooks), with how often each struck.'
  static override examples = ['<%= config.bin %> gateway faults list', '<%= config.bin %> gateway faults list --json']
  static override flags = {'admin-key': adminFlags['admin-key']}

  async run() {
    const admin = await this.admin()
    const page = await admin.faults.list()
    return this.render(page, (p) => {
      if (p.data.length === 0) this.log('No fault rules.')
      for (const f of p.data) this.log(faultLine(f))
    })
  }
}
