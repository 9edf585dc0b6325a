import {expect} from 'chai'
import {spawn} from 'node:child_process'
import {readFile} from 'node:fs/promises'
import {join} from 'node:path'
import {createInterface} from 'node:readline'

import {mask} from '../../src/cli/credentials.js'
import {BIN, ROOT, runCli, startCli, tempHome, type CliResult} from '../helpers/cli.js'
import {TestGateway} from '../helpers/gateway.js'
import {block} from '../helpers/human.js'
import {onPostgres, prepareDatabase} from '../helpers/test-db.js'

describe('payapp gateway tokens create, gateway reset, and the seeded local profile', function () {
  this.timeout(60_000)
  let gw: TestGateway
  let merchant: string
  const outputs: CliResult[] = []
  const admin = () => ({PAYAPP_BASE_URL: gw.url, PAYAPP_ADMIN_KEY: gw.gw.adminKey})

  async function cli(args: string[], env: Record<string, string> = {}, home?: string): Promise<CliResult> {
    const res = await runCli(args, {env, home})
    outputs.push(res)
    return res
  }

  before(async function () {
    gw = await TestGateway.start()
    merchant = (await gw.merchant()).id
  })
  after(async function () {
    // The admin key is only ever given to the CLI, never printed by these commands.
    for (const res of outputs) expect(res.stdout + res.stderr).not.to.include(gw.gw.adminKey)
    await gw.close()
  })

  describe('gateway tokens create', function () {
    it('issues an installation token with the given scopes, printed in full for the caller to use', async function () {
      const res = await cli(['gateway', 'tokens', 'create', '--merchant', merchant, '--scope', 'products:read', '--scope', 'orders:read'], admin())
      expect(res.code, res.stderr).to.equal(0)
      const [summary, token, end] = res.stdout.split('\n')
      expect(summary).to.match(new RegExp(`^Created test installation inst_\\w+ for ${merchant} with products:read, orders:read$`))
      expect(token).to.match(/^app_test_\w+$/)
      expect(end).to.equal('')

      // The token works, for exactly its scopes.
      expect((await gw.request('GET', '/v1/app/products', {token})).status).to.equal(200)
      const denied = await cli(['merchant'], {PAYAPP_BASE_URL: gw.url, PAYAPP_TOKEN: token})
      expect(denied.code).to.equal(4)
      expect(denied.stderr).to.match(/^insufficient_scope: .+ \(req_\w+\)\n$/)
    })

    it('--json answers the admin API object; --env live and --secret-key choose the credential', async function () {
      const inst = await cli(['gateway', 'tokens', 'create', '--merchant', merchant, '--env', 'live', '--json'], admin())
      expect(inst.code, inst.stderr).to.equal(0)
      const body = inst.json()
      expect(body).to.include({object: 'installation', merchant, env: 'live'})
      expect(body.token).to.match(/^app_live_/)
      expect(body.scopes).to.have.length.above(10)
      expect((await gw.request('GET', '/v1/app/merchant', {token: body.token})).body).to.include({id: merchant, livemode: true})

      const key = await cli(['gateway', 'tokens', 'create', '--secret-key', '--scope', 'store:read', '--json'], {...admin(), PAYAPP_MERCHANT: merchant})
      expect(key.code, key.stderr).to.equal(0)
      expect(key.json()).to.include({object: 'secret_key', merchant, mode: 'test'})
      expect(key.json().scopes).to.deep.equal(['store:read'])
      expect((await gw.request('GET', '/v1/store/store', {token: key.json().secret_key})).status).to.equal(200)
    })

    it('--save stores the credential in the profile (masked in the output) so later commands just work', async function () {
      const home = tempHome()
      const res = await cli(['gateway', 'tokens', 'create', '--merchant', merchant, '--scope', 'merchant:read', '--save', '--profile', 'readonly'], admin(), home)
      expect(res.code, res.stderr).to.equal(0)
      const credentials = JSON.parse(await readFile(join(home, 'config', 'payapp', 'credentials.json'), 'utf8')).credentials
      const token = credentials['readonly:test:token']
      expect(token).to.match(/^app_test_/)
      expect(res.stdout.split('\n')[1]).to.equal(`${mask(token)} saved to profile "readonly" (${join(home, 'config', 'payapp', 'credentials.json')})`)
      expect(res.stdout).not.to.include(token)

      const who = await cli(['whoami', '--profile', 'readonly'], {}, home)
      expect(who.code, who.stderr).to.equal(0)
      expect(block(who.stdout)).to.include({'Base URL': gw.url, Merchant: `Demo Merchant (${merchant})`})
    })

    it('without --merchant, a profile merchant or a token, says how to get one (exit 2)', async function () {
      const res = await cli(['gateway', 'tokens', 'create'], admin())
      expect(res.code).to.equal(2)
      expect(res.stderr).to.equal(
        'Error: Missing --merchant (or PAYAPP_MERCHANT): profile "default" has no merchant and no test token that can read one. "payapp gateway start --seed" saves one to the profile "local" (--profile local); on an unseeded gateway, "payapp gateway merchants create --save" makes one\n',
      )
    })

    it('requires the admin key without prompting (exit 2); a wrong one is a 401 (exit 3); an unknown merchant a 404 (exit 5)', async function () {
      const none = await cli(['gateway', 'tokens', 'create', '--merchant', merchant, '--json'], {PAYAPP_BASE_URL: gw.url})
      expect(none.code).to.equal(2)
      expect(none.json().error).to.include({param: '--admin-key', message: 'Missing --admin-key or set PAYAPP_ADMIN_KEY (not prompting: stdin is not a terminal or --json is set)'})

      const wrong = await cli(['gateway', 'tokens', 'create', '--merchant', merchant, '--admin-key', 'adm_wrong'], {PAYAPP_BASE_URL: gw.url})
      expect(wrong.code).to.equal(3)
      expect(wrong.stderr).to.match(/^invalid_admin_key: .+ \(req_\w+\)\n$/)

      const unknown = await cli(['gateway', 'tokens', 'create', '--merchant', 'mch_missing', '--json'], admin())
      expect(unknown.code).to.equal(5)
      expect(unknown.json().error).to.include({status: 404})
    })
  })

  describe('gateway reset', function () {
    it("wipes the merchant's sandbox and keeps live data", async function () {
      const acct = await gw.account('test')
      const id = acct.merchant.id
      await gw.admin('POST', '/payouts', {merchant: id, env: 'test', amount: 1000, currency: 'eur'})
      await gw.admin('POST', '/payouts', {merchant: id, env: 'live', amount: 2000, currency: 'eur'})

      const res = await cli(['gateway', 'reset', '--merchant', id], admin())
      expect(res.code, res.stderr).to.equal(0)
      expect(res.stdout).to.match(new RegExp(`^Wiped the sandbox of ${id}: [1-9]\\d* objects deleted\\n$`))
      expect((await acct.app('GET', '/payouts')).body.data).to.deep.equal([])
      const liveInst = await gw.installation(id, 'live')
      expect((await gw.request('GET', '/v1/app/payouts', {token: liveInst.token})).body.data).to.have.length(1)

      const again = await cli(['gateway', 'reset', '--json'], {...admin(), PAYAPP_MERCHANT: id})
      expect(again.code, again.stderr).to.equal(0)
      expect(again.json()).to.deep.equal({object: 'sandbox_reset', merchant: id, deleted_objects: 0})
    })
  })

  it("gateway clock moves and shows the profile's merchant's clock; --all and no configured merchant: every clock", async function () {
    const home = tempHome()
    const made = await cli(['gateway', 'merchants', 'create', '--company', 'Clocked GmbH', '--profile', 'clocked', '--save', '--json'], admin(), home)
    expect(made.code, made.stderr).to.equal(0)
    const mine = made.json().id as string
    const clockOf = async (m?: string) => (await gw.admin('GET', m ? `/clock?merchant=${m}` : '/clock')).body.offset_seconds as number
    const [mineBefore, otherBefore, sharedBefore] = [await clockOf(mine), await clockOf(merchant), await clockOf()]

    const moved = await cli(['gateway', 'clock', 'advance', '2d', '--profile', 'clocked', '--json'], admin(), home)
    expect(moved.code, moved.stderr).to.equal(0)
    expect(moved.json()).to.include({object: 'clock', merchant: mine})
    expect((await clockOf(mine)) - mineBefore).to.be.within(2 * 86_400 - 1, 2 * 86_400 + 1)
    expect((await clockOf(merchant)) - otherBefore).to.be.within(-1, 1)
    expect((await clockOf()) - sharedBefore).to.be.within(-1, 1)
    const shown = await cli(['gateway', 'clock', '--profile', 'clocked'], admin(), home)
    expect(shown.stdout).to.match(new RegExp(`^Clock of ${mine} at \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC \\(offset \\d+ s\\)\n$`))

    // --all, and a profile without a merchant: every clock moves together.
    const all = await cli(['gateway', 'clock', 'advance', '1h', '--profile', 'clocked', '--all', '--json'], admin(), home)
    expect(all.code, all.stderr).to.equal(0)
    expect(all.json()).to.include({object: 'clock', merchant: null})
    const none = await cli(['gateway', 'clock', 'advance', '1h', '--json'], admin(), tempHome())
    expect(none.json()).to.include({object: 'clock', merchant: null})
    expect((await clockOf(mine)) - mineBefore).to.be.within(2 * 86_400 + 7200 - 1, 2 * 86_400 + 7200 + 1)
    expect((await clockOf(merchant)) - otherBefore).to.be.within(7200 - 1, 7200 + 1)
    const both = await cli(['gateway', 'clock', '--all', '--merchant', mine], admin(), home)
    expect(both.code).to.equal(2)
  })

  it('gateway start --help names the four APIs it serves, the merchant API among them', async function () {
    const res = await cli(['gateway', 'start', '--help'])
    expect(res.code, res.stderr).to.equal(0)
    // Help wraps to the terminal's width: compare the words.
    expect(res.stdout.replace(/\s+/g, ' ')).to.include('Serves the App API (/v1/app), the store API (/v1/store), the merchant API (/v1) and the admin API (/_admin)')
  })

  it('gateway start --db postgres://… that it cannot reach or that refuses it exits 7 or 2, naming the database without its password', async function () {
    const unreachable = await cli(['gateway', 'start', '--port', '0', '--db', 'postgres://payapp:s3cret-pw@127.0.0.1:1/payapp', '--json'])
    expect(unreachable.code, unreachable.stderr).to.equal(7)
    expect(JSON.parse(unreachable.stdout).error).to.include({
      code: 'db_unreachable',
      param: '--db',
      message: 'Cannot reach PostgreSQL at postgres://payapp:***@127.0.0.1:1/payapp: connect ECONNREFUSED 127.0.0.1:1',
    })
    const human = await cli(['gateway', 'start', '--port', '0'], {PAYAPP_GATEWAY_DB: 'postgresql://payapp:s3cret-pw@127.0.0.1:1/payapp'})
    expect(human.code).to.equal(7)
    expect(human.stderr).to.equal('Error: Cannot reach PostgreSQL at postgresql://payapp:***@127.0.0.1:1/payapp: connect ECONNREFUSED 127.0.0.1:1\n')
    if (!onPostgres) return
    // A server that is there but has no such database refuses: the --db value is wrong (usage).
    const missing = new URL(TestGateway.tempDbFile())
    missing.pathname = '/no_such_db'
    missing.password = 's3cret-pw'
    const refused = await cli(['gateway', 'start', '--port', '0', '--db', missing.toString()])
    expect(refused.code).to.equal(2)
    expect(refused.stderr).to.match(/^Error: PostgreSQL at postgres:\/\/\w+:\*\*\*@[\d.:]+\/no_such_db\?options=.* refused the gateway: database "no_such_db" does not exist \(3D000\)\n$/)
  })

  it('gateway start --seed shows every credential masked and names --json as the way to the full values', async function () {
    const home = tempHome()
    // On PostgreSQL (PAYAPP_TEST_DB) the restart below is on the same schema.
    const db = onPostgres ? TestGateway.tempDbFile() : join(home, 'gateway.sqlite')
    await prepareDatabase(db)
    const human = startCli(['gateway', 'start', '--seed', '--port', '0', '--db', db, '--no-save-profile'], home)
    let shown = ''
    try {
      shown = await new Promise<string>((resolve, reject) => {
        let out = ''
        human.child.stdout!.on('data', (d) => {
          out += d
          if (out.includes('Press Ctrl-C')) resolve(out)
        })
        human.child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}${human.stderr()}`)))
      })
    } finally {
      expect(await human.stop()).to.equal(0)
    }
    // The same database: a restart with --seed --json prints the same credentials in full.
    const json = startCli(['gateway', 'start', '--seed', '--port', '0', '--db', db, '--no-save-profile', '--json'], home)
    let started
    try {
      started = JSON.parse(await json.firstLine)
    } finally {
      await json.stop()
    }
    const secrets = [started.admin_key, ...(['test', 'live'] as const).flatMap((env) => [started.seed.installations[env].token, started.seed.secret_keys[env].secret_key])]
    for (const secret of secrets) {
      expect(secret).to.match(/^(adm|app_test|app_live|sk_test|sk_live)_\w{20,}$/)
      expect(shown).to.include(mask(secret)).and.not.include(secret)
    }
    expect(shown).to.include('Credentials are masked here; "payapp gateway start --seed --json" prints them in full on its first line.')
  })

  describe('gateway start --seed, then the printed next step', function () {
    it('"payapp products list --profile local" lists the seeded products with no other set-up; SIGTERM exits 0', async function () {
      const home = tempHome()
      // The same environment runCli gives, so both processes share the config dir.
      const env = {
        PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, 'config'), XDG_DATA_HOME: join(home, 'data'), XDG_CACHE_HOME: join(home, 'cache'),
        PAYAPP_KEYCHAIN: 'off', NO_COLOR: '1',
      }
      const child = spawn(process.execPath, [BIN, 'gateway', 'start', '--seed', '--port', '0', '--json'], {cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe']})
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
      let stderr = ''
      child.stderr.on('data', (d) => (stderr += d))
      try {
        const first = await new Promise<string>((resolve, reject) => {
          createInterface({input: child.stdout}).once('line', resolve)
          child.once('exit', (code) => reject(new Error(`gateway exited ${code} before its first line: ${stderr}`)))
        })
        const started = JSON.parse(first)
        expect(started).to.have.keys('url', 'admin_key', 'db', 'seed', 'profile')
        expect(started.profile).to.deep.include({name: 'local', saved: true})
        expect(started.seed.merchant).to.match(/^mch_/)

        const res = await runCli(['products', 'list', '--profile', 'local', '--json'], {home})
        expect(res.code, res.stderr).to.equal(0)
        const products = res.json()
        expect(products.data.length).to.be.above(0)
        const direct = await fetch(`${started.url}/v1/app/products`, {headers: {authorization: `Bearer ${started.seed.installations.test.token}`}})
        expect(products).to.deep.equal(await direct.json())
        expect(res.stdout + res.stderr).not.to.include(started.seed.installations.test.token)
      } finally {
        child.kill('SIGTERM')
      }
      expect(await exited, stderr).to.equal(0)
    })
  })
})
