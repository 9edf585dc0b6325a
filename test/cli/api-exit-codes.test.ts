/**
 * The documented exit codes, end to end: real gateway responses through the real CLI, one row per
 * class of failure, each in human form (`code: message (request_id)` on stderr) and under --json.
 */
import {expect} from 'chai'

import {ExitCode} from '../../src/cli/exit-codes.js'
import {runCli} from '../helpers/cli.js'
import {type Account, sellable} from '../helpers/commerce.js'
import {TestGateway} from '../helpers/gateway.js'

describe('exit codes from real API errors', function () {
  this.timeout(60_000)
  let gw: TestGateway
  let acct: Account
  let narrow: string
  let orderId: string

  before(async function () {
    gw = await TestGateway.start()
    acct = await gw.account('test')
    narrow = (await gw.installation(acct.merchant.id, 'test', ['products:read'])).token
    const item = await sellable(acct, {unit_amount: 1500})
    orderId = (await acct.app('POST', '/orders', {body: {product_id: item.product.id}})).body.id
  })
  after(() => gw.close())

  const cases: Array<{name: string; status: number; exit: number; code: string; args: () => string[]; token?: () => string}> = [
    {name: '401 unknown token', status: 401, exit: ExitCode.AUTHENTICATION, code: 'invalid_api_key', args: () => ['payments', 'list'], token: () => 'app_test_' + 'q'.repeat(32)},
    {name: '403 missing scope', status: 403, exit: ExitCode.PERMISSION, code: 'insufficient_scope', args: () => ['balance'], token: () => narrow},
    {name: '404 unknown payment', status: 404, exit: ExitCode.NOT_FOUND, code: 'resource_missing', args: () => ['payments', 'get', 'py_doesnotexist']},
    {name: '409 ship without evidence', status: 409, exit: ExitCode.CONFLICT, code: 'evidence_required', args: () => ['orders', 'update', orderId, '--status', 'shipped']},
    {name: '400 live-only route with a test token', status: 400, exit: ExitCode.CONFLICT, code: 'livemode_required', args: () => ['subscription-links', 'list']},
  ]

  for (const c of cases) {
    it(`${c.name} → exit ${c.exit}`, async function () {
      const env = {PAYAPP_BASE_URL: gw.url, PAYAPP_TOKEN: c.token?.() ?? acct.token}
      const [human, json] = await Promise.all([runCli(c.args(), {env}), runCli([...c.args(), '--json'], {env})])

      expect(human.code, human.stderr).to.equal(c.exit)
      expect(human.stdout).to.equal('')
      expect(human.stderr).to.match(new RegExp(`^${c.code}: .+ \\(req_\\w+\\)\\n$`))

      expect(json.code).to.equal(c.exit)
      const {error} = json.json()
      expect(error).to.include({code: c.code, status: c.status})
      expect(error.request_id).to.match(/^req_/)
      expect(json.stderr).to.equal('')
    })
  }

  it('no credential at all → exit 3, naming how to provide one', async function () {
    const res = await runCli(['merchant'], {env: {PAYAPP_BASE_URL: gw.url}})
    expect(res.code).to.equal(ExitCode.AUTHENTICATION)
    expect(res.stderr).to.equal('Error: No test installation token for profile "default": run "payapp login --env test --token …" or set PAYAPP_TOKEN\n')
  })

  it('a bad flag value → exit 2 before any request', async function () {
    const res = await runCli(['orders', 'update', orderId, '--status', 'teleported', '--json'], {env: {PAYAPP_BASE_URL: gw.url, PAYAPP_TOKEN: acct.token}})
    expect(res.code).to.equal(ExitCode.USAGE)
    expect(res.json().error).to.include({type: 'usage_error'})
  })
})
