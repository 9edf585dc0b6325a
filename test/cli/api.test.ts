/** `payapp api`: raw requests with the profile's auth, run as the real CLI against the real gateway. */
import {expect} from 'chai'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {once} from 'node:events'
import {createServer} from 'node:http'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {runCli, type CliResult} from '../helpers/cli.js'
import {TestGateway, type Account} from '../helpers/gateway.js'


describe('payapp api', function () {
  this.timeout(60_000)

  let gw: TestGateway
  let acct: Account
  let env: Record<string, string>

  async function cli(args: string[], opts: {env?: Record<string, string | undefined>; input?: string} = {}): Promise<CliResult> {
    const res = await runCli(['api', ...args], {env: {...env, ...opts.env}, input: opts.input})
    for (const secret of [acct.token, acct.secretKey]) {
      expect(res.stdout, 'stdout leaks a credential').not.to.include(secret)
      expect(res.stderr, 'stderr leaks a credential').not.to.include(secret)
    }
    return res
  }
  const ok = (res: CliResult) => {
    expect(res.code, `exit ${res.code}\nstdout: ${res.stdout}\nstderr: ${res.stderr}`).to.equal(0)
    return res
  }
  const usage = (res: CliResult, message: RegExp) => {
    expect(res.code, res.stderr).to.equal(2)
    expect(res.stdout).to.equal('')
    expect(res.stderr).to.match(message)
  }

  before(async function () {
    gw = await TestGateway.start()
    acct = await gw.account('test')
    env = {PAYAPP_BASE_URL: gw.url, PAYAPP_TOKEN: acct.token, PAYAPP_SECRET_KEY: acct.secretKey}
    for (const name of ['One', 'Two', 'Three']) await acct.app('POST', '/products', {body: {name}})
  })
  after(async function () {
    await gw?.close()
  })

  it('GET with --query prints the JSON response, indented, and exactly it with --json', async function () {
    const expected = (await acct.app('GET', '/products?limit=2')).body
    const human = ok(await cli(['GET', '/products', '--query', 'limit=2']))
    expect(human.stdout).to.equal(JSON.stringify(expected, null, 2) + '\n')
    expect(human.stderr).to.equal('')
    expect(ok(await cli(['get', '/products', '--query', 'limit=2', '--json'])).json()).to.deep.equal(expected)
  })

  it('accepts an absolute /v1/app path, a path without its slash, and a query string in the path', async function () {
    const expected = (await acct.app('GET', '/products?limit=1&offset=1')).body
    expect(ok(await cli(['get', '/v1/app/products', '-q', 'limit=1', '-q', 'offset=1', '--json'])).json()).to.deep.equal(expected)
    expect(ok(await cli(['get', 'products?limit=1&offset=1', '--json'])).json()).to.deep.equal(expected)
    expect(ok(await cli(['get', '/v1/app/store', '--json'])).json()).to.deep.equal((await acct.app('GET', '/store')).body)
  })

  it('--store uses the secret key and /v1/store; a /v1/store path picks it too', async function () {
    const expected = (await acct.store('GET', '/products?limit=25')).body
    // The store API embeds prices in products; the App API does not: the door is visible in the result.
    expect(expected.data[0]).to.have.property('prices')
    expect(ok(await cli(['get', '/products', '--store', '--json'], {env: {PAYAPP_TOKEN: undefined}})).json()).to.deep.equal(expected)
    expect(ok(await cli(['get', '/v1/store/products', '--json'], {env: {PAYAPP_TOKEN: undefined}})).json()).to.deep.equal(expected)
  })

  it('--merchant uses the secret key and /v1; any other /v1 path picks the merchant API too', async function () {
    const created = ok(
      await cli(['post', '/v1/checkout/sessions', '--data', JSON.stringify({amount: 1500, currency: 'eur', customer_name: 'Ada Buyer', customer_email: 'ada@example.com'}), '--json'], {
        env: {PAYAPP_TOKEN: undefined},
      }),
    ).json()
    expect(created).to.include({object: 'checkout.session', amount: 1500})
    const expected = (await acct.v1('GET', '/checkout/sessions?limit=25')).body
    expect(ok(await cli(['get', '/checkout/sessions', '--merchant', '--json'], {env: {PAYAPP_TOKEN: undefined}})).json()).to.deep.equal(expected)
  })

  it('POST with --data; the same --idempotency-key replays the first result', async function () {
    const body = JSON.stringify({name: 'Keyed', price: {currency: 'eur', unit_amount: 1000}})
    const first = ok(await cli(['post', '/products', '--data', body, '--idempotency-key', 'cli-api-test-1', '--json'])).json()
    const again = ok(await cli(['POST', '/products', '--data', body, '--idempotency-key', 'cli-api-test-1', '--json'])).json()
    expect(again).to.deep.equal(first)
    const reused = await cli(['POST', '/products', '--data', '{"name": "Other"}', '--idempotency-key', 'cli-api-test-1'])
    expect(reused.code).to.equal(6)
    expect(reused.stderr).to.match(/^idempotency_key_reused: .+ \(req_\w+\)\n$/)
  })

  it('POST without a key gets a fresh one per call', async function () {
    const body = '{"name": "Unkeyed"}'
    const a = ok(await cli(['POST', '/products', '--data', body, '--json'])).json()
    const b = ok(await cli(['POST', '/products', '--data', body, '--json'])).json()
    expect(a.id).to.not.equal(b.id)
  })

  it('--data @file.json and --data - (stdin); PATCH and DELETE', async function () {
    const created = (await acct.app('POST', '/products', {body: {name: 'Patch me'}})).body
    const file = join(mkdtempSync(join(tmpdir(), 'payapp-api-')), 'patch.json')
    writeFileSync(file, JSON.stringify({name: 'Patched from file'}))
    expect(ok(await cli(['patch', `/products/${created.id}`, '--data', `@${file}`, '--json'])).json()).to.include({id: created.id, name: 'Patched from file'})
    const fromStdin = ok(await cli(['PATCH', `/products/${created.id}`, '--data', '-'], {input: '{"tags": ["stdin"]}'}))
    expect(JSON.parse(fromStdin.stdout)).to.deep.include({id: created.id, tags: ['stdin']})
    expect(ok(await cli(['DELETE', `/products/${created.id}`, '--json'])).json()).to.deep.include({id: created.id, deleted: true})
  })

  it('API errors: code: message (request id) on stderr and the exit code of the status; the envelope with --json', async function () {
    const missing = await cli(['GET', '/products/prod_missing'])
    expect(missing.code).to.equal(5)
    expect(missing.stdout).to.equal('')
    expect(missing.stderr).to.match(/^[a-z_]+: .+ \(req_\w+\)\n$/)
    expect(missing.stderr).not.to.match(/\n\s+at /)

    const invalid = await cli(['POST', '/products', '--data', '{"name": ""}', '--json'])
    expect(invalid.code).to.equal(6)
    const {error} = invalid.json()
    expect(error).to.include({status: 400, param: 'name'})
    expect(error.request_id).to.match(/^req_/)

    const method = await cli(['PUT', '/products'])
    expect(method.code).to.equal(6)
    expect(method.stderr).to.match(/^method_not_allowed: /)
  })

  it('usage errors exit 2 before any request', async function () {
    usage(await cli(['FETCH', '/products']), /METHOD must be one of GET, POST, PATCH, DELETE, PUT/)
    usage(await cli(['GET', '/products', '--data', '{}']), /A GET request has no body: pass --query/)
    usage(await cli(['GET', `${gw.url}/v1/app/products`]), /not a URL/)
    usage(await cli(['GET', '/v1']), /start with \/v1\/app, \/v1\/store or \/v1\/<resource>/)
    usage(await cli(['GET', '/v1/checkout/sessions', '--store']), /PATH starts with \/v1 \(the merchant API\)/)
    usage(await cli(['GET', '/v1/app/products', '--store']), /PATH starts with \/v1\/app/)
    usage(await cli(['GET', '/products', '--query', 'limit']), /--query takes key=value/)
    usage(await cli(['POST', '/products', '--data', '[1]']), /--data must be a JSON object/)
    usage(await cli(['GET']), /Missing 1 required arg/)
  })

  it('a missing credential exits 3 naming the variable to set', async function () {
    const token = await cli(['GET', '/products'], {env: {PAYAPP_TOKEN: undefined}})
    expect(token.code).to.equal(3)
    expect(token.stderr).to.include('PAYAPP_TOKEN')
    const key = await cli(['GET', '/products', '--store'], {env: {PAYAPP_SECRET_KEY: undefined}})
    expect(key.code).to.equal(3)
    expect(key.stderr).to.include('PAYAPP_SECRET_KEY')
    const json = await cli(['GET', '/products', '--json'], {env: {PAYAPP_TOKEN: undefined}})
    expect(json.json().error).to.include({code: 'credential_missing'})
  })

  it('a bad token is the API\'s 401 (exit 3)', async function () {
    const res = await cli(['GET', '/products'], {env: {PAYAPP_TOKEN: 'tok_test_not_a_real_token_0000'}})
    expect(res.code).to.equal(3)
    expect(res.stderr).to.match(/\(req_\w+\)\n$/)
    expect(res.stderr).not.to.include('tok_test_not_a_real_token_0000')
  })

  it('takes the global --max-retries like every command: one retry shown on stderr, then exit 7', async function () {
    let requests = 0
    const server = createServer((_req, res) => {
      requests++
      res.writeHead(503, {'content-type': 'application/json', 'retry-after': '0'})
      res.end(JSON.stringify({error: {type: 'api_error', code: 'unavailable', message: 'down for a moment'}}))
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    try {
      const {port} = server.address() as {port: number}
      const res = await cli(['GET', '/products', '--max-retries', '1'], {env: {PAYAPP_BASE_URL: `http://127.0.0.1:${port}`}})
      expect(res.code, res.stderr).to.equal(7)
      expect(requests).to.equal(2)
      expect(res.stderr).to.match(/retrying in .*\(attempt 2\/2\)/)
    } finally {
      server.close()
    }
  })
})
