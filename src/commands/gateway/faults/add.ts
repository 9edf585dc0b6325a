import {Flags} from '@oclif/core'

import {AdminCommand} from '../../../cli/admin-command.js'
import {bodyFromFlags, dataFlag, flagsFromSchema} from '../../../cli/schema-flags.js'
import {adminFlags} from '../../../cli/services/gateway-admin.js'
import {faultLine} from '../../../cli/services/faults-view.js'
import {adminFaultCreate, type AdminFaultCreate} from '@payapp/sdk/schemas/admin'

const fields = flagsFromSchema(adminFaultCreate, {exclude: ['merchant', 'scope']})

export default class GatewayFaultsAdd extends AdminCommand<typeof GatewayFaultsAdd> {
  static override summary = "Make a running gateway's API requests fail or answer late, or its webhook deliveries duplicated, delayed, reordered or failed."
  static override description = `API rules (the default): a faulted request writes nothing and answers in the platform's error envelope (Retry-After on 429 and 503), so a retry with the same Idempotency-Key behaves as if the fault never happened. --route takes an endpoint id (products.create) or "METHOD /path" (POST /v1/app/products; POST /products for both doors).
Webhook rules (--webhooks): matching deliveries (--endpoint, --event-type: a type, "prefix.*" or *) are sent twice (--duplicate), held until the gateway clock has moved --delay-seconds, sent newest first within their request or clock step (--reorder), or fail their first --fail-attempts attempts as timeouts, so retries run on the clock (7: given up). The endpoint's delivery log ("GET /_admin/webhook_endpoints/{id}/deliveries") says what was injected.
Without --merchant, every merchant's requests or deliveries match. --seed makes a --probability below 1 pick the same ones every run.`
  static override examples = [
    '<%= config.bin %> gateway faults add --route products.create --status 429 --retry-after 1 --count 2',
    '<%= config.bin %> gateway faults add --route "GET /products" --latency-ms 2000',
    '<%= config.bin %> gateway faults add --merchant mch_123 --status 500 --probability 0.1 --seed 7 --json',
    '<%= config.bin %> gateway faults add --webhooks --event-type "checkout.session.*" --duplicate --reorder',
    '<%= config.bin %> gateway faults add --webhooks --fail-attempts 3 --count 1',
    '<%= config.bin %> gateway faults add --webhooks --delay-seconds 3600 --probability 0.5 --seed 42',
  ]
  static override flags = {
    ...adminFlags,
    webhooks: Flags.boolean({description: 'A rule for webhook deliveries (scope "webhooks") rather than API requests.'}),
    ...fields.flags,
    data: dataFlag,
  }

  async run() {
    const body = await bodyFromFlags(fields, this.flags, this.flags.data)
    if (this.flags.merchant) body.merchant = this.flags.merchant
    if (this.flags.webhooks) body.scope = 'webhooks'
    const admin = await this.admin()
    const fault = await admin.faults.create(body as AdminFaultCreate)
    return this.render(fault, (f) => this.log(`Added ${faultLine(f)}`))
  }
}
