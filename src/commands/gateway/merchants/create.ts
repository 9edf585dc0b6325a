import {Flags} from '@oclif/core'

import {AdminCommand} from '../../../cli/admin-command.js'
import {saveProfile} from '../../../cli/config.js'
import {bodyFromFlags, dataFlag, flagsFromSchema} from '../../../cli/schema-flags.js'
import {adminFlags} from '../../../cli/services/gateway-admin.js'
import {adminMerchantCreate} from '@payapp/sdk/schemas/admin'

const derived = flagsFromSchema(adminMerchantCreate)

export default class GatewayMerchantsCreate extends AdminCommand<typeof GatewayMerchantsCreate> {
  static override summary = 'Create a merchant (with a live, approved store) on a running gateway: the first step on a gateway started without --seed.'
  static override description = `With --save, the merchant and the admin key are stored in the profile (--profile), so "gateway tokens create --save", "listen" and "trigger" need no more flags there.
A fresh gateway, from nothing to a working profile:
  payapp gateway merchants create --admin-key adm_… --profile dev --save
  payapp gateway tokens create --profile dev --save
  payapp gateway tokens create --profile dev --secret-key --save`
  static override examples = [
    '<%= config.bin %> gateway merchants create --admin-key adm_… --company "Acme GmbH" --country DE --save --profile dev',
    '<%= config.bin %> gateway merchants create --store-status draft --json',
  ]

  static override flags = {
    'admin-key': adminFlags['admin-key'],
    ...derived.flags,
    data: dataFlag,
    save: Flags.boolean({description: 'Store the merchant and the admin key in the profile (--profile) with this base URL.'}),
  }

  async run() {
    const ctx = await this.context()
    const body = await bodyFromFlags(derived, this.flags, this.flags.data)
    const adminKey = await this.adminKey()
    const admin = await this.admin()
    const merchant = await admin.merchants.create(body)
    if (this.flags.save) {
      await this.saveCredential('admin_key', adminKey, {profile: ctx.profile, env: 'test', baseUrl: ctx.baseUrl})
      await this.saveCredential('admin_key', adminKey, {profile: ctx.profile, env: 'live', baseUrl: ctx.baseUrl})
      await saveProfile(this.config.configDir, ctx.profile, {merchant: merchant.id})
    }
    return this.render(merchant, (m) => {
      this.log(`Created merchant ${m.id} (${m.company}) with store ${m.store.id} (${m.store.status}, ${m.store.approval})`)
      this.log(this.flags.save
        ? `Saved to profile "${ctx.profile}". Next: payapp gateway tokens create --profile ${ctx.profile} --save`
        : `Next: payapp gateway tokens create --merchant ${m.id} --save`)
    })
  }
}
