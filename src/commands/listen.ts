import {randomBytes} from 'node:crypto'

import {Flags} from '@oclif/core'

import {AdminCommand} from '../cli/admin-command.js'
import {ENV_VARS} from '../cli/config.js'
import {mask} from '../cli/credentials.js'
import {usageError} from '../cli/exit-codes.js'
import {adminFlags} from '../cli/services/gateway-admin.js'
import {eventLine, removeStaleEndpoints, startRelay, watchGateway, type RelayedEvent} from '../cli/services/listen.js'

export default class Listen extends AdminCommand<typeof Listen> {
  static override summary = "Forward the local gateway's webhook events to your app, signed as the platform signs them."
  static override description = `Registers a webhook endpoint on the gateway (--env, default test) that points at a relay on 127.0.0.1; each delivery is forwarded to --forward-to with the same raw body and Service-Signature header, and the gateway gets your app's status (so a failing app sees the platform's retries).
The signing secret is the profile's own (made once and kept with its credentials), so your app's configured secret keeps working across runs; --print-secret prints it and exits. Prints it on stderr at start (export it for your app), then one line per event on stdout (--json: one JSON object per line).
If the gateway goes away, says so and registers the endpoint again when it is back; endpoints left by earlier runs that were killed are removed at start. Ctrl-C deletes the endpoint.`
  static override examples = [
    '<%= config.bin %> listen --forward-to http://localhost:3000/webhooks --profile local',
    'export PAYAPP_WEBHOOK_SECRET=$(<%= config.bin %> listen --print-secret --profile local)',
    '<%= config.bin %> listen --forward-to http://localhost:3000/webhooks --merchant mch_123 --admin-key adm_… --events checkout.session.completed --events charge.refunded',
    'PAYAPP_WEBHOOK_SECRET=whsec_… <%= config.bin %> listen --forward-to http://localhost:3000/webhooks --json',
  ]

  static override flags = {
    ...adminFlags,
    'forward-to': Flags.string({description: "Your app's webhook URL, e.g. http://localhost:3000/webhooks."}),
    events: Flags.string({multiple: true, description: 'Event type to forward (repeatable); "prefix.*" patterns work. [default: every type]'}),
    secret: Flags.string({env: ENV_VARS.webhookSecret, description: "Signing secret to use (whsec_…). [default: the profile's, made once]"}),
    'print-secret': Flags.boolean({description: 'Print the signing secret listen signs with (for your app\'s environment) and exit; contacts no gateway.'}),
  }

  async run(): Promise<void> {
    const {flags} = this
    const ctx = await this.context()
    if (flags['print-secret']) {
      const secret = flags.secret ?? (await this.#profileSecret())
      process.stdout.write((this.jsonEnabled() ? JSON.stringify({secret, profile: ctx.profile, env: ctx.env}) : secret) + '\n')
      return
    }
    const forwardTo = await this.requireFlag('forward-to', flags['forward-to'])
    if (!/^https?:\/\/[^/]/.test(forwardTo) || !URL.canParse(forwardTo)) throw usageError(`--forward-to must be an http(s) URL, not "${forwardTo}"`, '--forward-to')
    const merchant = await this.merchant()
    const admin = await this.admin()
    const secret = flags.secret ?? (await this.#profileSecret())
    const err = (line: string) => process.stderr.write(line + '\n')

    const stale = await removeStaleEndpoints(admin.webhookEndpoints, merchant)
    if (stale.length > 0) err(`Removed ${stale.length} webhook endpoint(s) left by earlier listen runs: ${stale.join(', ')}`)

    const json = this.jsonEnabled()
    const print = (e: RelayedEvent) => process.stdout.write((json ? JSON.stringify(e) : eventLine(e)) + '\n')
    const relay = await startRelay(forwardTo, print)
    const register = () => admin.webhookEndpoints.create({merchant, env: ctx.env, url: relay.url, events: flags.events ?? ['*'], secret})
    let endpoint: Awaited<ReturnType<typeof register>>
    try {
      endpoint = await register()
    } catch (error) {
      await relay.close()
      throw error
    }

    err(`Forwarding ${ctx.env} events of ${merchant} (${endpoint.events.join(', ')}) to ${forwardTo}; webhook endpoint ${endpoint.id}`)
    // A local test secret: the app needs it in full, unless the user chose it and already has it.
    if (flags.secret) err(`Signing with your secret ${mask(secret)} (${ENV_VARS.webhookSecret})`)
    else err(`Your app's signing secret:\nexport ${ENV_VARS.webhookSecret}=${secret}`)
    err('Press Ctrl-C to stop.')

    const watch = watchGateway({
      endpoints: admin.webhookEndpoints,
      merchant,
      baseUrl: ctx.baseUrl,
      endpointId: () => endpoint.id,
      reRegister: async () => (endpoint = await register()).id,
      say: err,
    })

    await new Promise<void>((resolve) => {
      const stop = () => {
        watch.stop()
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

  /** The profile's listen secret for this environment, made and stored on first use (like `stripe listen`'s). */
  async #profileSecret(): Promise<string> {
    const {profile, env} = await this.context()
    const store = this.credentialStore()
    const saved = await store.get(profile, 'webhook_secret', env)
    if (saved) return saved
    const secret = `whsec_${randomBytes(24).toString('base64url').replace(/[-_]/g, '')}`
    await store.set(profile, 'webhook_secret', env, secret)
    return secret
  }
}
