/** The merchant API's commands (secret key): checkout sessions, subscriptions, customers, fraud warnings. */
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

  it('checkout-sessions get and expire a store checkout', async function () {
    const product = (await acct.store('POST', '/products', {body: {name: 'Expiring', price: {currency: 'eur', unit_amount: 900}}})).body
    const checkout = (await acct.store('POST', '/checkouts', {body: {product_id: product.id}})).body
    const got = await runCli(['checkout-sessions', 'get', checkout.session_id, '--json'], {env: env()})
    expect(got.code, got.stderr).to.equal(0)
    expect(got.json()).to.include({id: checkout.session_id, status: 'open'})
    const expired = await runCli(['checkout-sessions', 'expire', checkout.session_id], {env: env()})
    expect(expired.code, expired.stderr).to.equal(0)
    expect(expired.stdout).to.equal(`Expired checkout session ${checkout.session_id}\n`)
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
