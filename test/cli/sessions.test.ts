import {expect} from 'chai'

import {runCli, type CliResult} from '../helpers/cli.js'
import {pay, sellable} from '../helpers/commerce.js'
import {gatewayForSuite} from '../helpers/gateway.js'

/** The merchant API's commands: `payapp sessions …` and `payapp refunds create|get|list --charge`, with PAYAPP_SECRET_KEY. */
describe('payapp sessions and merchant refunds', function () {
  this.timeout(60_000)
  const suite = gatewayForSuite()
  const outputs: CliResult[] = []

  async function cli(args: string[]): Promise<CliResult> {
    const res = await runCli(args, {env: {PAYAPP_BASE_URL: suite.gw.url, PAYAPP_SECRET_KEY: suite.acct.secretKey, PAYAPP_ENV: 'test'}})
    outputs.push(res)
    return res
  }
  const ok = (res: CliResult) => {
    expect(res.code, res.stderr).to.equal(0)
    return res
  }

  after(() => {
    for (const res of outputs) expect(res.stdout + res.stderr).not.to.include(suite.acct.secretKey)
  })

  it('creates, lists, updates, gets and expires sessions', async () => {
    const created = ok(await cli(['sessions', 'create', '--amount', '1999', '--currency', 'eur', '--customer-name', 'Ada Buyer', '--customer-email', 'ada@example.com', '--reference', 'o-1', '--json'])).json()
    expect(created).to.include({object: 'checkout.session', status: 'open', amount: 1999, reference: 'o-1', revision: 0})

    const human = ok(await cli(['sessions', 'get', created.id]))
    expect(human.stdout).to.include(created.id).and.include('19.99 EUR').and.include('Line items')

    const updated = ok(await cli(['sessions', 'update', created.id, '--amount', '2500', '--revision', '0', '--json'])).json()
    expect(updated).to.include({amount: 2500, revision: 1})
    const stale = await cli(['sessions', 'update', created.id, '--amount', '2600', '--revision', '0', '--json'])
    expect(stale.code).to.not.equal(0)
    expect(JSON.parse(stale.stdout).error).to.include({code: 'revision_conflict', status: 409})

    const item = await sellable(suite.acct, {stock: 2})
    const variantSession = ok(await cli(['sessions', 'create', '--data', JSON.stringify({line_items: [{variant: item.variant.id, quantity: 2}]}), '--json'])).json()
    expect(variantSession.line_items[0]).to.include({variant_id: item.variant.id})

    const list = ok(await cli(['sessions', 'list', '--status', 'open', '--json'])).json()
    expect(list.data.map((s: any) => s.id)).to.deep.equal([variantSession.id, created.id])
    const after = ok(await cli(['sessions', 'list', '--starting-after', variantSession.id, '--json'])).json()
    expect(after.data.map((s: any) => s.id)).to.deep.equal([created.id])

    expect(ok(await cli(['sessions', 'expire', variantSession.id, '--json'])).json()).to.deep.equal({id: variantSession.id, status: 'expired'})
    const gone = await cli(['sessions', 'get', variantSession.id, '--json'])
    expect(JSON.parse(gone.stdout).error).to.include({code: 'session_expired', status: 410})
  })

  it("sessions create --line-items … --currency eur: free items take the session's currency", async () => {
    const items = JSON.stringify([{name: 'Tea', quantity: 2, amount: 500}])
    const created = ok(await cli(['sessions', 'create', '--line-items', items, '--currency', 'eur', '--json'])).json()
    expect(created).to.include({amount: 1000, currency: 'eur'})
    const none = await cli(['sessions', 'create', '--line-items', items, '--json'])
    expect(none.code).to.not.equal(0)
    expect(none.json().error).to.include({code: 'parameter_missing', param: 'currency'})
  })

  it('refunds a payment and reads its refunds', async () => {
    const created = (await suite.acct.v1('POST', '/checkout/sessions', {body: {amount: 3000, currency: 'eur', customer_name: 'Ada Buyer', customer_email: 'ada@example.com'}})).body
    const payment = (await pay(suite.gw, created.id)).body.payment
    const refund = ok(await cli(['refunds', 'create', '--payment', payment.id, '--amount', '1000', '--json'])).json()
    expect(refund).to.include({object: 'refund', amount: 1000, payment: payment.id})
    expect(ok(await cli(['refunds', 'get', refund.id])).stdout).to.include(refund.id)
    const list = ok(await cli(['refunds', 'list', '--charge', payment.id, '--json'])).json()
    expect(list.data.map((r: any) => r.id)).to.deep.equal([refund.id])
    ok(await cli(['refunds', 'create', '--payment', payment.id]))
    const again = await cli(['refunds', 'create', '--payment', payment.id, '--json'])
    expect(JSON.parse(again.stdout).error).to.include({code: 'already_refunded', status: 422})
  })

  describe('required flags and --idempotency-key (the write-command factory)', function () {
    const paid = async () => {
      const created = (await suite.acct.v1('POST', '/checkout/sessions', {body: {amount: 3000, currency: 'eur', customer_name: 'Ada Buyer', customer_email: 'ada@example.com'}})).body
      return (await pay(suite.gw, created.id)).body.payment
    }

    it('sessions create: a raw amount without its currency and customer exits 2 naming them, nothing sent', async () => {
      const res = await cli(['sessions', 'create', '--amount', '1999'])
      expect(res.code).to.equal(2)
      expect(res.stderr).to.equal('Error: Missing required flags --currency, --customer-name, --customer-email (or the fields in --data; not prompting: stdin is not a terminal)\n')
      expect(res.stdout).to.equal('')
      const subscription = await cli(['sessions', 'create', '--mode', 'subscription', '--json'])
      expect(subscription.code).to.equal(2)
      expect(subscription.json().error).to.include({type: 'usage_error', param: '--line-items'})
      expect(suite.requests).to.deep.equal([])
    })

    it('refunds create without --payment exits 2 naming it, nothing sent', async () => {
      const res = await cli(['refunds', 'create', '--amount', '500'])
      expect(res.code).to.equal(2)
      expect(res.stderr).to.equal('Error: Missing required flag --payment (or the field in --data; not prompting: stdin is not a terminal)\n')
      expect(suite.requests).to.deep.equal([])
    })

    it('sessions create --idempotency-key: the same key twice returns the same session', async () => {
      const args = ['sessions', 'create', '--amount', '1999', '--currency', 'eur', '--customer-name', 'Ada Buyer', '--customer-email', 'ada@example.com', '--idempotency-key', 'order-17', '--json']
      const first = ok(await cli(args)).json()
      const again = ok(await cli(args)).json()
      expect(again.id).to.equal(first.id)
      expect(suite.requests.filter((r) => r === 'POST /v1/checkout/sessions')).to.have.length(2)
      const open = ok(await cli(['sessions', 'list', '--json'])).json()
      expect(open.data.filter((s: {id: string}) => s.id === first.id)).to.have.length(1)
    })

    it('sessions update --idempotency-key: the same key twice applies the change once', async () => {
      const created = (await suite.acct.v1('POST', '/checkout/sessions', {body: {amount: 3000, currency: 'eur', customer_name: 'Ada Buyer', customer_email: 'ada@example.com'}})).body
      const args = ['sessions', 'update', created.id, '--reference', 'o-18', '--idempotency-key', 'o-18-ref', '--json']
      const first = ok(await cli(args)).json()
      const again = ok(await cli(args)).json()
      expect(first).to.include({reference: 'o-18', revision: 1})
      // A replay, not a second update: the revision did not move again.
      expect(again).to.deep.equal(first)
    })

    it('refunds create --idempotency-key: the same key twice returns the same refund, not a second one', async () => {
      const payment = await paid()
      const args = ['refunds', 'create', '--payment', payment.id, '--amount', '500', '--idempotency-key', `refund-${payment.id}`, '--json']
      const first = ok(await cli(args)).json()
      const again = ok(await cli(args)).json()
      expect(again.id).to.equal(first.id)
      const list = ok(await cli(['refunds', 'list', '--charge', payment.id, '--json'])).json()
      expect(list.data.map((r: {id: string}) => r.id)).to.deep.equal([first.id])
    })
  })
})
