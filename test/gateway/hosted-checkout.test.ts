import {expect} from 'chai'

import {TestGateway} from '../helpers/gateway.js'
import {checkout, readVariant, sellable, type Account} from '../helpers/commerce.js'

/** The hosted page behind `checkout_url`: what a buyer's browser sees and does. */
describe('gateway: hosted checkout page', () => {
  let gw: TestGateway
  let acct: Account
  before(async () => {
    gw = await TestGateway.start()
    acct = await gw.account('test')
  })
  after(() => gw.close())

  const form = (fields: Record<string, string>) => ({
    rawBody: new URLSearchParams(fields).toString(),
    headers: {'content-type': 'application/x-www-form-urlencoded'},
  })
  const urlOf = (checkoutUrl: string) => {
    const u = new URL(checkoutUrl)
    return {page: u.pathname + u.search, pay: `${u.pathname}/pay${u.search}`}
  }

  it('shows the line item and the total, pays with the test card, and the secret dies with the open state', async () => {
    const item = await sellable(acct, {unit_amount: 1250, stock: 3, sku: 'MUG-1', name: 'Mug <b>'})
    const co = await checkout(acct, {product_id: item.product.id, variant_id: item.variant.id, quantity: 2})
    const {page, pay} = urlOf(co.checkout_url)
    expect(co.checkout_url.startsWith(gw.url)).to.equal(true)

    const shown = await gw.request('GET', page)
    expect(shown.status).to.equal(200)
    expect(shown.headers.get('content-type')).to.match(/^text\/html/)
    expect(shown.text).to.include('€25.00')
    expect(shown.text).to.include('Mug &lt;b&gt;') // escaped, never markup
    expect(shown.text).to.include('MUG-1')
    const embed = await gw.request('GET', page.replace('?', '/embed?'))
    expect(embed.status).to.equal(200)
    expect(embed.text).to.include('€25.00')

    const {rawBody, headers} = form({outcome: 'paid', customer_name: 'Ada Buyer', customer_email: 'ada@example.com'})
    const paid = await fetch(gw.url + pay, {method: 'POST', redirect: 'manual', headers, body: rawBody})
    // A store session without success_url returns the buyer to the storefront (spec: store checkouts).
    expect(paid.status).to.equal(303)
    expect(paid.headers.get('location')).to.match(/\/s\/[a-z0-9-]+$/)

    const session = await gw.request('GET', `/v1/checkout/sessions/${co.session_id}`, {token: acct.secretKey})
    expect(session.body.status).to.equal('complete')
    const orders = await acct.app('GET', '/orders')
    expect(orders.body.data[0]).to.include({checkout_session: co.session_id, status: 'paid', quantity: 2})
    const variant = await readVariant(acct, item.product.id, item.variant.id)
    expect(variant).to.include({stock_qty: 1, stock_reserved: 0})

    expect((await gw.request('GET', page)).status).to.equal(410)
    expect((await gw.request('POST', pay, form({outcome: 'paid', customer_name: 'Ada', customer_email: 'ada@example.com'}))).status).to.equal(410)
  })

  it('keeps the session open after a decline and redirects to success_url after payment', async () => {
    const item = await sellable(acct, {unit_amount: 900})
    const co = await checkout(acct, {product_id: item.product.id, success_url: 'https://shop.example.com/thanks'})
    const {pay} = urlOf(co.checkout_url)
    const declined = await gw.request('POST', pay, form({outcome: 'declined', customer_name: 'Ada', customer_email: 'ada@example.com'}))
    expect(declined.status).to.equal(402)
    expect(declined.text).to.include('declined')
    const failed = await acct.app('GET', '/payments')
    expect(failed.body.data[0]).to.include({status: 'failed', failure_code: 'card_declined'})

    const {rawBody, headers} = form({outcome: 'paid', customer_name: 'Ada', customer_email: 'ada@example.com'})
    const res = await fetch(gw.url + pay, {method: 'POST', redirect: 'manual', headers, body: rawBody})
    expect(res.status).to.equal(303)
    expect(res.headers.get('location')).to.equal('https://shop.example.com/thanks')
  })

  it('refuses a wrong client secret, a bad form and an unknown session without paying', async () => {
    const item = await sellable(acct, {unit_amount: 900})
    const co = await checkout(acct, {product_id: item.product.id})
    const {page, pay} = urlOf(co.checkout_url)
    expect((await gw.request('GET', page.replace(/cs=[^&]+/, 'cs=cs_secret_wrong'))).status).to.equal(404)
    expect((await gw.request('GET', page.replace(/\?.*/, ''))).status).to.equal(404)
    expect((await gw.request('GET', '/checkout/cs_nope?cs=x')).status).to.equal(404)
    const bad = await gw.request('POST', pay, form({outcome: 'paid', customer_name: 'A', customer_email: 'not-an-email'}))
    expect(bad.status).to.equal(400)
    const session = await gw.request('GET', `/v1/checkout/sessions/${co.session_id}`, {token: acct.secretKey})
    expect(session.body.status).to.equal('open')
  })

  it('answers a JSON form with non-text fields, or a repeated cs, as a bad request rather than a crash', async () => {
    const item = await sellable(acct, {unit_amount: 900})
    const co = await checkout(acct, {product_id: item.product.id})
    const {page, pay} = urlOf(co.checkout_url)
    const bad = await gw.request('POST', pay, {body: {outcome: 'paid', customer_name: 123, customer_email: ['ada@example.com']}})
    expect(bad.status, bad.text).to.equal(400)
    expect((await gw.request('GET', `${page}&cs=again`)).status).to.equal(404)
    const session = await gw.request('GET', `/v1/checkout/sessions/${co.session_id}`, {token: acct.secretKey})
    expect(session.body.status).to.equal('open')
  })
})
