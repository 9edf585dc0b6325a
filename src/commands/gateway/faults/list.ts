import {BaseCommand} from '../../../cli/base-command.js'
import {ADMIN_KEY_ENV, adminFlags, gatewayAdmin} from '../../../cli/services/gateway-admin.js'
import {faultLine} from '../../../cli/services/faults-view.js'

export default class GatewayFaultsList extends BaseCommand<typeof GatewayFaultsList> {
  static override summary = 'List the fault-injection rules of a running gateway, with how often each struck.'
  static override examples = ['<%= config.bin %> gateway faults list', '<%= config.bin %> gateway faults list --json']
  static override flags = {'admin-key': adminFlags['admin-key']}

  async run() {
    const adminKey = await this.requireFlag('admin-key', this.flags['admin-key'], {envVar: ADMIN_KEY_ENV, secret: true})
    const admin = await gatewayAdmin((await this.context()).baseUrl, adminKey)
    const page = await admin.faults.list()
    return this.render(page, (p) => {
      if (p.data.length === 0) this.log('No fault rules.')
      for (const f of p.data) this.log(faultLine(f))
    })
  }
}
