import {Flags} from '@oclif/core'

import {BaseCommand, globalFlags} from '../../cli/base-command.js'
import {ENV_VARS, saveProfile} from '../../cli/config.js'
import {mask} from '../../cli/credentials.js'
import {CliError, ExitCode, usageError} from '../../cli/exit-codes.js'
import {canPrompt, confirm} from '../../cli/prompt.js'
import {parseRateLimit, readFaultFile, saveSeedProfile} from '../../cli/services/gateway-start.js'

export default class GatewayStart extends BaseCommand<typeof GatewayStart> {
  static override summary = 'Run the reference gateway (the platform on localhost) until interrupted.'
  static override description = `Serves the App API (/v1/app), the store API (/v1/store), the merchant API (/v1) and the admin API (/_admin) with SQLite storage, or PostgreSQL when --db is a postgres:// URL.
With --json, the first line on stdout, printed once connections are accepted, is one JSON object with url, admin_key and, with --seed, the seeded credentials.
With --seed, a demo merchant with a sample catalogue in both environments is created (once per database), and the profile named by --profile (default "local") gets what every command needs for it: the base URL, the test and live tokens and secret keys, the admin key (stored like the tokens) and the merchant, so "products list", "listen", "trigger" and "gateway tokens create" work with --profile local alone.
The profile is written when it is new or already points at this gateway's URL; a profile that points elsewhere is changed only with consent (a prompt on a terminal, or --save-profile); --no-save-profile never writes it.`

  static override examples = [
    '<%= config.bin %> gateway start --seed',
    '<%= config.bin %> gateway start --seed --db :memory: --port 0 --no-save-profile --json',
    '<%= config.bin %> gateway start --port 0 --db :memory: --json',
    '<%= config.bin %> gateway start --rate-limit off --db ./ci-gateway.sqlite',
    '<%= config.bin %> gateway start --db postgres://payapp:secret@127.0.0.1:5432/payapp --admin-key adm_shared --json',
    '<%= config.bin %> gateway start --rate-limit writes=600,reads=1000',
    '<%= config.bin %> gateway start --faults ci/faults.yaml --json',
  ]

  // Only --profile applies (where --seed saves); the platform's --env and --base-url do not.
  static override baseFlags = globalFlags('profile', 'verbose')

  static override flags = {
    port: Flags.integer({description: 'Port to listen on; 0 picks a free one.', default: 4242, min: 0, max: 65535, env: 'PAYAPP_GATEWAY_PORT'}),
    host: Flags.string({description: 'Interface to listen on.', default: '127.0.0.1', env: 'PAYAPP_GATEWAY_HOST'}),
    db: Flags.string({
      description: 'SQLite file, :memory: to keep nothing, or a PostgreSQL URL (postgres://user:pass@host:port/db) that several gateway processes may share. [default: <data dir>/gateway.sqlite]',
      env: 'PAYAPP_GATEWAY_DB',
    }),
    'admin-key': Flags.string({description: 'Admin API key. [default: generated once and kept in the database]', env: ENV_VARS.adminKey}),
    seed: Flags.boolean({description: 'Create a demo merchant, catalogue and all-scope credentials for both environments.'}),
    'rate-limit': Flags.string({
      default: 'on',
      description:
        'on (the spec\'s limits), off (bulk local work), or per-minute limits such as writes=600,reads=300,checkout=120 (unnamed buckets keep the spec\'s; window=SECONDS shortens the window for tests).',
    }),
    'save-profile': Flags.boolean({
      allowNo: true,
      description: 'With --seed: --save-profile writes the profile even if it points at another gateway; --no-save-profile never writes it. [default: write it if it is new or already points here; otherwise ask on a terminal]',
    }),
    faults: Flags.string({
      description: 'JSON or YAML file of fault-injection rules to start with (a list, or {faults: [...]}; fields as "gateway faults add").',
    }),
  }

