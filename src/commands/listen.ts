import {Flags} from '@oclif/core'

import {BaseCommand} from '../cli/base-command.js'
import {mask} from '../cli/credentials.js'
import {usageError} from '../cli/exit-codes.js'
import {ADMIN_KEY_ENV, adminFlags, gatewayAdmin, requireMerchant} from '../cli/services/gateway-admin.js'
import {eventLine, startRelay, WEBHOOK_SECRET_ENV, type RelayedEvent} from '../cli/services/listen.js'

export default class Listen extends BaseCommand<typeof Listen> {
  static override summary = "Forward the local gateway's webhook events to your app, signed as the platform signs them."
  static override description = `Registers a webhook endpoint on the gateway (--env, default test) that points at a relay on 127.0.0.1; each delivery is forwarded to --forward-to with the same raw body and Service-Signature header, and the gateway gets your app's status (so a failing app sees the platform's retries).
Prints the signing secret on stderr once (export it for your app), then one line per event on stdout (--json: one JSON object per line). Ctrl-C deletes the endpoint.`
  static override examples = [
    '<%= config.bin %> listen --forward-to http://localhost:3000/webhooks --merchant mch_123',
    '<%= config.bin %> listen --forward-to http://localhost:3000/webhooks --events checkout.session.completed --events charge.refunded',
    'PAYAPP_WEBHOOK_SECRET=whsec_… <%= config.bin %> listen --forward-to http://localhost:3000/webhooks --json',
  ]

  static override flags = {
    ...adminFlags,
    'forward-to': Flags.string({description: "Your app's webhook URL, e.g. http://localhost:3000/webhooks."}),
    events: Flags.string({multiple: true, description: 'Event type to forward (repeatable); "prefix.*" patterns work. [default: every type]'}),
    secret: Flags.string({env: WEBHOOK_SECRET_ENV, description: 'Signing secret to reuse (whsec_…) so your app keeps its configured one. [default: a new one]'}),
  }

  async run(): Promise<void> {
    const {flags} = this
    const forwardTo = await this.requireFlag('forward-to', flags['forward-to'])
    if (!/^https?:\/\/[^/]/.test(forwardTo) || !URL.canParse(forwardTo)) throw usageError(`--forward-to must be an http(s) URL, not "${forwardTo}"`, '--forward-to')
    const merchant = requireMerchant(flags.merchant)
    const adminKey = await this.requireFlag('admin-key', flags['admin-key'], {envVar: ADMIN_KEY_ENV, secret: true})
    const ctx = await this.context()
    const admin = await gatewayAdmin(ctx.baseUrl, adminKey)

    const json = this.jsonEnabled()
    const print = (e: RelayedEvent) => process.stdout.write((json ? JSON.stringify(e) : eventLine(e)) + '\n')
    const relay = await startRelay(forwardTo, print)
    let endpoint
    try {
      endpoint = await admin.webhookEndpoints.create({merchant, env: ctx.env, url: relay.url, events: flags.events ?? ['*'], ...(flags.secret ? {secret: flags.secret} : {})})
    } catch (error) {
      await relay.close()
      throw error
    }

    const err = (line: string) => process.stderr.write(line + '\n')
    err(`Forwarding ${ctx.env} events of ${merchant} (${endpoint.events.join(', ')}) to ${forwardTo}; webhook endpoint ${endpoint.id}`)
    // A local test secret: the app needs it in full, unless the user chose it and already has it.
    if (flags.secret) err(`Signing with your secret ${mask(endpoint.secret)} (${WEBHOOK_SECRET_ENV})`)
    else err(`Your app's signing secret:\nexport ${WEBHOOK_SECRET_ENV}=${endpoint.secret}`)
    err('Press Ctrl-C to stop.')

    await new Promise<void>((resolve) => {
      const stop = () => {
        admin.webhookEndpoints
          .delete(endpoint.id)
          .catch((error: Error) => err(`Could not delete webhook endpoint ${endpoint.id}: ${error.message}`))
          .then(() => relay.close())
          .then(resolve, resolve)
      }
      process.once('SIGINT', stop)
      process.once('SIGTERM', stop)
    })
  }
}
