import {Args} from '@oclif/core'

import {BaseCommand} from '../cli/base-command.js'
import {ADMIN_KEY_ENV, adminFlags, gatewayAdmin, requireMerchant} from '../cli/services/gateway-admin.js'
import {TRIGGER_EVENTS, trigger, type TriggerEvent} from '../cli/services/trigger.js'

export default class Trigger extends BaseCommand<typeof Trigger> {
  static override summary = 'Cause a real event on the local gateway: a checkout paid, expired or declined, or a payment refunded.'
  static override description = `Drives the store API (the profile's secret key or PAYAPP_SECRET_KEY) and the gateway's admin helpers (--admin-key) the way a buyer would, so "payapp listen" forwards the events a real sale produces. Prints each step and the ids of the events it caused; --json prints them as one object.`
  static override examples = [
    '<%= config.bin %> trigger checkout.session.completed --merchant mch_123',
    '<%= config.bin %> trigger charge.refunded --json',
  ]

  static override args = {
    event: Args.string({required: true, options: [...TRIGGER_EVENTS], description: 'Event to cause'}),
  }

  static override flags = {...adminFlags}

  async run() {
    const {flags, args} = this
    const merchant = requireMerchant(flags.merchant)
    const adminKey = await this.requireFlag('admin-key', flags['admin-key'], {envVar: ADMIN_KEY_ENV, secret: true})
    const ctx = await this.context()
    const store = await this.storeClient()
    const admin = await gatewayAdmin(ctx.baseUrl, adminKey)

    const result = await trigger(args.event as TriggerEvent, {store, admin, merchant, env: ctx.env})
    return this.render(result, (r) => {
      for (const step of r.steps) this.log(step)
      this.log(`Events (${r.events.length}):`)
      for (const e of r.events) this.log(`  ${e.id}  ${e.type}`)
    })
  }
}
