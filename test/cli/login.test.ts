import {expect} from 'chai'
import {readFile, stat} from 'node:fs/promises'
import {join} from 'node:path'

import {mask} from '../../src/cli/credentials.js'
import {type CliOptions, type CliResult, runCli, tempHome} from '../helpers/cli.js'
import {TestGateway} from '../helpers/gateway.js'
import {block} from '../helpers/human.js'

const exists = (path: string) => stat(path).then(() => true, () => false)
const configDir = (home: string) => join(home, 'config', 'payapp')
const credentialsFile = (home: string) => join(configDir(home), 'credentials.json')
const readJson = async (path: string) => JSON.parse(await readFile(path, 'utf8'))

describe('payapp login and whoami', function () {
  this.timeout(60_000)
  let gw: TestGateway
  let acct: Awaited<ReturnType<TestGateway['account']>>
  let live: {id: string; token: string}
  const secrets: string[] = []
  const outputs: CliResult[] = []

  /** Runs the CLI and keeps its output, to check afterwards that no secret ever appeared in it. */
  async function cli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
    const res = await runCli(args, opts)
    outputs.push(res)
    return res
  }

  before(async function () {
    gw = await TestGateway.start()
    acct = await gw.account('test')
    live = await gw.installation(acct.merchant.id, 'live')
    secrets.push(acct.token, acct.secretKey, live.token)
  })
  after(async function () {
    await gw.close()
  })

  it('checks the token, stores it in the 0600 file, records the profile and warns about the keychain once', async function () {
    const home = tempHome()
    const res = await cli(['login', '--token', acct.token, '--base-url', gw.url], {home})
    expect(res.code, res.stderr).to.equal(0)
    expect(res.stdout).to.equal(`Logged in to Demo Merchant (${acct.merchant.id}) as test installation ${mask(acct.token)}, stored in ${credentialsFile(home)}\n`)
    expect(res.stderr).to.equal(`Warning: no usable OS keychain (disabled by PAYAPP_KEYCHAIN=off); storing credentials in ${credentialsFile(home)} (mode 0600)\n`)

    expect((await stat(credentialsFile(home))).mode & 0o777).to.equal(0o600)
    expect(await readJson(credentialsFile(home))).to.deep.equal({credentials: {'default:test:token': acct.token}})
    const config = await readJson(join(configDir(home), 'config.json'))
    expect(config.profiles.default).to.deep.equal({env: 'test', base_url: gw.url})
    expect(config.current_profile).to.equal('default')

    // The warning is shown once, ever; the credential is replaced in place.
    const again = await cli(['login', '--token', acct.token, '--base-url', gw.url], {home})
    expect(again.code, again.stderr).to.equal(0)
    expect(again.stderr).to.equal('')
  })

  it('takes the environment from the token, stores a secret key beside it, and answers --json', async function () {
    const home = tempHome()
    const key = await gw.secretKey(acct.merchant.id, 'live')
    secrets.push(key.secret_key)
    const res = await cli(['login', '--token', live.token, '--secret-key', key.secret_key, '--base-url', gw.url, '--profile', 'shop', '--json'], {home})
    expect(res.code, res.stderr).to.equal(0)
    expect(res.json()).to.deep.equal({
      profile: 'shop',
      env: 'live',
      base_url: gw.url,
      merchant: {id: acct.merchant.id, company: 'Demo Merchant'},
      token: {value: mask(live.token), backend: 'file', location: credentialsFile(home)},
      secret_key: {value: mask(key.secret_key), store: acct.merchant.store.id, backend: 'file', location: credentialsFile(home)},
    })
    expect(await readJson(credentialsFile(home))).to.deep.equal({credentials: {'shop:live:token': live.token, 'shop:live:secret_key': key.secret_key}})
  })

  it('accepts a token that may not read the merchant (403 insufficient_scope proves it valid)', async function () {
    const home = tempHome()
    const narrow = await gw.installation(acct.merchant.id, 'test', ['products:read'])
    secrets.push(narrow.token)
    const res = await cli(['login', '--token', narrow.token, '--base-url', gw.url], {home})
    expect(res.code, res.stderr).to.equal(0)
    expect(res.stdout).to.equal(`Logged in to ${gw.url} (the token has no merchant:read scope) as test installation ${mask(narrow.token)}, stored in ${credentialsFile(home)}\n`)
    expect(await readJson(credentialsFile(home))).to.deep.equal({credentials: {'default:test:token': narrow.token}})
  })

  it('refuses a token whose prefix names another environment than --env (exit 2), storing nothing', async function () {
    const home = tempHome()
    const res = await cli(['login', '--env', 'live', '--token', acct.token, '--base-url', gw.url], {home})
    expect(res.code).to.equal(2)
    expect(res.stdout).to.equal('')
    expect(res.stderr).to.equal(
      `Error: --token ${mask(acct.token)} is a test installation token, but the environment is live: pass --env test, or a live installation token (app_live_…)\n`,
    )
    expect(await exists(configDir(home))).to.equal(false)

    const key = await cli(['login', '--token', acct.token, '--secret-key', 'sk_live_0123456789abcdefghij', '--base-url', gw.url, '--json'], {home})
    expect(key.code).to.equal(2)
    expect(key.json().error).to.include({type: 'usage_error', param: '--secret-key'})
    expect(await exists(configDir(home))).to.equal(false)
  })

  it('refuses a token the platform rejects (exit 3), storing nothing, and a rejected secret key keeps the token out too', async function () {
    const home = tempHome()
    const bad = 'app_test_' + 'x'.repeat(32)
    const res = await cli(['login', '--token', bad, '--base-url', gw.url], {home})
    expect(res.code).to.equal(3)
    expect(res.stdout).to.equal('')
    expect(res.stderr).to.match(/^invalid_api_key: .+ \(req_\w+\)\n$/)
    expect(await exists(configDir(home))).to.equal(false)

    const badKey = await cli(['login', '--token', acct.token, '--secret-key', 'sk_test_' + 'y'.repeat(32), '--base-url', gw.url, '--json'], {home})
    expect(badKey.code).to.equal(3)
    expect(badKey.json().error).to.include({code: 'invalid_api_key', status: 401})
    expect(await exists(configDir(home))).to.equal(false)
  })

  it('fails at once naming --token when there is no --token and no terminal (exit 2), without calling the platform', async function () {
    const home = tempHome()
    // A base URL nothing listens on: any request would end in exit 7 after retries, not 2.
    const started = Date.now()
    const res = await cli(['login', '--base-url', 'http://127.0.0.1:9'], {home})
    expect(res.code).to.equal(2)
    expect(res.stderr).to.equal('Error: Missing --token (not prompting: stdin is not a terminal)\n')
    expect(Date.now() - started).to.be.below(10_000)

    const json = await cli(['login', '--base-url', 'http://127.0.0.1:9', '--json'], {home})
    expect(json.code).to.equal(2)
    expect(json.json()).to.deep.equal({
      error: {type: 'usage_error', code: 'invalid_usage', param: '--token', message: 'Missing --token (not prompting: stdin is not a terminal or --json is set)', request_id: null, status: null},
    })
    expect(await exists(configDir(home))).to.equal(false)
  })

  it('never prints a token or secret key with DEBUG=* (oclif logs argv), and --token - reads the token from stdin', async function () {
    const home = tempHome()
    const env = {DEBUG: '*'}
    const flagged = await cli(['login', '--token', acct.token, `--secret-key=${acct.secretKey}`, '--base-url', gw.url], {home, env})
    expect(flagged.code, flagged.stderr.slice(-500)).to.equal(0)
    // The debug output ran (the argv line is there), masked.
    expect(flagged.stderr).to.include('argv').and.include(mask(acct.token).slice(-4))

    const piped = await cli(['login', '--token', '-', '--base-url', gw.url, '--json'], {home: tempHome(), env, input: `${live.token}\n`})
    expect(piped.code, piped.stderr.slice(-500)).to.equal(0)
    expect(piped.json().env).to.equal('live')
    // The secrets-never-printed check in after() covers both runs.
  })

  describe('whoami', function () {
    let home: string
    before(async function () {
      home = tempHome()
      const res = await cli(['login', '--token', acct.token, '--secret-key', acct.secretKey, '--base-url', gw.url], {home})
      expect(res.code, res.stderr).to.equal(0)
    })

    it('shows the profile, environment, base URL, masked credentials with their source, and the merchant', async function () {
      const res = await cli(['whoami'], {home})
      expect(res.code, res.stderr).to.equal(0)
      expect(block(res.stdout)).to.deep.equal({
        Profile: 'default',
        Environment: 'test',
        'Base URL': gw.url,
        Token: `${mask(acct.token)} (from ${credentialsFile(home)})`,
        Merchant: `Demo Merchant (${acct.merchant.id})`,
        'Secret key': `${mask(acct.secretKey)} (from ${credentialsFile(home)})`,
      })

      const json = await cli(['whoami', '--json'], {home})
      expect(json.code, json.stderr).to.equal(0)
      expect(json.json()).to.deep.equal({
        profile: 'default',
        env: 'test',
        base_url: gw.url,
        token: mask(acct.token),
        token_source: 'file',
        merchant: {id: acct.merchant.id, company: 'Demo Merchant'},
        secret_key: mask(acct.secretKey),
        secret_key_source: 'file',
      })
    })

    it('says how to log in when the profile has no credential (exit 3)', async function () {
      const res = await cli(['whoami', '--env', 'live'], {home})
      expect(res.code).to.equal(3)
      expect(res.stderr).to.equal('Error: No live installation token for profile "default": run "payapp login --env live --token …" or set PAYAPP_TOKEN\n')
    })

    it('names where a rejected token came from (exit 3)', async function () {
      const res = await cli(['whoami'], {home, env: {PAYAPP_TOKEN: 'app_test_' + 'z'.repeat(32)}})
      expect(res.code).to.equal(3)
      expect(res.stderr).to.match(/^Error: The test token from PAYAPP_TOKEN was rejected by http:\/\/127\.0\.0\.1:\d+ \(invalid_api_key: .+\): run "payapp login" again\n$/)
    })
  })

  it('PAYAPP_TOKEN overrides the store and writes nothing', async function () {
    const home = tempHome()
    const res = await cli(['whoami', '--json'], {home, env: {PAYAPP_TOKEN: live.token, PAYAPP_BASE_URL: gw.url, PAYAPP_ENV: 'live'}})
    expect(res.code, res.stderr).to.equal(0)
    expect(res.json()).to.include({env: 'live', token: mask(live.token), token_source: 'env', secret_key: null, secret_key_source: null})
    expect(res.json().merchant).to.deep.equal({id: acct.merchant.id, company: 'Demo Merchant'})

    // A token stored in the profile loses to the variable.
    await cli(['login', '--token', acct.token, '--base-url', gw.url], {home})
    const human = await cli(['whoami'], {home, env: {PAYAPP_TOKEN: acct.token}})
    expect(block(human.stdout).Token).to.equal(`${mask(acct.token)} (from PAYAPP_TOKEN)`)

    const fresh = tempHome()
    const merchant = await cli(['merchant', '--json'], {home: fresh, env: {PAYAPP_TOKEN: acct.token, PAYAPP_BASE_URL: gw.url}})
    expect(merchant.code, merchant.stderr).to.equal(0)
    expect(await exists(configDir(fresh))).to.equal(false)
  })

  after(function () {
    // Whatever happened above: no secret was ever printed in full.
    for (const res of outputs) {
      for (const secret of secrets) {
        expect(res.stdout).not.to.include(secret)
        expect(res.stderr).not.to.include(secret)
      }
    }
  })
})
