import {expect} from 'chai'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {date} from '../../src/cli/output.js'
import {runCli, type CliResult} from '../helpers/cli.js'
import {type Account, sellable, type Sellable} from '../helpers/commerce.js'
import {TestGateway} from '../helpers/gateway.js'
import {block, header, row} from '../helpers/human.js'

describe('payapp orders, subscription links and store checkouts', function () {
  this.timeout(60_000)
  let gw: TestGateway
  let test: Account
  let live: Account
  let mug: Sellable
  const outputs: CliResult[] = []

  async function cli(acct: Account, args: string[], env: Record<string, string> = {}): Promise<CliResult> {
    const res = await runCli(args, {env: {PAYAPP_BASE_URL: gw.url, PAYAPP_TOKEN: acct.token, PAYAPP_ENV: acct === live ? 'live' : 'test', ...env}})
    outputs.push(res)
    return res
  }
  const ok = (res: CliResult) => {
    expect(res.code, res.stderr).to.equal(0)
    return res
  }
  const api = async (acct: Account, path: string) => (await acct.app('GET', path)).body

  before(async function () {
    gw = await TestGateway.start()
    test = await gw.account('test')
    live = await gw.account('live')
    mug = await sellable(test, {unit_amount: 1800, currency: 'eur', name: 'Ceramic Mug', sku: 'MUG-1'})
  })
  after(async function () {
    for (const res of outputs) {
      for (const secret of [test.token, test.secretKey, live.token, live.secretKey]) expect(res.stdout + res.stderr).not.to.include(secret)
    }
    await gw.close()
  })

  describe('orders', function () {
    let order: any

    it('create: a sandbox fixture from derived flags, shown as a key/value block', async function () {
      const res = ok(await cli(test, ['orders', 'create', '--product-id', mug.product.id, '--quantity', '2', '--customer-name', 'Ann Buyer', '--customer-email', 'ann@example.com']))
      order = (await api(test, '/orders')).data[0]
      expect(block(res.stdout)).to.deep.equal({
        ID: order.id, Status: 'paid', Item: '2 × Ceramic Mug', Product: mug.product.id, Variant: mug.variant.id, SKU: 'MUG-1', Amount: '36.00 EUR',
        Customer: 'Ann Buyer <ann@example.com>', Payment: '-', 'Checkout session': '-', Mode: 'test (fixture)', Created: date(order.created),
        Shipped: '-', Completed: '-', Canceled: '-',
      })

      const json = ok(await cli(test, ['orders', 'create', '--product-id', mug.product.id, '--status', 'pending', '--json'])).json()
      expect(json).to.include({object: 'order', status: 'pending', quantity: 1, amount: 1800, fixture: true})
      expect(json).to.deep.equal(await api(test, `/orders/${json.id}`))
    })

    it('create is sandbox only: a live token gets 400 livemode_forbidden (exit 6)', async function () {
      const res = await cli(live, ['orders', 'create', '--product-id', mug.product.id])
      expect(res.code).to.equal(6)
      expect(res.stderr).to.match(/^livemode_forbidden: .+ \(req_\w+\)\n$/)
    })

    it('list and get', async function () {
      const list = ok(await cli(test, ['orders', 'list']))
      expect(header(list.stdout)).to.deep.equal(['ID', 'STATUS', 'ITEM', 'AMOUNT', 'CUSTOMER', 'EVIDENCE', 'CREATED'])
      expect(row(list.stdout, order.id)).to.deep.equal([order.id, 'paid', '2 × Ceramic Mug (MUG-1)', '36.00 EUR', 'Ann Buyer <ann@example.com>', '0', date(order.created)])
      expect(ok(await cli(test, ['orders', 'list', '--json'])).json()).to.deep.equal(await api(test, '/orders'))

      expect(block(ok(await cli(test, ['orders', 'get', order.id])).stdout)).to.include({ID: order.id, Status: 'paid'})
      expect(ok(await cli(test, ['orders', 'get', order.id, '--json'])).json()).to.deep.equal(await api(test, `/orders/${order.id}`))

      const missing = await cli(test, ['orders', 'get', 'ord_missing', '--json'])
      expect(missing.code).to.equal(5)
      expect(missing.json().error).to.include({type: 'not_found', status: 404})
    })

    it('update --status shipped needs evidence first (409, exit 6)', async function () {
      const res = await cli(test, ['orders', 'update', order.id, '--status', 'shipped'])
      expect(res.code).to.equal(6)
      expect(res.stdout).to.equal('')
      expect(res.stderr).to.match(new RegExp(`^evidence_required: Attach delivery evidence \\(POST /orders/${order.id}/evidence\\) before marking the order shipped \\(attach it first: payapp orders evidence add ORDER_ID .+\\) \\(req_\\w+\\)\\n$`))
    })

    it('evidence add: a tracking number with its carrier, then the order ships', async function () {
      const res = ok(await cli(test, ['orders', 'evidence', 'add', order.id, '--tracking-number', '1Z999AA10123456784', '--carrier', 'UPS']))
      const [fields, evidence] = res.stdout.split('\n\n')
      expect(block(fields)).to.include({ID: order.id, Status: 'paid'})
      const e = (await api(test, `/orders/${order.id}`)).evidence[0]
      expect(evidence.split('\n')[0]).to.equal('Evidence')
      expect(row(evidence.split('\n').slice(1).join('\n'), e.id)).to.deep.equal([e.id, 'tracking', 'UPS 1Z999AA10123456784', date(e.created)])

      const shipped = ok(await cli(test, ['orders', 'update', order.id, '--status', 'shipped', '--json'])).json()
      expect(shipped).to.include({id: order.id, status: 'shipped'})
      expect(shipped).to.deep.equal(await api(test, `/orders/${order.id}`))
    })

    it('evidence add --file uploads a local file first and sends its storage path; a storage path passes through', async function () {
      const dir = mkdtempSync(join(tmpdir(), 'payapp-evidence-'))
      const path = join(dir, 'receipt.pdf')
      writeFileSync(path, '%PDF-1.4\nsigned delivery receipt\n')
      const res = ok(await cli(test, ['orders', 'evidence', 'add', order.id, '--file', path, '--json']))
      const file = res.json().evidence.at(-1)
      expect(file).to.include({type: 'file'})
      expect(file.file).to.match(/^files\/.+\/receipt\.pdf$/)

      const again = ok(await cli(test, ['orders', 'evidence', 'add', order.id, '--file', file.file, '--json'])).json()
      expect(again.evidence.at(-1)).to.include({type: 'file', file: file.file})

      const note = ok(await cli(test, ['orders', 'evidence', 'add', order.id, '--note', 'Handed over in person', '--json'])).json()
      expect(note.evidence.at(-1)).to.include({type: 'note', note: 'Handed over in person'})
    })

    it('evidence add with nothing to add, or a tracking number without a carrier, is a 400 (exit 6)', async function () {
      const none = await cli(test, ['orders', 'evidence', 'add', order.id, '--json'])
      expect(none.code).to.equal(6)
      expect(none.json().error).to.include({status: 400})
      const half = await cli(test, ['orders', 'evidence', 'add', order.id, '--tracking-number', '1Z', '--json'])
      expect(half.code).to.equal(6)
      expect(half.json().error).to.include({param: 'carrier', status: 400})
    })
  })

  describe('subscription links (live installations only)', function () {
    let link: any

    it('create from derived flags (--amount --currency --interval …), shown as a block', async function () {
      const res = ok(await cli(live, ['subscription-links', 'create', '--amount', '990', '--currency', 'eur', '--interval', 'month', '--name', 'Pro plan', '--trial-period-days', '14', '--metadata', 'plan=pro']))
      link = (await api(live, '/subscription_links')).data[0]
      expect(block(res.stdout)).to.deep.equal({
        ID: link.id, Name: 'Pro plan', Description: '-', Price: '9.90 EUR / month', Trial: '14 days', Active: 'yes', Archived: '-', URL: link.url,
        Metadata: 'plan=pro', Created: date(link.created), Updated: date(link.updated),
      })
      const yearly = ok(await cli(live, ['subscription-links', 'create', '--amount', '9900', '--currency', 'eur', '--interval', 'year', '--name', 'Yearly', '--json'])).json()
      expect(yearly).to.include({amount: 9900, currency: 'eur', interval: 'year', interval_count: 1, name: 'Yearly'})
      expect(yearly).to.deep.equal(await api(live, `/subscription_links/${yearly.id}`))
    })

    it('list and get', async function () {
      const list = ok(await cli(live, ['subscription-links', 'list']))
      expect(header(list.stdout)).to.deep.equal(['ID', 'NAME', 'PRICE', 'TRIAL', 'ACTIVE', 'URL', 'CREATED'])
      expect(row(list.stdout, link.id)).to.deep.equal([link.id, 'Pro plan', '9.90 EUR / month', '14 days', 'yes', link.url, date(link.created)])
      expect(ok(await cli(live, ['subscription-links', 'list', '--json'])).json()).to.deep.equal(await api(live, '/subscription_links'))
      expect(block(ok(await cli(live, ['subscription-links', 'get', link.id])).stdout)).to.include({ID: link.id, Name: 'Pro plan'})
      expect(ok(await cli(live, ['subscription-links', 'get', link.id, '--json'])).json()).to.deep.equal(await api(live, `/subscription_links/${link.id}`))
    })

    it('update (--no-active, a new name) and archive', async function () {
      const updated = ok(await cli(live, ['subscription-links', 'update', link.id, '--name', 'Pro plan 2026', '--no-active', '--json'])).json()
      expect(updated).to.include({id: link.id, name: 'Pro plan 2026', active: false})
      expect(updated).to.deep.equal(await api(live, `/subscription_links/${link.id}`))

      // Fixed once created: no flag for them, as for a price's amount.
      const immutable = await cli(live, ['subscription-links', 'update', link.id, '--amount', '1990'])
      expect(immutable.code).to.equal(2)
      expect(immutable.stderr).to.include('--amount')

      const archived = ok(await cli(live, ['subscription-links', 'archive', link.id]))
      expect(block(archived.stdout)).to.include({ID: link.id, Name: 'Pro plan 2026', Active: 'no'})
      expect(block(archived.stdout).Archived).to.match(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/)
    })

    it('a test installation gets 400 livemode_required (exit 6)', async function () {
      const res = await cli(test, ['subscription-links', 'create', '--amount', '990', '--currency', 'eur', '--interval', 'month', '--json'])
      expect(res.code).to.equal(6)
      expect(res.json().error).to.include({code: 'livemode_required', status: 400})
    })
  })

  describe('checkouts create (store API, secret key)', function () {
    it('creates a session for a product or variant with the secret key', async function () {
      const res = ok(await cli(test, ['checkouts', 'create', '--product-id', mug.product.id, '--quantity', '2'], {PAYAPP_SECRET_KEY: test.secretKey}))
      const fields = block(res.stdout)
      expect(fields.Session).to.match(/^cs_/)
      expect(fields).to.include({Amount: '36.00 EUR'})
      expect(fields['Checkout URL']).to.include(fields.Session)
      expect(fields['Embed URL']).to.equal(fields['Checkout URL'].replace('?', '/embed?'))
      expect(fields['Expires at']).to.match(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/)

      const json = ok(await cli(test, ['checkouts', 'create', '--product-id', mug.product.id, '--variant-id', mug.variant.id, '--json'], {PAYAPP_SECRET_KEY: test.secretKey})).json()
      expect(json).to.include({ok: true, amount: 1800, currency: 'eur'})
      expect(Object.keys(json).sort()).to.deep.equal(['amount', 'checkout_url', 'currency', 'embed_url', 'expires_at', 'ok', 'session_id'])
    })

    it('without a secret key fails naming how to provide one (exit 3)', async function () {
      const res = await cli(test, ['checkouts', 'create', '--product-id', mug.product.id])
      expect(res.code).to.equal(3)
      expect(res.stderr).to.equal('Error: No test secret key for profile "default": run "payapp login --env test --secret-key …" or set PAYAPP_SECRET_KEY\n')
    })

    it('an unknown product is a 404 product_unavailable (exit 5)', async function () {
      const res = await cli(test, ['checkouts', 'create', '--product-id', 'prod_missing', '--json'], {PAYAPP_SECRET_KEY: test.secretKey})
      expect(res.code).to.equal(5)
      expect(res.json().error).to.include({code: 'product_unavailable', status: 404})
    })
  })
})
