/**
 * The base of the commands that script a local gateway through its admin API (`listen`, `trigger`,
 * `gateway …`). They find the admin key and the merchant the way other commands find a token:
 * flag or env var, then the profile (`gateway start --seed` saves both), then, for the merchant, the
 * merchant the profile's installation token belongs to.
 */
import type {Command} from '@oclif/core'

import {AuthenticationError, PermissionError} from '@payapp/sdk/errors'
import {BaseCommand} from './base-command.js'
import {ENV_VARS} from './config.js'
import {usageError} from './exit-codes.js'

export abstract class AdminCommand<T extends typeof Command> extends BaseCommand<T> {
  /** The admin key: --admin-key, PAYAPP_ADMIN_KEY, the profile's saved one; else a prompt on a terminal, or exit 2/3. */
  protected async adminKey(): Promise<string> {
    const flag = (this.flags as {'admin-key'?: string})['admin-key']
    if (flag) return flag
    const ctx = await this.context()
    const saved = await this.credentialStore().get(ctx.profile, 'admin_key', ctx.env)
    if (saved) return saved
    return this.requireFlag('admin-key', undefined, {envVar: ENV_VARS.adminKey, secret: true, message: 'Gateway admin key: '})
  }

  /** A GatewayAdmin for this run's base URL. */
  protected async admin() {
    const [ctx, adminKey] = [await this.context(), await this.adminKey()]
    const {GatewayAdmin} = await import('@payapp/sdk/admin')
    const {onRequest, onResponse, totalTimeout, loopbackRefused, fetch} = this.clientOptions()
    return new GatewayAdmin({baseUrl: ctx.baseUrl, adminKey, onRequest, onResponse, totalTimeout, loopbackRefused, fetch})
  }

  /** The merchant named by --merchant, PAYAPP_MERCHANT or the profile, if any (no lookup through a token). */
  protected async configuredMerchant(): Promise<string | undefined> {
    const flag = (this.flags as {merchant?: string}).merchant
    if (flag) return flag
    return (await this.loadConfig()).profiles[(await this.context()).profile]?.merchant
  }

  /**
   * The merchant: --merchant or PAYAPP_MERCHANT, the profile's merchant, else the merchant of the
   * installation token (one read of /v1/app/merchant). Fails (exit 2) saying how to name one.
   */
  protected async merchant(): Promise<string> {
    const configured = await this.configuredMerchant()
    if (configured) return configured
    const ctx = await this.context()
    const token = await this.findCredential('token', ctx)
    if (token) {
      try {
        return (await (await this.appClient()).merchant.retrieve()).id
      } catch (error) {
        if (!(error instanceof PermissionError) && !(error instanceof AuthenticationError)) throw error
      }
    }
    throw usageError(
      `Missing --merchant (or ${ENV_VARS.merchant}): profile "${ctx.profile}" has no merchant and no ${ctx.env} token that can read one. ` +
        `"payapp gateway start --seed" saves one to the profile "local" (--profile local); on an unseeded gateway, "payapp gateway merchants create --save" makes one`,
      '--merchant',
    )
  }
}
