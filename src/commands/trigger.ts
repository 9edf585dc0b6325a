import {Args, Flags} from '@oclif/core'

import {AdminCommand} from '../cli/admin-command.js'
import {adminFlags} from '../cli/services/gateway-admin.js'
import {parseOverrides, TRIGGER_EVENTS, trigger, type TriggerEvent} from '../cli/services/trigger.js'

export default class Trigger extends AdminCommand<typeof Trigger> {
  static override summary = 'Cause a real event on the local gateway: any event type it emits, by making the state change that emits it.'
  static override description = `Drives the store and merchant APIs (the profile's secret key or PAYAPP_SECRET_KEY) and the gateway's admin helpers (--admin-key) the way a buyer, a bank or a card network would, so "payapp listen" forwards exactly what the real change produces. Prints each step and the ids of the events it caused; --json prints them as one object.
With the profile "gateway start --seed" saved (--profile local), no other flag is needed: it holds the admin key, the merchant and the secret key.

--override field=value sets a field of the objects the trigger creates (metadata.key=value for one metadata entry). Each event takes its own fields; an unknown or ignored field is an error before anything runs.

Event types:
  ${TRIGGER_EVENTS.join('\n  ')}`
  static override examples = [
    '<%= config.bin %> trigger checkout.session.completed --profile local',
    '<%= config.bin %> trigger checkout.session.completed --merchant mch_123 --admin-key adm_…',
    '<%= config.bin %> trigger subscription.created --override quantity=3 --override metadata.plan=pro',
    '<%= config.bin %> trigger fraud_warning.created --override amount=9900 --override fraud_type=made_with_stolen_card --json',
  ]

  static override args = {
    event: Args.string({required: true, options: [...TRIGGER_EVENTS], description: 'Event type to cause'}),
  }

  static override flags = {
    ...adminFlags,
    override: Flags.string({multiple: true, description: 'field=value for the objects the trigger creates (repeatable)', default: []}),
  }

  async run() {
    const {flags, args} = this
    const event = args.event as TriggerEvent
    // Validated before any credential is read or any request is made.
    const overrides = parseOverrides(event, flags.override)
    const ctx = await this.context()
    const merchant = await this.merchant()
    const store = await this.storeClient()
    const merchantApi = await this.merchantClient()
    const admin = await this.admin()

    const result = await trigger(event, overrides, {store, merchantApi, admin, merchant, env: ctx.env, baseUrl: ctx.baseUrl})
    return this.render(result, (r) => {
      for (const step of r.steps) this.log(step)
      this.log(`Events (${r.events.length}):`)
      for (const e of r.events) this.log(`  ${e.id}  ${e.type}`)
    })
  }
}
