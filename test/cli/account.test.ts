import {expect} from 'chai'

import {date} from '../../src/cli/output.js'
import {runCli, type CliResult} from '../helpers/cli.js'
import {type Account, sale, sellable} from '../helpers/commerce.js'
import {TestGateway} from '../helpers/gateway.js'
import {block, header, row, rowCount} from '../helpers/human.js'

describe('payapp account reads: merchant, balance, payments, refunds, disputes, payouts, invoices, subscriptions, analytics', function () {
  this.timeout(60_000)
  let gw: TestGateway
  let test: Account
  let live: Account
  const f: Record<string, any> = {}
  const outputs: CliResult[] = []

  /** The CLI with a token from the environment, as CI runs it; every output is kept for the secrets check. */
  async function cli(acct: Account, args: string[]): Promise<CliResult> {
    const res = await runCli(args, {env: {PAYAPP_BASE_URL: gw.url, PAYAPP_TOKEN: acct.token, PAYAPP_ENV: acct === live ? 'live' : 'test'}})
    outputs.push(res)
    expect(res.code, `payapp ${args.join(' ')}: ${res.stderr}`).to.equal(0)
    return res
  }
  /** The same call straight to the App API: what --json must print. */
  const api = async (acct: Account, path: string) => {
    const res = await acct.app('GET', path)
    expect(res.status, res.text).to.equal(200)
    return res.body
  }

  /** `payapp <args> --json` prints exactly what the App API answers at `path`. */
  async function expectJson(acct: Account, args: string[], path: string) {
    const [res, body] = await Promise.all([cli(acct, [...args, '--json']), api(acct, path)])
    expect(res.json()).to.deep.equal(body)
  }

  before(async function () {
    gw = await TestGateway.start()
    test = await gw.account('test')
    live = await gw.account('live')

    // Sandbox: a sale of two shirts refunded in part, a disputed sale, a payout and a subscription.
    const shirt = await sellable(test, {unit_amount: 2500, currency: 'eur'})
    f.sale = await sale(gw, test, shirt, 2)
    f.refund = (await gw.admin('POST', `/payments/${f.sale.payment.id}/refund`, {amount: 1000, reason: 'requested_by_customer'})).body.refund
    f.disputed = await sale(gw, test, shirt)
    f.dispute = (await gw.admin('POST', `/payments/${f.disputed.payment.id}/dispute`, {})).body.dispute
    f.payout = (await gw.admin('POST', '/payouts', {merchant: test.merchant.id, env: 'test', amount: 12345, currency: 'eur', status: 'paid'})).body
    f.subscription = (await gw.admin('POST', '/subscriptions', {merchant: test.merchant.id, env: 'test', amount: 1500, currency: 'eur'})).body

    // Live: a sale in dollars refunded in part, and an open invoice.
    const mug = await sellable(live, {unit_amount: 4000, currency: 'usd', name: 'Mug'})
    f.liveSale = await sale(gw, live, mug)
    await gw.admin('POST', `/payments/${f.liveSale.payment.id}/refund`, {amount: 500})
    f.invoice = (await gw.admin('POST', '/invoices', {merchant: live.merchant.id, env: 'live', amount: 5000, currency: 'eur', status: 'open'})).body
    for (const [name, value] of Object.entries(f)) expect(value?.id ?? value?.payment?.id, name).to.be.a('string')
  })
  after(async function () {
    for (const res of outputs) {
      for (const secret of [test.token, test.secretKey, live.token, live.secretKey]) {
        expect(res.stdout + res.stderr).not.to.include(secret)
      }
    }
    await gw.close()
  })

  it('merchant: a key/value block, and the API object under --json', async function () {
    const [m, res] = await Promise.all([api(test, '/merchant'), cli(test, ['merchant'])])
    expect(block(res.stdout)).to.deep.equal({
      ID: test.merchant.id, Company: 'Demo Merchant', Country: 'DE', 'VAT number': '-', Status: 'active', Mode: 'test', Created: date(m.created),
    })
    expect((await cli(test, ['merchant', '--json'])).json()).to.deep.equal(m)
  })

  it('balance: available and pending per currency, in major units', async function () {
    const [b, res] = await Promise.all([api(test, '/balance'), cli(test, ['balance'])])
    expect(header(res.stdout)).to.deep.equal(['CURRENCY', 'AVAILABLE', 'PENDING'])
    const amount = (list: Array<{amount: number; currency: string}>) => ((list.find((m) => m.currency === 'eur')?.amount ?? 0) / 100).toFixed(2) + ' EUR'
    expect(row(res.stdout, 'EUR')).to.deep.equal(['EUR', amount(b.available), amount(b.pending)])
    expect((await cli(test, ['balance', '--json'])).json()).to.deep.equal(b)
  })

  describe('payments', function () {
    it('list (sandbox shape): amount, refunded, status, card, customer', async function () {
      const res = await cli(test, ['payments', 'list'])
      expect(header(res.stdout)).to.deep.equal(['ID', 'AMOUNT', 'REFUNDED', 'STATUS', 'METHOD', 'CUSTOMER', 'CREATED'])
      const p = f.sale.payment
      expect(p.id).to.match(/^py_/)
      expect(row(res.stdout, p.id)).to.deep.equal([p.id, '50.00 EUR', '10.00 EUR', 'partially_refunded', `${p.card.brand} •••• ${p.card.last4}`, 'Ada Buyer <ada@example.com>', date(p.created)])
      expect(row(res.stdout, f.disputed.payment.id)).to.include('disputed')
      await expectJson(test, ['payments', 'list'], '/payments')
    })

    it('list (live shape): charge ids, payment method type, customer name and email', async function () {
      const res = await cli(live, ['payments', 'list'])
      const p = (await api(live, '/payments')).data[0]
      expect(p.id).to.match(/^ch_/)
      expect(row(res.stdout, p.id)).to.deep.equal([p.id, '40.00 USD', '5.00 USD', 'partially_refunded', p.payment_method_type, 'Ada Buyer <ada@example.com>', date(p.created)])
      await expectJson(live, ['payments', 'list'], '/payments')
    })

    it('list --status (from the query schema) and --limit pass through to the API', async function () {
      await expectJson(live, ['payments', 'list', '--status', 'succeeded'], '/payments?status=succeeded')
      const one = (await cli(test, ['payments', 'list', '--limit', '1', '--json'])).json()
      expect(one).to.deep.equal(await api(test, '/payments?limit=1'))
      expect(one.has_more).to.equal(true)
      expect(rowCount((await cli(test, ['payments', 'list', '--limit', '1'])).stdout)).to.equal(1)
    })

    it('get: both shapes as a key/value block', async function () {
      const p = await api(test, `/payments/${f.sale.payment.id}`)
      const res = await cli(test, ['payments', 'get', p.id])
      expect(block(res.stdout)).to.include({ID: p.id, Status: 'partially_refunded', Amount: '50.00 EUR', Refunded: '10.00 EUR', Mode: 'test', 'Checkout session': p.session_id})
      expect((await cli(test, ['payments', 'get', p.id, '--json'])).json()).to.deep.equal(p)

      const charge = await api(live, `/payments/${(await api(live, '/payments')).data[0].id}`)
      const liveRes = await cli(live, ['payments', 'get', charge.id])
      expect(block(liveRes.stdout)).to.include({ID: charge.id, Amount: '40.00 USD', Refunded: '5.00 USD', Mode: 'live', Charge: charge.charge, Source: charge.source})
      expect((await cli(live, ['payments', 'get', charge.id, '--json'])).json()).to.deep.equal(charge)
    })
  })

  it('refunds list: sandbox refund rows, and in live the refunded charges', async function () {
    const res = await cli(test, ['refunds', 'list'])
    expect(header(res.stdout)).to.deep.equal(['ID', 'PAYMENT', 'REFUNDED', 'STATUS', 'REASON', 'CREATED'])
    expect(row(res.stdout, f.refund.id)).to.deep.equal([f.refund.id, f.sale.payment.id, '10.00 EUR', 'succeeded', 'requested_by_customer', date(f.refund.created)])
    await expectJson(test, ['refunds', 'list'], '/refunds')

    const charge = (await api(live, '/refunds')).data[0]
    const liveRes = await cli(live, ['refunds', 'list'])
    expect(row(liveRes.stdout, charge.id)).to.deep.equal([charge.id, charge.id, '5.00 USD', 'partially_refunded', date(charge.created)])
    await expectJson(live, ['refunds', 'list'], '/refunds')
  })

  it('disputes list: amount, reason, status and the evidence deadline', async function () {
    const d = f.dispute
    const res = await cli(test, ['disputes', 'list'])
    expect(header(res.stdout)).to.deep.equal(['ID', 'PAYMENT', 'AMOUNT', 'REASON', 'STATUS', 'EVIDENCE DUE', 'CREATED'])
    expect(row(res.stdout, d.id)).to.deep.equal([d.id, f.disputed.payment.id, '25.00 EUR', d.reason, d.status, date(d.evidence_due_by), date(d.created)])
    await expectJson(test, ['disputes', 'list'], '/disputes')
  })

  it('payouts list', async function () {
    const p = f.payout
    const res = await cli(test, ['payouts', 'list'])
    expect(header(res.stdout)).to.deep.equal(['ID', 'AMOUNT', 'STATUS', 'ARRIVAL', 'CREATED'])
    expect(row(res.stdout, p.id)).to.deep.equal([p.id, '123.45 EUR', 'paid', date(p.arrival_date), date(p.created)])
    await expectJson(test, ['payouts', 'list'], '/payouts')
  })

  it('invoices list and get (live), and the empty sandbox list', async function () {
    const i = f.invoice
    const res = await cli(live, ['invoices', 'list'])
    expect(header(res.stdout)).to.deep.equal(['ID', 'STATUS', 'DUE', 'PAID', 'CUSTOMER', 'SUBSCRIPTION', 'CREATED'])
    expect(row(res.stdout, i.id)).to.deep.equal([i.id, 'open', '50.00 EUR', '0.00 EUR', date(i.created)])
    await expectJson(live, ['invoices', 'list'], '/invoices')

    const one = await cli(live, ['invoices', 'get', i.id])
    expect(block(one.stdout)).to.deep.equal({
      ID: i.id, Status: 'open', 'Amount due': '50.00 EUR', 'Amount paid': '0.00 EUR', Customer: '-', Subscription: '-',
      Period: `${date(i.period_start)} – ${date(i.period_end)}`, Mode: 'live', Created: date(i.created),
    })
    await expectJson(live, ['invoices', 'get', i.id], `/invoices/${i.id}`)

    const sandbox = await cli(test, ['invoices', 'list'])
    expect(sandbox.stdout).to.equal('ID  STATUS  DUE  PAID  CUSTOMER  SUBSCRIPTION  CREATED\n')
    expect((await cli(test, ['invoices', 'list', '--json'])).json()).to.deep.equal({object: 'list', has_more: false, data: []})
  })

  it('subscriptions list', async function () {
    const s = f.subscription
    const res = await cli(test, ['subscriptions', 'list'])
    expect(header(res.stdout)).to.deep.equal(['ID', 'CUSTOMER', 'STATUS', 'AMOUNT', 'QTY', 'PERIOD END', 'TRIAL END', 'CREATED'])
    expect(row(res.stdout, s.id)).to.deep.equal([s.id, s.customer, 'active', '15.00 EUR', '1', date(s.current_period_end), date(s.created)])
    await expectJson(test, ['subscriptions', 'list'], '/subscriptions')
  })

  it('analytics summary --days: the window, then volume per currency', async function () {
    const a = await api(test, '/analytics/summary?days=7')
    const eur = a.currencies.find((c: {currency: string}) => c.currency === 'eur')
    const major = (n: number) => (n / 100).toFixed(2) + ' EUR'
    const res = await cli(test, ['analytics', 'summary', '--days', '7'])
    const [heading, blank, ...table] = res.stdout.split('\n')
    expect(heading).to.match(/^Last 7 days \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC – \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\), test$/)
    expect(blank).to.equal('')
    expect(header(table.join('\n'))).to.deep.equal(['CURRENCY', 'GROSS', 'REFUNDED', 'NET', 'PAYMENTS', 'REFUNDS', 'AVERAGE'])
    expect(row(table.join('\n'), 'EUR')).to.deep.equal([
      'EUR', major(eur.gross_volume), major(eur.refunded_volume), major(eur.net_volume), String(eur.payment_count), String(eur.refund_count), major(eur.average_payment),
    ])

    // The window moves with the clock: compare everything but its ends.
    const {since, until, ...rest} = (await cli(test, ['analytics', 'summary', '--days', '7', '--json'])).json()
    const {since: _s, until: _u, ...expected} = a
    expect(rest).to.deep.equal(expected)
    expect(until - since).to.equal(7 * 86_400)
  })
})