  public async run(): Promise<void> {
    const {flags} = this
    const [{startGateway}, {join}] = await Promise.all([import('../../gateway/load.js').then(({loadGateway}) => loadGateway()), import('node:path')])
    const db = flags.db ?? join(this.config.dataDir, 'gateway.sqlite')
    const rate = parseRateLimit(flags['rate-limit'])
    const faults = flags.faults ? await readFaultFile(flags.faults) : undefined
    let gateway
    try {
      gateway = await startGateway({port: flags.port, host: flags.host, db, adminKey: flags['admin-key'], seed: flags.seed, rateLimit: rate.enabled, rateLimits: rate.config, faults, notice: (line) => process.stderr.write(line + '\n')})
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      // A rule the schema accepts but the gateway cannot place (an unknown route) fails as the admin API would.
      if (error instanceof Error && 'envelope' in error) throw usageError(`--faults ${flags.faults}: ${error.message}`, '--faults')
      if (code === 'EADDRINUSE') throw usageError(`Port ${flags.port} is in use: pass --port 0 for a free one, or another --port`, '--port')
      // The database named by --db (a PostgreSQL URL; the message has its password redacted): unreachable, or it refused us.
      if (code === 'db_unreachable') throw new CliError((error as Error).message, {exitCode: ExitCode.UNAVAILABLE, type: 'api_connection_error', code, param: '--db'})
      if (code === 'db_refused') throw usageError((error as Error).message, '--db')
      throw error
    }

    const profile = flags.profile ?? 'local'
    const ask = canPrompt() && !this.jsonEnabled()
    const saved = gateway.seed
      ? await saveSeedProfile(
          {
            loadConfig: () => this.loadConfig(),
            saveCredential: (kind, secret, ctx) => this.saveCredential(kind, secret, ctx),
            saveProfile: (name, values) => saveProfile(this.config.configDir, name, values),
            confirm: ask ? (question) => confirm(question, false) : undefined,
            warn: (note) => process.stderr.write(note + '\n'),
          },
          {profile, url: gateway.url, adminKey: gateway.adminKey, seed: gateway.seed, choice: this.flags['save-profile']},
        )
      : undefined

    // Listening for the stop signal before the ready line: a script may send it the moment it reads that line.
    const stopped = new Promise<void>((resolve) => {
      const stop = (signal: NodeJS.Signals) => {
        process.stderr.write(`\n${signal}: finishing requests in flight and closing the database…\n`)
        gateway.close().then(resolve, resolve)
      }
      process.once('SIGINT', stop)
      process.once('SIGTERM', stop)
    })

    if (this.jsonEnabled()) {
      // One line, written once the server accepts connections: scripts read it and go.
      const profileJson = saved ? {name: profile, saved: saved.saved, note: saved.note} : null
      process.stdout.write(JSON.stringify({url: gateway.url, admin_key: gateway.adminKey, db: gateway.db, seed: gateway.seed ?? null, profile: profileJson}) + '\n')
    } else {
      this.log(`payapp gateway listening on ${gateway.url}`)
      this.log(`  database   ${gateway.db}`)
      this.log(`  admin key  ${mask(gateway.adminKey)}`)
      this.log(`  rate limit ${flags['rate-limit']}`)
      if (faults?.length) this.log(`  faults     ${faults.length} rule${faults.length === 1 ? '' : 's'} from ${flags.faults}`)
      if (gateway.seed) {
        this.log(`  merchant   ${gateway.seed.merchant}`)
        for (const env of ['test', 'live'] as const) {
          this.log(`  ${env} token ${mask(gateway.seed.installations[env].token)}   ${env} secret key ${mask(gateway.seed.secret_keys[env].secret_key)}`)
        }
        if (saved?.saved) {
          this.log(`\n${saved.note}. Next, in another terminal:\n  payapp products list --profile ${profile}\n  payapp listen --forward-to http://localhost:3000/webhooks --profile ${profile}`)
        } else if (saved) {
          this.log(`\n${saved.note}`)
        }
      }
      // The one way to the full values, on purpose: the --json line (a restart on the same database prints the same ones).
      this.log(`Credentials are masked here; "payapp gateway start${gateway.seed ? ' --seed' : ''} --json" prints them in full on its first line.`)
      this.log('Press Ctrl-C to stop.')
    }

    await stopped
  }
}
