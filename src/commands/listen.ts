import {randomBytes} from 'node:crypto'

import {Flags} from '@oclif/core'

import {AdminCommand} from '../cli/admin-command.js'
import {ENV_VARS} from '../cli/config.js'
import {mask} from '../cli/credentials.js'
import {CliError, ExitCode, usageError} from '../cli/exit-codes.js'
import {date} from '../cli/output.js'
import {adminFlags} from '../cli/services/gateway-admin.js'
import {
  catchUp,
  eventLine,
  Ledger,
  newestEvent,
  removeStaleEndpoints,
  runningEndpoints,
  settle,
  startRelay,
  watchGateway,
  type RelayedEvent,
  type WatchFailure,
} from '../cli/services/listen.js'

/** Health checks between two moves of the ledger's cursor (about 30 s). */
const SETTLE_EVERY = 15

export default class Listen extends AdminCommand<typeof Listen> {
  static override summary = "Forward the local gateway's webhook events to your app, signed as the platform signs them, losing none across restarts."
  static override description = `Registers a webhook endpoint on the gateway (--env, default test) that points at a relay on 127.0.0.1; each delivery is forwarded to --forward-to with the same raw body and Service-Signature header, and the gateway gets your app's status (so a failing app sees the platform's retries). Each line shows the event's time on the gateway clock.
The signing secret is the profile's own (made once and kept with its credentials), so your app's configured secret keeps working across runs; --print-secret prints it and exits. Prints it on stderr at start (export it for your app), then one line per event on stdout (--json: one JSON object per line).
Nothing is lost across gaps: events logged while listen was away (stopped, or its endpoint gone after a gateway restart) are forwarded when it is back, oldest first, each once, with a line saying how many; --since replays from an event id or a time, --no-catch-up skips. If the gateway goes away, says so and carries on when it is back; a gateway back with other credentials is reported at once. Endpoints left by earlier runs that were killed are removed at start. Ctrl-C deletes the endpoint.
--rotate-secret gives the profile a new signing secret, prints it (once) and exits: the endpoints of running listens of this profile sign with both secrets for --expire-previous-in seconds of gateway time (they say so), then with the new one only.`
  static override examples = [
    '<%= config.bin %> listen --forward-to http://localhost:3000/webhooks --profile local',
    'export PAYAPP_WEBHOOK_SECRET=$(<%= config.bin %> listen --print-secret --profile local)',
    '<%= config.bin %> listen --forward-to http://localhost:3000/webhooks --merchant mch_123 --admin-key adm_… --events checkout.session.completed --events charge.refunded',
    'PAYAPP_WEBHOOK_SECRET=whsec_… <%= config.bin %> listen --forward-to http://localhost:3000/webhooks --json',
    '<%= config.bin %> listen --forward-to http://localhost:3000/webhooks --since 2026-05-01T00:00:00Z',
    'export PAYAPP_WEBHOOK_SECRET=$(<%= config.bin %> listen --rotate-secret --expire-previous-in 3600)',
  ]

  static override flags = {
    ...adminFlags,
    'forward-to': Flags.string({description: "Your app's webhook URL, e.g. http://localhost:3000/webhooks."}),
    events: Flags.string({multiple: true, description: 'Event type to forward (repeatable); "prefix.*" patterns work. [default: every type]'}),
    secret: Flags.string({env: ENV_VARS.webhookSecret, description: "Signing secret to use (whsec_…). [default: the profile's, made once]"}),
    'print-secret': Flags.boolean({description: 'Print the signing secret listen signs with (for your app\'s environment) and exit; contacts no gateway.'}),
    since: Flags.string({description: 'Replay the events logged after this event id, or since this time (ISO 8601 or Unix seconds, gateway clock), before forwarding new ones.'}),
    'catch-up': Flags.boolean({default: true, allowNo: true, description: 'Forward the events logged while listen was away (--no-catch-up: only new ones).'}),
    'rotate-secret': Flags.boolean({description: "Give the profile a new signing secret, print it and exit; running listens' endpoints sign with both until the previous one expires."}),
    'expire-previous-in': Flags.integer({min: 0, max: 7 * 86_400, default: 86_400, description: 'With --rotate-secret: seconds of gateway time the previous secret keeps signing (0: none).'}),
  }

