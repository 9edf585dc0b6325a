/**
 * What a new user meets in the first ten minutes (issue 10), each as a process without a TTY: the exit
 * code, the exact words on stderr/stdout, and — where the CLI must fail before talking to anyone — that
 * the gateway saw no request at all.
 */
import {createServer, type IncomingMessage, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'
import {readFile} from 'node:fs/promises'
import {join} from 'node:path'

import {expect} from 'chai'

import {runCli, startCli, tempHome, type CliResult} from '../helpers/cli.js'
import {type Account, TestGateway} from '../helpers/gateway.js'
import {block} from '../helpers/human.js'

/** A real HTTP server that answers from a script (the last answer repeats), for 429/503 that a gateway gives only on demand. */
async function scripted(answers: Array<{status: number; headers?: Record<string, string>; body?: unknown}>) {
  const seen: string[] = []
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    seen.push(`${req.method} ${req.url}`)
    const a = answers[Math.min(seen.length, answers.length) - 1]!
    res.writeHead(a.status, {'content-type': 'application/json', 'x-request-id': `req_${seen.length}`, ...a.headers})
    res.end(JSON.stringify(a.body ?? {error: {type: 'api_error', code: 'unavailable', message: 'Try later', request_id: `req_${seen.length}`}}))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, close: () => new Promise<void>((r) => server.close(() => r()))}
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = await scripted([{status: 200}])
  await s.close()
  return Number(new URL(s.url).port)
}

const EMPTY_LIST = {object: 'list', has_more: false, data: []}

