import {expect} from 'chai'

import {TestGateway} from '../helpers/gateway.js'
import {checkout, optionedVariant, readVariant, sellable, type Account} from '../helpers/commerce.js'
import {expectError} from '../helpers/gateway.js'

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
    expect(shown.text).to.include('€12.50 × 2') // the unit price and quantity
    expect(shown.text, 'the SKU is for the merchant, not the buyer').not.to.include('MUG-1')
    const embed = await gw.request('GET', page.replace('?', '/embed?'))
    expect(embed.status).to.equal(200)
    expect(embed.text).to.include('€25.00')

    const {rawBody, headers} = form({outcome: 'paid', customer_name: 'Ada Buyer', customer_email: 'ada@example.com'})
    const paid = await fetch(gw.url + pay, {method: 'POST', redirect: 'manual', headers, body: rawBody})
    // A store session without success_url returns the buyer to the storefront (spec: store checkouts).
    expect(paid.status).to.equal(303)
    const landing = paid.headers.get('location')!
    expect(landing).to.match(/\/s\/[a-z0-9-]+\/success\?env=test$/)
    const thanks = await fetch(landing)
    expect(thanks.status).to.equal(200)
    expect(await thanks.text()).to.include('Thank you for your order')

    const session = await gw.request('GET', `/v1/checkout/sessions/${co.session_id}`, {token: acct.secretKey})
    expect(session.body.status).to.equal('complete')
    const orders = await acct.app('GET', '/orders')
    expect(orders.body.data[0]).to.include({checkout_session: co.session_id, status: 'paid', quantity: 2})
    const variant = await readVariant(acct, item.product.id, item.variant.id)
    expect(variant).to.include({stock_qty: 1, stock_reserved: 0})

    expect((await gw.request('GET', page)).status).to.equal(410)
    expect((await gw.request('POST', pay, form({outcome: 'paid', customer_name: 'Ada', customer_email: 'ada@example.com'}))).status).to.equal(410)
    // The embed page's fetch (Accept: application/json) gets the API's error envelope, request id included.
    const asJson = form({outcome: 'paid', customer_name: 'Ada', customer_email: 'ada@example.com'})
    expectError(await gw.request('POST', pay, {...asJson, headers: {...asJson.headers, accept: 'application/json'}}), 410, 'session_expired')
  })

  it('keeps the session open after a decline and redirects to success_url after payment', async () => {
    const item = await sellable(acct, {unit_amount: 900})
    const co = await checkout(acct, {product_id: item.product.id, success_url: 'https://shop.example.com/thanks'})
    const {pay} = urlOf(co.checkout_url)
    const decline = form({outcome: 'declined', customer_name: 'Ada', customer_email: 'ada@example.com'})
    const declined = await fetch(gw.url + pay, {method: 'POST', redirect: 'manual', headers: decline.headers, body: decline.rawBody})
    // Post/redirect/get: the browser lands on a GET, so a reload shows the notice again without paying again.
    expect(declined.status).to.equal(303)
    const notice = declined.headers.get('location')!
    for (let reload = 0; reload < 2; reload++) {
      const shown = await gw.request('GET', notice)
      expect(shown.status).to.equal(200)
      expect(shown.text).to.include('Your card was declined')
    }
    const failed = await acct.app('GET', '/payments')
    expect(failed.body.data[0]).to.include({status: 'failed', failure_code: 'card_declined'})
    expect(failed.body.data.filter((p: any) => p.session_id === co.session_id)).to.have.length(1)

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
    // A form that lost its button's value never pays by default.
    expect((await gw.request('POST', pay, form({customer_name: 'Ada', customer_email: 'ada@example.com'}))).status).to.equal(400)
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

  it('shows a buyer the store, the variant as "L / Blue", the unit price and a readable expiry', async () => {
    const item = await optionedVariant(acct, {name: 'T-Shirt', unit_amount: 1250, size: 'L', color: 'Blue', sku: 'TSHIRT-L-BLUE'})
    const co = await checkout(acct, {product_id: item.product.id, variant_id: item.variant.id, quantity: 2})
    const shown = await gw.request('GET', urlOf(co.checkout_url).page)
    expect(shown.text).to.include('T-Shirt')
    expect(shown.text).to.include('L / Blue')
    expect(shown.text).to.include('€12.50 × 2')
    expect(shown.text).to.include('€25.00')
    expect(shown.text).not.to.include('TSHIRT-L-BLUE')
    const store = await acct.store('GET', '/store')
    expect(shown.text).to.include(store.body.display_name)
    expect(shown.text).to.include('TEST MODE')
    expect(shown.text).to.match(/expires in 30 minutes \(\d\d:\d\d UTC\)/)
    expect(shown.text).not.to.match(/\d{4}-\d\d-\d\dT\d\d:\d\d/) // no raw ISO timestamp
  })

  it('offers cancel_url as "Back to store", and the embed page targets the top window', async () => {
    const item = await sellable(acct, {unit_amount: 900})
    const co = await checkout(acct, {product_id: item.product.id, cancel_url: 'https://shop.example.com/cart?x=1&y=2'})
    const {page} = urlOf(co.checkout_url)
    const hosted = await gw.request('GET', page)
    expect(hosted.text).to.include('<a class="back" href="https://shop.example.com/cart?x=1&amp;y=2">Back to store</a>')
    const embed = await gw.request('GET', urlOf(co.embed_url).page)
    expect(embed.text).to.include('href="https://shop.example.com/cart?x=1&amp;y=2" target="_top">Back to store</a>')
    expect(embed.text).to.match(/<form class="pay-form"[^>]* target="_top"/)
    expect(embed.text).to.include('postMessage')
  })

  it('sends a CSP, nosniff and no referrer on every page, and refuses framing except on the embed page', async () => {
    const item = await sellable(acct, {unit_amount: 900})
    const co = await checkout(acct, {product_id: item.product.id, success_url: 'https://shop.example.com/thanks'})
    expect(co.embed_url).to.equal(co.checkout_url.replace('?', '/embed?'))
    const store = await acct.store('GET', '/store')
    const slug = store.body.slug
    const pages = {
      checkout: urlOf(co.checkout_url).page,
      embed: urlOf(co.embed_url).page,
      storefront: `/s/${slug}?env=test`,
      success: `/s/${slug}/success`,
      cancel: `/s/${slug}/cancel`,
      unknownStore: '/s/no-such-store',
      endedCheckout: '/checkout/cs_nope?cs=x',
    }
    for (const [name, path] of Object.entries(pages)) {
      const res = await gw.request('GET', path)
      expect(res.headers.get('content-type'), name).to.match(/^text\/html/)
      expect(res.headers.get('x-content-type-options'), name).to.equal('nosniff')
      expect(res.headers.get('referrer-policy'), name).to.equal('no-referrer')
      const csp = res.headers.get('content-security-policy') ?? ''
      expect(csp, name).to.include("default-src 'none'")
      expect(csp, name).to.match(/script-src 'nonce-[^']+'/)
      expect(csp, name).not.to.include('unsafe-inline')
      if (name === 'embed') {
        expect(csp, name).not.to.include('frame-ancestors')
        expect(res.headers.get('x-frame-options'), name).to.equal(null)
      } else {
        expect(csp, name).to.include("frame-ancestors 'none'")
        expect(res.headers.get('x-frame-options'), name).to.equal('DENY')
      }
    }
    // The success URL's origin may receive the redirect after the form's POST.
    const checkoutCsp = (await gw.request('GET', pages.checkout)).headers.get('content-security-policy')
    expect(checkoutCsp).to.include("form-action 'self' https://shop.example.com")
  })

  it('serves the storefront the default URLs point to: the store name and its visible products with prices', async () => {
    await sellable(acct, {unit_amount: 1999, name: 'Visible <Mug>'})
    const hidden = await sellable(acct, {unit_amount: 1500, name: 'Hidden Hat'})
    expect((await acct.store('PATCH', `/products/${hidden.product.id}`, {body: {store_visible: false}})).status).to.equal(200)
    const store = (await acct.store('GET', '/store')).body
    const page = await gw.request('GET', `/s/${store.slug}?env=test`)
    expect(page.status).to.equal(200)
    expect(page.text).to.include(store.display_name)
    expect(page.text).to.include('Visible &lt;Mug&gt;')
    expect(page.text).to.include('€19.99')
    expect(page.text).not.to.include('Hidden Hat')
    // The live storefront shows the live catalogue, which has none of the sandbox's products.
    const live = await gw.request('GET', `/s/${store.slug}`)
    expect(live.status).to.equal(200)
    expect(live.text).not.to.include('Visible')
    const cancel = await gw.request('GET', `/s/${store.slug}/cancel?env=test`)
    expect(cancel.text).to.include('nothing was charged')
    expect(cancel.text).to.include(`href="/s/${store.slug}?env=test"`)
    expect((await gw.request('GET', '/s/no-such-store')).status).to.equal(404)
  })

  it('accepts http success and cancel URLs for loopback hosts in test mode only, and says "must be https" otherwise', async () => {
    const item = await sellable(acct, {unit_amount: 900})
    const local = {product_id: item.product.id, success_url: 'http://127.0.0.1:3000/thanks', cancel_url: 'http://localhost:3000/cart'}
    const co = await checkout(acct, local)
    const session = await gw.request('GET', `/v1/checkout/sessions/${co.session_id}`, {token: acct.secretKey})
    expect(session.body).to.include({success_url: local.success_url, cancel_url: local.cancel_url})
    expect(co.embed_url).to.match(/\/embed\?cs=/)

    const remote = expectError(await acct.store('POST', '/checkouts', {body: {...local, success_url: 'http://shop.example.com/thanks'}}), 400, 'url_not_https')
    expect(remote.param).to.equal('success_url')
    expect(remote.message).to.include('must be https')
    expectError(await acct.store('POST', '/checkouts', {body: {...local, cancel_url: 'javascript:alert(1)'}}), 400, 'url_invalid')
    expectError(await acct.store('POST', '/checkouts', {body: {...local, success_url: 'https://shop.example.com/\u0000x'}}), 400, 'url_invalid')

    const live = await gw.account('live')
    const liveItem = await sellable(live, {unit_amount: 900})
    const refused = expectError(await live.store('POST', '/checkouts', {body: {...local, product_id: liveItem.product.id}}), 400, 'url_not_https')
    expect(refused.message).to.include('must be https')
  })
})
