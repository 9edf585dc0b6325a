import {AdminCommand} from '../../../cli/admin-command.js'
import {date} from '../../../cli/output.js'
import {adminFlags} from '../../../cli/services/gateway-admin.js'

export default class GatewayClock extends AdminCommand<typeof GatewayClock> {
  static override summary = "Show a running gateway's test clock."
  static override examples = ['<%= config.bin %> gateway clock', '<%= config.bin %> gateway clock --json']
  static override flags = {'admin-key': adminFlags['admin-key']}

  async run() {
    const admin = await this.admin()
    const clock = await admin.clock.retrieve()
    return this.render(clock, (c) => this.log(`Clock at ${date(c.now)} (offset ${c.offset_seconds} s)`))
  }
}
