import {AdminCommand} from '../../../cli/admin-command.js'
import {adminFlags, clockFlags, clockMerchant, describeClock} from '../../../cli/services/gateway-admin.js'

export default class GatewayClock extends AdminCommand<typeof GatewayClock> {
  static override summary = "Show a running gateway's test clock: the profile's merchant's, or with --all the shared one."
  static override examples = ['<%= config.bin %> gateway clock', '<%= config.bin %> gateway clock --merchant mch_123 --json', '<%= config.bin %> gateway clock --all']
  static override flags = {'admin-key': adminFlags['admin-key'], ...clockFlags}

  async run() {
    const admin = await this.admin()
    const clock = await admin.clock.retrieve({merchant: await clockMerchant(this.flags.all, () => this.configuredMerchant())})
    return this.render(clock, (c) => this.log(describeClock(c)))
  }
}
