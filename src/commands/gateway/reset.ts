import {AdminCommand} from '../../cli/admin-command.js'
import {adminFlags} from '../../cli/services/gateway-admin.js'

export default class GatewayReset extends AdminCommand<typeof GatewayReset> {
  static override summary = "Wipe a merchant's sandbox (test-environment data) on a running gateway; live data and credentials stay."
  static override examples = [
    '<%= config.bin %> gateway reset --merchant mch_123 --admin-key adm_…',
    'PAYAPP_ADMIN_KEY=adm_… PAYAPP_MERCHANT=mch_123 <%= config.bin %> gateway reset --base-url http://127.0.0.1:4242 --json',
  ]
  static override flags = {...adminFlags}

  async run() {
    const merchant = await this.merchant()
    const admin = await this.admin()
    const result = await admin.sandbox.reset(merchant)
    return this.render(result, (r) => this.log(`Wiped the sandbox of ${r.merchant}: ${r.deleted_objects} objects deleted`))
  }
}
