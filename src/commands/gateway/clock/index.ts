import {BaseCommand} from '../../../cli/base-command.js'
import {ADMIN_KEY_ENV, adminFlags, gatewayAdmin} from '../../../cli/services/gateway-admin.js'

export default class GatewayClock extends BaseCommand<typeof GatewayClock> {
  static override summary = "Show a running gateway's test clock."
  static override examples = ['<%= config.bin %> gateway clock', '<%= config.bin %> gateway clock --json']
  static override flags = {'admin-key': adminFlags['admin-key']}

  async run() {
    const adminKey = await this.requireFlag('admin-key', this.flags['admin-key'], {envVar: ADMIN_KEY_ENV, secret: true})
    const admin = await gatewayAdmin((await this.context()).baseUrl, adminKey)
    const clock = await admin.clock.retrieve()
    return this.render(clock, (c) => this.log(`Clock at ${new Date(c.now * 1000).toISOString()} (offset ${c.offset_seconds} s)`))
  }
}