describe('the CLI as a new user meets it', function () {
  this.timeout(60_000)
  let gw: TestGateway
  let acct: Account
  let requests: string[]
  const as = (extra: Record<string, string> = {}) => ({PAYAPP_BASE_URL: gw.url, PAYAPP_TOKEN: acct.token, ...extra})

  before(async function () {
    gw = await TestGateway.start()
    acct = await gw.account('test')
    requests = gw.recordRequests()
  })
  beforeEach(() => {
    requests.length = 0
  })
  after(() => gw.close())

  describe('1. required fields are checked locally, before any request', function () {
    it('products create without --name: exit 2 naming the flag, nothing sent', async function () {
      const res = await runCli(['products', 'create'], {env: as()})
      expect(res.code).to.equal(2)
      expect(res.stderr).to.equal('Error: Missing required flag --name (or the field in --data; not prompting: stdin is not a terminal)\n')
      expect(res.stdout).to.equal('')
      expect(requests).to.deep.equal([])
    })

    it('a required flag given empty (`--name "$NAME"` with NAME unset) or empty in --data: exit 2 saying it is empty, nothing sent', async function () {
      const flag = await runCli(['products', 'create', '--name', ''], {env: as()})
      expect(flag.code).to.equal(2)
      expect(flag.stderr).to.equal('Error: --name is empty: it needs a value (not prompting: stdin is not a terminal)\n')
      const data = await runCli(['products', 'create', '--data', '{"name": "", "price": {"currency": "eur", "unit_amount": 100}}', '--json'], {env: as()})
      expect(data.code).to.equal(2)
      expect(data.json().error).to.include({type: 'usage_error', param: '--name', message: "--data's name is empty: it needs a value (not prompting: --json is set)"})
      const nested = await runCli(['products', 'create', '--name', 'Mug', '--price-currency', '', '--price-unit-amount', '100'], {env: as()})
      expect(nested.code).to.equal(2)
      expect(nested.stderr).to.equal('Error: --price-currency is empty: it needs a value (not prompting: stdin is not a terminal)\n')
      expect(requests).to.deep.equal([])
    })

    it('a nested required field counts once its object is sent (--price-currency needs --price-unit-amount); --json names it as param', async function () {
      const res = await runCli(['products', 'create', '--name', 'Mug', '--price-currency', 'eur', '--json'], {env: as()})
      expect(res.code).to.equal(2)
      expect(res.json().error).to.include({type: 'usage_error', param: '--price-unit-amount'})
      expect(requests).to.deep.equal([])
    })

    it('checkouts create and subscription-links create name every missing flag', async function () {
      const checkout = await runCli(['checkouts', 'create'], {env: {PAYAPP_BASE_URL: gw.url, PAYAPP_SECRET_KEY: acct.secretKey}})
      expect(checkout.code).to.equal(2)
      expect(checkout.stderr).to.match(/^Error: Missing required flag --product-id /)
      const link = await runCli(['subscription-links', 'create', '--env', 'live', '--name', 'Pro'], {env: {PAYAPP_BASE_URL: gw.url, PAYAPP_TOKEN: 'app_live_0123456789abcdefghij'}})
      expect(link.code).to.equal(2)
      expect(link.stderr).to.match(/^Error: Missing required flags --amount, --currency, --interval /)
      expect(requests).to.deep.equal([])
    })

    it('a field given in --data satisfies it, and the write goes through', async function () {
      const res = await runCli(['products', 'create', '--data', '-', '--json'], {env: as(), input: '{"name": "From data"}'})
      expect(res.code, res.stderr).to.equal(0)
      expect(res.json()).to.include({name: 'From data'})
      expect(requests).to.deep.equal(['POST /v1/app/products'])
    })

    it('--idempotency-key makes a repeated create return the first product instead of a second one', async function () {
      const args = ['products', 'create', '--name', 'Loop row 17', '--idempotency-key', 'import-row-17', '--json']
      const first = await runCli(args, {env: as()})
      const again = await runCli(args, {env: as()})
      expect(first.code, first.stderr).to.equal(0)
      expect(again.code, again.stderr).to.equal(0)
      expect(again.json().id).to.equal(first.json().id)
      const named = (await acct.app('GET', '/products?limit=100')).body.data.filter((p: {name: string}) => p.name === 'Loop row 17')
      expect(named).to.have.length(1)
      expect(requests.filter((r) => r === 'POST /v1/app/products')).to.have.length(2)
    })
  })

  describe('2. retries are shown, bounded, and a stopped local gateway is reported at once', function () {
    it('a 429 shows its wait on stderr, then succeeds', async function () {
      const server = await scripted([{status: 429, headers: {'retry-after': '1'}}, {status: 200, body: EMPTY_LIST}])
      try {
        const res = await runCli(['products', 'list', '--json'], {env: {PAYAPP_BASE_URL: server.url, PAYAPP_TOKEN: acct.token}})
        expect(res.code, res.stderr).to.equal(0)
        expect(res.stderr).to.equal('rate limited; retrying in 1 s (attempt 2/5)\n')
        expect(res.json()).to.deep.equal(EMPTY_LIST)
        expect(server.seen).to.have.length(2)
      } finally {
        await server.close()
      }
    })

    it('--max-retries and PAYAPP_MAX_RETRIES bound the attempts; a wait past --timeout is not made', async function () {
      const server = await scripted([{status: 503, headers: {'retry-after': '1'}}])
      const env = {PAYAPP_BASE_URL: server.url, PAYAPP_TOKEN: acct.token}
      try {
        const one = await runCli(['products', 'list', '--max-retries', '1'], {env})
        expect(one.code).to.equal(7)
        expect(one.stderr).to.equal('server error (503); retrying in 1 s (attempt 2/2)\nunavailable: Try later (req_2)\n')
        expect(server.seen).to.have.length(2)

        server.seen.length = 0
        const none = await runCli(['products', 'list'], {env: {...env, PAYAPP_MAX_RETRIES: '0'}})
        expect(none.code).to.equal(7)
        expect(none.stderr).to.equal('unavailable: Try later (req_1)\n')
        expect(server.seen).to.have.length(1)
      } finally {
        await server.close()
      }
      const slow = await scripted([{status: 429, headers: {'retry-after': '50'}}])
      try {
        const res = await runCli(['products', 'list', '--timeout', '5'], {env: {PAYAPP_BASE_URL: slow.url, PAYAPP_TOKEN: acct.token}})
        expect(res.code).to.equal(7)
        expect(res.stderr).not.to.include('retrying')
        expect(slow.seen).to.have.length(1)
      } finally {
        await slow.close()
      }
    })

    it('a refused connection to localhost fails at once with the hint, without retrying', async function () {
      const port = await closedPort()
      const res = await runCli(['products', 'list'], {env: {PAYAPP_BASE_URL: `http://127.0.0.1:${port}`, PAYAPP_TOKEN: acct.token}})
      expect(res.code).to.equal(7)
      expect(res.stderr).to.equal(`ECONNREFUSED: cannot reach http://127.0.0.1:${port} — is "payapp gateway start" running?\n`)
      // The envelope's type comes from the error class's name: a literal, which the minified bundle keeps.
      const json = await runCli(['products', 'list', '--json'], {env: {PAYAPP_BASE_URL: `http://127.0.0.1:${port}`, PAYAPP_TOKEN: acct.token}})
      expect(json.code).to.equal(7)
      expect(JSON.parse(json.stdout).error).to.include({type: 'connection_error', code: 'ECONNREFUSED'})
    })
  })

  describe('3 and 6. the seeded profile has what listen, trigger and gateway tokens create need; it is never silently repointed', function () {
    it('gateway start --seed saves admin key (as a secret), merchant and keys to "local"; the admin commands need no other flag', async function () {
      const home = tempHome()
      const first = startCli(['gateway', 'start', '--seed', '--db', ':memory:', '--port', '0', '--json'], home)
      let second
      try {
        const started = JSON.parse(await first.firstLine)
        expect(started.profile).to.deep.equal({name: 'local', saved: true, note: `Saved to the new profile "local": tokens, secret keys, admin key and merchant ${started.seed.merchant}`})
        const configDir = join(home, 'config', 'payapp')
        const credentials = JSON.parse(await readFile(join(configDir, 'credentials.json'), 'utf8')).credentials
        expect(credentials['local:test:admin_key']).to.equal(started.admin_key)
        const config = await readFile(join(configDir, 'config.json'), 'utf8')
        expect(config).not.to.include(started.admin_key)
        expect(JSON.parse(config).profiles.local).to.deep.include({base_url: started.url, merchant: started.seed.merchant})

        const outputs: CliResult[] = []
        const cli = async (args: string[]) => {
          const res = await runCli([...args, '--profile', 'local'], {home})
          outputs.push(res)
          expect(res.code, `${args.join(' ')}: ${res.stderr}`).to.equal(0)
          return res
        }
        const token = (await cli(['gateway', 'tokens', 'create', '--scope', 'products:read', '--json'])).json()
        expect(token).to.include({merchant: started.seed.merchant, env: 'test'})
        const triggered = (await cli(['trigger', 'checkout.session.completed', '--json'])).json()
        expect(triggered.events.map((e: {type: string}) => e.type)).to.include('checkout.session.completed')
        const secret = (await cli(['listen', '--print-secret'])).stdout
        expect(secret).to.match(/^whsec_\w{20,}\n$/)
        expect((await cli(['listen', '--print-secret'])).stdout).to.equal(secret)
        for (const res of outputs) expect(res.stdout + res.stderr).not.to.include(started.admin_key)

        // A second gateway (another port, another in-memory store) leaves "local" pointing at the first.
        second = startCli(['gateway', 'start', '--seed', '--db', ':memory:', '--port', '0', '--json'], home)
        const other = JSON.parse(await second.firstLine)
        expect(other.profile.saved).to.equal(false)
        expect(second.stderr()).to.include(`Profile "local" points at ${started.url} and was left as it is: pass --save-profile to point it here`)
        expect(JSON.parse(await readFile(join(configDir, 'config.json'), 'utf8')).profiles.local.base_url).to.equal(started.url)
        expect(await second.stop()).to.equal(0)

        // With consent it is repointed, and says from where.
        second = startCli(['gateway', 'start', '--seed', '--db', ':memory:', '--port', '0', '--json', '--save-profile'], home)
        const third = JSON.parse(await second.firstLine)
        expect(third.profile.note).to.match(new RegExp(`^Repointed profile "local" \\(was ${started.url}\\)`))
        expect(JSON.parse(await readFile(join(configDir, 'config.json'), 'utf8')).profiles.local.base_url).to.equal(third.url)
      } finally {
        await second?.stop()
        const code = await first.stop()
        expect(code, first.stderr()).to.equal(0)
      }
    })

    it('an unseeded gateway: gateway merchants create --save, then tokens create --save, then any command', async function () {
      const home = tempHome()
      const env = {PAYAPP_BASE_URL: gw.url}
      const made = await runCli(['gateway', 'merchants', 'create', '--admin-key', gw.gw.adminKey, '--company', 'Fresh GmbH', '--profile', 'dev', '--save'], {home, env})
      expect(made.code, made.stderr).to.equal(0)
      expect(made.stdout).to.match(/^Created merchant mch_\w+ \(Fresh GmbH\) with store store_\w+ \(live, approved\)\nSaved to profile "dev"\. Next: payapp gateway tokens create --profile dev --save\n$/)
      for (const args of [['gateway', 'tokens', 'create', '--save'], ['gateway', 'tokens', 'create', '--secret-key', '--save']]) {
        const res = await runCli([...args, '--profile', 'dev'], {home, env})
        expect(res.code, res.stderr).to.equal(0)
      }
      const merchant = await runCli(['merchant', '--profile', 'dev', '--json'], {home, env})
      expect(merchant.code, merchant.stderr).to.equal(0)
      expect(merchant.json()).to.include({company: 'Fresh GmbH'})
      expect((await runCli(['store', '--profile', 'dev'], {home, env})).code).to.equal(0)
    })

    it('without --merchant, the admin commands use the merchant of the token', async function () {
      const res = await runCli(['gateway', 'reset', '--json'], {env: as({PAYAPP_ADMIN_KEY: gw.gw.adminKey})})
      expect(res.code, res.stderr).to.equal(0)
      expect(res.json()).to.include({merchant: acct.merchant.id})
    })

    it('--no-save-profile never writes the profile', async function () {
      const home = tempHome()
      const proc = startCli(['gateway', 'start', '--seed', '--db', ':memory:', '--port', '0', '--json', '--no-save-profile'], home)
      try {
        expect(JSON.parse(await proc.firstLine).profile).to.deep.equal({name: 'local', saved: false, note: 'Profile "local" not written (--no-save-profile)'})
        const profiles = await runCli(['profiles', 'list', '--json'], {home})
        expect(profiles.json().profiles.map((p: {name: string}) => p.name)).to.deep.equal(['default'])
      } finally {
        expect(await proc.stop()).to.equal(0)
      }
    })
  })

  describe('4 and 5. a credential of the other environment, and a base URL without a scheme, are usage errors', function () {
    it('PAYAPP_TOKEN=app_test_… with PAYAPP_ENV=live is refused (exit 2), naming the variable; nothing sent', async function () {
      for (const args of [['whoami'], ['products', 'list']]) {
        const res = await runCli(args, {env: as({PAYAPP_ENV: 'live'})})
        expect(res.code, args.join(' ')).to.equal(2)
        expect(res.stderr).to.match(/^Error: The installation token from PAYAPP_TOKEN \(app_test_…\w{4}\) is a test credential, but the environment is live \(from PAYAPP_ENV\): use --env test, or a live credential\n$/)
      }
      expect(requests).to.deep.equal([])
    })

    it('--base-url localhost:4343 names the flag and suggests http://localhost:4343 (exit 2)', async function () {
      const flag = await runCli(['products', 'list', '--base-url', 'localhost:4343'], {env: {PAYAPP_TOKEN: acct.token}})
      expect(flag.code).to.equal(2)
      expect(flag.stderr).to.equal('Error: Invalid base URL "localhost:4343" (from --base-url): it must start with http:// or https:// (did you mean "http://localhost:4343"?)\n')
      const variable = await runCli(['products', 'list', '--json'], {env: {PAYAPP_TOKEN: acct.token, PAYAPP_BASE_URL: '127.0.0.1:4242'}})
      expect(variable.code).to.equal(2)
      expect(variable.json().error).to.include({param: '--base-url', message: 'Invalid base URL "127.0.0.1:4242" (from PAYAPP_BASE_URL): it must start with http:// or https:// (did you mean "http://127.0.0.1:4242"?)'})
    })
  })

  describe('7. discovery', function () {
    it('a typo says "Did you mean" in the user\'s words on stderr and exits 2', async function () {
      const res = await runCli(['prodcts', 'list'])
      expect(res.code).to.equal(2)
      expect(res.stdout).to.equal('')
      expect(res.stderr).to.equal('"prodcts list" is not a payapp command.\nDid you mean "products list"?\nRun "payapp help" for a list of commands.\n')
      const topic = await runCli(['subscription-link', 'list'])
      expect(topic.code).to.equal(2)
      expect(topic.stderr).to.include('Did you mean "subscription-links list"?')
    })

    it('a mistyped flag says which flag of the command was meant, and exits 2', async function () {
      const res = await runCli(['products', 'list', '--limt', '5'])
      expect(res.code).to.equal(2)
      expect(res.stdout).to.equal('')
      expect(res.stderr).to.equal('Error: Nonexistent flag: --limt (did you mean --limit?)\nSee more help with --help\n')
      const json = await runCli(['products', 'list', '--json', '--jsno'])
      expect(json.json().error).to.include({code: 'invalid_usage', message: 'Nonexistent flag: --jsno (did you mean --json?)\nSee more help with --help'})
      const far = await runCli(['products', 'list', '--zzzzzzzzz'])
      expect(far.stderr, 'no guess when nothing is close').to.equal('Error: Nonexistent flag: --zzzzzzzzz\nSee more help with --help\n')
    })

    it('payapp version says what --version says; -h works; autocomplete is there', async function () {
      const [version, flag, json] = await Promise.all([runCli(['version']), runCli(['--version']), runCli(['version', '--json'])])
      expect(version.code).to.equal(0)
      expect(version.stdout).to.equal(flag.stdout)
      expect(json.json()).to.include({version: JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')).version})
      const help = await runCli(['products', 'list', '-h'])
      expect(help.code).to.equal(0)
      expect(help.stdout).to.include('USAGE\n  $ payapp products list')
      const complete = await runCli(['autocomplete', 'bash'])
      expect(complete.code, complete.stderr).to.equal(0)
      expect(complete.stdout).to.include('payapp autocomplete')
    })

    it('global flags that do not apply are hidden from help (init, gateway start), and shown where they do', async function () {
      const [init, start, list] = await Promise.all([runCli(['init', '--help']), runCli(['gateway', 'start', '--help']), runCli(['products', 'list', '--help'])])
      expect(init.stdout).not.to.match(/--base-url|--env|--max-retries/)
      expect(start.stdout).not.to.match(/--base-url|--env /)
      expect(start.stdout).to.include('--profile')
      expect(list.stdout).to.include('--base-url').and.include('--max-retries').and.include('--timeout')
    })
  })

  describe('8. credentials', function () {
    it('login --token - reads the token from stdin, so it is never on the command line', async function () {
      const home = tempHome()
      const res = await runCli(['login', '--token', '-', '--base-url', gw.url, '--json'], {home, input: `${acct.token}\n`})
      expect(res.code, res.stderr).to.equal(0)
      expect(res.json()).to.deep.include({env: 'test', merchant: {id: acct.merchant.id, company: 'Demo Merchant'}})
      const who = await runCli(['whoami', '--json'], {home})
      expect(who.json()).to.deep.include({merchant: {id: acct.merchant.id, company: 'Demo Merchant'}, token_source: 'file'})
      const empty = await runCli(['login', '--token', '-'], {home})
      expect(empty.code).to.equal(2)
      expect(empty.stderr).to.equal('Error: --token - read nothing from stdin\n')
    })

    it('profiles delete removes the profile and its credentials; without a TTY it needs --yes', async function () {
      const home = tempHome()
      expect((await runCli(['login', '--token', acct.token, '--secret-key', acct.secretKey, '--base-url', gw.url, '--profile', 'old'], {home})).code).to.equal(0)
      const refused = await runCli(['profiles', 'delete', 'old'], {home})
      expect(refused.code).to.equal(2)
      expect(refused.stderr).to.match(/pass --yes/)
      const res = await runCli(['profiles', 'delete', 'old', '--yes', '--json'], {home})
      expect(res.code, res.stderr).to.equal(0)
      expect(res.json()).to.deep.equal({deleted: 'old', credentials_removed: [{env: 'test', kind: 'token'}, {env: 'test', kind: 'secret_key'}]})
      const list = await runCli(['profiles', 'list', '--json'], {home})
      expect(list.json().profiles.map((p: {name: string}) => p.name)).to.deep.equal(['default'])
      const unknown = await runCli(['profiles', 'delete', 'nope', '--yes'], {home})
      expect(unknown.code).to.equal(2)
    })

    it('config set/get keep a profile\'s defaults, validated like their flags', async function () {
      const home = tempHome()
      const set = await runCli(['config', 'set', 'base-url', gw.url, '--profile', 'ci'], {home})
      expect(set.code, set.stderr).to.equal(0)
      expect(set.stdout).to.equal(`Set base-url of profile "ci" to ${gw.url}\n`)
      const get = await runCli(['config', 'get', 'base-url', '--profile', 'ci'], {home})
      expect(get.stdout).to.equal(`${gw.url}\n`)
      const bad = await runCli(['config', 'set', 'base-url', 'localhost:1', '--profile', 'ci'], {home})
      expect(bad.code).to.equal(2)
      expect(bad.stderr).to.include('did you mean "http://localhost:1"?')
      const all = await runCli(['config', 'get', '--profile', 'ci', '--json'], {home})
      expect(all.json().settings).to.deep.include({key: 'base-url', value: gw.url, source: 'profile'})
    })
  })

  describe('9. output', function () {
    it('product create and update show the default price as an amount, not only its id', async function () {
      const res = await runCli(['products', 'create', '--name', 'Priced', '--price-currency', 'eur', '--price-unit-amount', '2500'], {env: as()})
      expect(res.code, res.stderr).to.equal(0)
      const shown = block(res.stdout)
      expect(shown['Default price']).to.match(/^25\.00 EUR \(price_\w+\)$/)
      const updated = await runCli(['products', 'update', shown.ID!, '--name', 'Priced 2'], {env: as()})
      expect(block(updated.stdout)['Default price']).to.equal(shown['Default price'])
    })

    it('evidence shows every part it has, a note included', async function () {
      const order = (await acct.app('POST', '/orders', {body: {product_id: (await acct.app('POST', '/products', {body: {name: 'Ev', price: {currency: 'eur', unit_amount: 900}}})).body.id}})).body
      const res = await runCli(['orders', 'evidence', 'add', order.id, '--tracking-number', '1Z999', '--carrier', 'UPS', '--note', 'Left at the door'], {env: as()})
      expect(res.code, res.stderr).to.equal(0)
      expect(res.stdout).to.match(/oev_\w+ +tracking +UPS 1Z999 "Left at the door"/)
    })

    it('an API refusal points to the CLI command that fixes it', async function () {
      const order = (await acct.app('POST', '/orders', {body: {product_id: (await acct.app('POST', '/products', {body: {name: 'Ship', price: {currency: 'eur', unit_amount: 900}}})).body.id}})).body
      const res = await runCli(['orders', 'update', order.id, '--status', 'shipped', '--json'], {env: as()})
      expect(res.code).to.equal(6)
      expect(res.json().error.code).to.equal('evidence_required')
      expect(res.json().error.message).to.include('(attach it first: payapp orders evidence add ORDER_ID --tracking-number … --carrier … (or --file, --note))')
    })

    it('--verbose logs the query string (secrets redacted)', async function () {
      const res = await runCli(['products', 'list', '--limit', '5', '--offset', '1', '--verbose'], {env: as()})
      expect(res.code, res.stderr).to.equal(0)
      expect(res.stderr).to.include(`→ GET ${gw.url}/v1/app/products?limit=5&offset=1\n`)
    })
  })
})
