/** The merchant API's billing and risk commands (secret key): subscriptions, customers, fraud warnings. */
import {expect} from 'chai'

import {runCli} from '../helpers/cli.js'
import {type Account, TestGateway} from '../helpers/gateway.js'

describe('merchant API commands', function () {
  this.timeout(60_000)
  let gw: TestGateway
  let acct: Account
  const env = () => ({PAYAPP_BASE_URL: gw.url, PAYAPP_SECRET_KEY: acct.secretKey})
  before(async () => {
    gw = await TestGateway.start()
    acct = await gw.account('test')
  })
  after(() => gw.close())

  it('fraud-warnings create (test helper), list and get', async function () {
    const created = await runCli(['fraud-warnings', 'create', '--amount', '9900', '--currency', 'eur', '--json'], {env: env()})
    expect(created.code, created.stderr).to.equal(0)
    const warning = created.json()
    expect(warning).to.include({object: 'fraud_warning', amount: 9900, currency: 'eur'})
    const list = await runCli(['fraud-warnings', 'list', '--json'], {env: env()})
    expect(list.json().data.map((w: {id: string}) => w.id)).to.include(warning.id)
    const shown = await runCli(['fraud-warnings', 'get', warning.id], {env: env()})
    expect(shown.code, shown.stderr).to.equal(0)
    expect(shown.stdout).to.include(warning.id).and.include('99.00 EUR')
  })

  it('subscriptions create checks --price-id before sending; get of an unknown one is a 404 (exit 5)', async function () {
    const missing = await runCli(['subscriptions', 'create', '--customer-name', 'Ada Buyer'], {env: env()})
    expect(missing.code).to.equal(2)
    expect(missing.stderr).to.match(/^Error: Missing required flag --price-id /)
    const unknown = await runCli(['subscriptions', 'get', 'sub_nope'], {env: env()})
    expect(unknown.code).to.equal(5)
    const customer = await runCli(['customers', 'get', 'cus_nope'], {env: env()})
    expect(customer.code).to.equal(5)
  })
})
