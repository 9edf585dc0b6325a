import {AdminCommand} from '../../../cli/admin-command.js'
import {bodyFromFlags, dataFlag, flagsFromSchema} from '../../../cli/schema-flags.js'
import {adminFlags} from '../../../cli/services/gateway-admin.js'
import {faultLine} from '../../../cli/services/faults-view.js'
import {adminFaultCreate, type AdminFaultCreate} from '@payapp/sdk/schemas/admin'

const fields = flagsFromSchema(adminFaultCreate, {exclude: ['merchant']})

export default class GatewayFaultsAdd extends AdminCommand<typeof GatewayFaultsAdd> {
  static override summary = 'Make matching API requests on a running gateway fail (429, 500, 503) or answer late, to test an app\'s retry logic.'
  static override description = `A faulted request writes nothing and answers in the platform's error envelope (Retry-After on 429 and 503), so a retry with the same Idempotency-Key behaves as if the fault never happened.
--route takes an endpoint id (products.create) or "METHOD /path" (POST /v1/app/products; POST /products for both doors). Without --merchant, every merchant's requests match.`
  static override examples = [
    '<%= config.bin %> gateway faults add --route products.create --status 429 --retry-after 1 --count 2',
    '<%= config.bin %> gateway faults add --route "GET /products" --latency-ms 2000',
    '<%= config.bin %> gateway faults add --merchant mch_123 --status 500 --probability 0.1 --seed 7 --json',
  ]
  static override flags = {...adminFlags, ...fields.flags, data: dataFlag}

  async run() {
    const body = await bodyFromFlags(fields, this.flags, this.flags.data)
    if (this.flags.merchant) body.merchant = this.flags.merchant
    const admin = await this.admin()
    const fault = await admin.faults.create(body as AdminFaultCreate)
    return this.render(fault, (f) => this.log(`Added ${faultLine(f)}`))
  }
}