  async run(): Promise<void> {
    const {flags} = this
    const ctx = await this.context()
    if (flags['print-secret']) {
      const secret = flags.secret ?? (await this.#profileSecret())
      process.stdout.write((this.jsonEnabled() ? JSON.stringify({secret, profile: ctx.profile, env: ctx.env}) : secret) + '\n')
      return
    }
    if (flags['rotate-secret']) return this.#rotate()
    const forwardTo = await this.requireFlag('forward-to', flags['forward-to'])
    if (!/^https?:\/\/[^/]/.test(forwardTo) || !URL.canParse(forwardTo)) throw usageError(`--forward-to must be an http(s) URL, not "${forwardTo}"`, '--forward-to')
    if (flags.since !== undefined && !flags['catch-up']) throw usageError('--since replays events: it cannot go with --no-catch-up', '--since')
    const merchant = await this.merchant()
    const admin = await this.admin()
    let secret = flags.secret ?? (await this.#profileSecret())
    const err = (line: string) => process.stderr.write(line + '\n')
    const scope = {merchant, env: ctx.env}
    const patterns = flags.events ?? ['*']

    const stale = await removeStaleEndpoints(admin.webhookEndpoints, merchant)
    if (stale.length > 0) err(`Removed ${stale.length} webhook endpoint(s) left by earlier listen runs: ${stale.join(', ')}`)

    const json = this.jsonEnabled()
    const print = (e: RelayedEvent) => process.stdout.write((json ? JSON.stringify(e) : eventLine(e)) + '\n')
    const ledger = await Ledger.open(this.config.configDir, {profile: ctx.profile, env: ctx.env, merchant})
    const relay = await startRelay(forwardTo, ledger, print)
    // Deliveries wait while older events are caught up, so the app gets them oldest first.
    relay.hold()
    const register = () => admin.webhookEndpoints.create({merchant, env: ctx.env, url: relay.url, events: patterns, secret})
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

    const catchUpNow = async (why: string, since?: string) => {
      try {
        const n = await catchUp({log: admin.events, scope, ledger, patterns, forwardTo, secrets: () => [secret], onEvent: print, since})
        if (n > 0 || since !== undefined) err(`Caught up ${n} event${n === 1 ? '' : 's'} ${why}.`)
      } catch (error) {
        if ((error as {statusCode?: number}).statusCode !== 404 || since !== undefined) throw error
        // The log lacks the cursor's event: another gateway, or one restarted with a fresh database.
        ledger.reset(ctx.baseUrl, await newestEvent(admin.events, scope))
        err(`The gateway's event log does not have ${ledger.cursor ?? 'the last event'} listen forwarded (a fresh database?): nothing to catch up.`)
      }
    }
    try {
      if (flags.since !== undefined) await catchUpNow(`since ${flags.since}`, flags.since)
      else if (flags['catch-up'] && ledger.started) await catchUpNow(`emitted while listen was away (after ${ledger.cursor ?? 'the log\'s start'})`)
      if (!ledger.started || !flags['catch-up'] || flags.since !== undefined) ledger.reset(ctx.baseUrl, await newestEvent(admin.events, scope))
    } catch (error) {
      await admin.webhookEndpoints.delete(endpoint.id).catch(() => {})
      await relay.close()
      throw error
    } finally {
      relay.release()
    }
    // Handlers before the prompt: a signal sent as soon as the prompt is read must stop listen cleanly, not kill it.
    const stopped = new Promise<undefined>((resolve) => {
      process.once('SIGINT', () => resolve(undefined))
      process.once('SIGTERM', () => resolve(undefined))
    })
    err('Press Ctrl-C to stop.')

    let ticks = 0
    // The endpoint's secret as the gateway lists it (masked): a change means a rotation.
    let listedSecret = mask(secret)
    const failed = new Promise<WatchFailure>((resolve) => {
      const watch = watchGateway({
        endpoints: admin.webhookEndpoints,
        merchant,
        baseUrl: ctx.baseUrl,
        endpointId: () => endpoint.id,
        reRegister: async () => {
          relay.hold()
          try {
            endpoint = await register()
            listedSecret = mask(secret)
            await catchUpNow('logged while the endpoint was gone')
          } finally {
            relay.release()
          }
          return endpoint.id
        },
        onTick: async (mine) => {
          if (mine.secret !== listedSecret) {
            listedSecret = mine.secret
            // `listen --rotate-secret` stored the new secret in the profile: sign catch-ups and re-registrations with it.
            if (!flags.secret) secret = await this.#profileSecret()
            const until = mine.previous_secrets_expire?.[0]
            err(`The signing secret was rotated (now ${mine.secret})${until ? `; the previous one keeps signing until ${date(until)} (gateway clock)` : ''}.`)
          }
          if (++ticks % SETTLE_EVERY === 0) await settle(admin.events, scope, ledger, patterns)
        },
        say: err,
        fail: resolve,
      })
      this.#stopWatch = () => watch.stop()
    })

    const outcome = await Promise.race([failed, stopped])
    this.#stopWatch()
    if (outcome) {
      await relay.close()
      await ledger.flush()
      throw new CliError(outcome.message, {
        exitCode: outcome.kind === 'credentials' ? ExitCode.AUTHENTICATION : ExitCode.NOT_FOUND,
        type: outcome.kind === 'credentials' ? 'authentication_error' : 'not_found',
        code: outcome.kind === 'credentials' ? 'admin_key_refused' : 'merchant_missing',
      })
    }
    await admin.webhookEndpoints.delete(endpoint.id).catch((error: Error) => err(`Could not delete webhook endpoint ${endpoint.id}: ${error.message}`))
    await settle(admin.events, scope, ledger, patterns).catch(() => {})
    await relay.close()
    await ledger.flush()
  }

  #stopWatch = () => {}

  /** A new profile secret for every running listen of this profile; printed once, here. */
  async #rotate(): Promise<void> {
    const {profile, env} = await this.context()
    const merchant = await this.merchant()
    const admin = await this.admin()
    const secret = newSecret()
    const expire = this.flags['expire-previous-in']
    const rotated: string[] = []
    for (const id of await runningEndpoints(admin.webhookEndpoints, merchant)) {
      await admin.webhookEndpoints.rotateSecret(id, {secret, expire_previous_in_seconds: expire})
      rotated.push(id)
    }
    await this.credentialStore().set(profile, 'webhook_secret', env, secret)
    if (this.jsonEnabled()) {
      process.stdout.write(JSON.stringify({secret, profile, env, rotated_endpoints: rotated, expire_previous_in_seconds: expire}) + '\n')
      return
    }
    process.stdout.write(secret + '\n')
    process.stderr.write(
      `New signing secret for profile ${profile} (${env}); ${rotated.length} running listen endpoint${rotated.length === 1 ? '' : 's'} (${rotated.join(', ') || 'none'}) ` +
        `sign with both secrets for ${expire} s of gateway time. Give it to your app: export ${ENV_VARS.webhookSecret}=<the line above>\n`,
    )
  }

  /** The profile's listen secret for this environment, made and stored on first use (like `stripe listen`'s). */
  async #profileSecret(): Promise<string> {
    const {profile, env} = await this.context()
    const store = this.credentialStore()
    const saved = await store.get(profile, 'webhook_secret', env)
    if (saved) return saved
    const secret = newSecret()
    await store.set(profile, 'webhook_secret', env, secret)
    return secret
  }
}

const newSecret = () => `whsec_${randomBytes(24).toString('base64url').replace(/[-_]/g, '')}`
