/** A whole store sale over HTTP, as an app developer's CI would drive it, in the sandbox and in live. */
import {expect} from 'chai'

import {livePayment, sandboxPayment, sandboxRefund} from '@payapp/sdk/schemas/commerce'
import {eventTypes, readVariant, SALE_EVENTS} from '../helpers/commerce.js'
import {TestGateway} from '../helpers/gateway.js'

describe('gateway: a whole store sale', () => {
  let gw: TestGateway
  before(async () => {
    gw = await TestGateway.start()
  })
  after(() => gw.close())

  for (const env of ['test', 'live'] as const) {
    it(`sells, fulfils and refunds a tracked variant end to end (${env})`, async () => {
      const acct = await gw.account(env)

      // Catalogue: a product with its price, and its default variant stocked with 4 units.
      const product = await acct.store('POST', '/products', {body: {name: 'Ceramic Bowl', price: {currency: 'eur', unit_amount: 3200}}})
      expect(product.status, product.text).to.equal(201)
      const variantId = product.body.variants[0].id
      const stocked = await acct.store('PATCH', `/variants/${variantId}`, {body: {track_inventory: true, stock_qty: 4, sku: 'BOWL-1'}})
      expect(stocked.status, stocked.text).to.equal(200)

      // Store checkout: 3 units held for the buyer.
      const co = await acct.store('POST', '/checkouts', {body: {product_id: product.body.id, variant_id: variantId, quantity: 3, success_url: 'https://shop.example/thanks'}})
      expect(co.status, co.text).to.equal(201)
      expect(co.body).to.include({ok: true, amount: 9600, currency: 'eur'})
      expect(await readVariant(acct, product.body.id, variantId)).to.include({stock_qty: 4, stock_reserved: 3, stock_available: 1})
      const cs = new URL(co.body.checkout_url).searchParams.get('cs')!
      const polled = await gw.request('GET', `/v1/checkout/sessions/${co.body.session_id}?cs=${cs}`)
      expect(polled.body).to.include({status: 'open', success_url: 'https://shop.example/thanks', livemode: env === 'live'})

      // The buyer pays.
      const paid = await gw.admin('POST', `/checkouts/${co.body.session_id}/complete`, {outcome: 'paid', customer_name: 'Grace Buyer', customer_email: 'grace@example.com'})
      expect(paid.status, paid.text).to.equal(200)
      const {payment, order} = paid.body
      expect(payment.id).to.match(env === 'live' ? /^ch_/ : /^py_/)
      expect(await readVariant(acct, product.body.id, variantId)).to.include({stock_qty: 1, stock_reserved: 0, stock_available: 1})

      // The order shows on both APIs.
      const viaApp = await acct.app('GET', '/orders')
      const viaStore = await acct.store('GET', '/orders')
      expect(viaApp.body.data.map((o: any) => o.id)).to.deep.equal([order.id])
      expect(viaStore.body.data).to.deep.equal(viaApp.body.data)
      expect(viaApp.body.data[0]).to.include({status: 'paid', payment: payment.id, sku: 'BOWL-1', quantity: 3, amount: 9600, livemode: env === 'live'})

      // Fulfilment: evidence, shipped, completed.
      const evidence = await acct.app('POST', `/orders/${order.id}/evidence`, {body: {tracking_number: '00340434161094042557', carrier: 'DHL'}})
      expect(evidence.status, evidence.text).to.equal(200)
      expect((await acct.app('PATCH', `/orders/${order.id}`, {body: {status: 'shipped'}})).body.status).to.equal('shipped')
      expect((await acct.store('PATCH', `/orders/${order.id}`, {body: {status: 'completed'}})).body.status).to.equal('completed')

      // The payment as the App API serves it in this environment.
      const read = await acct.app('GET', `/payments/${payment.id}`)
      expect(read.status, read.text).to.equal(200)
      if (env === 'live') expect(livePayment.parse(read.body)).to.include({charge: payment.id, checkout_session: co.body.session_id, status: 'succeeded'})
      else expect(sandboxPayment.parse(read.body)).to.include({session_id: co.body.session_id, status: 'succeeded'})

      // Full refund: stock back, order refunded, refunds read shows it.
      const refunded = await gw.admin('POST', `/payments/${payment.id}/refund`, {reason: 'requested_by_customer'})
      expect(refunded.status, refunded.text).to.equal(201)
      expect(await readVariant(acct, product.body.id, variantId)).to.include({stock_qty: 4, stock_reserved: 0, stock_available: 4})
      expect((await acct.app('GET', `/orders/${order.id}`)).body.status).to.equal('refunded')
      expect((await acct.app('GET', `/payments/${payment.id}`)).body).to.include({status: 'refunded', amount_refunded: 9600})
      const refunds = await acct.app('GET', '/refunds')
      expect(refunds.body.data).to.have.length(1)
      if (env === 'live') expect(livePayment.parse(refunds.body.data[0])).to.include({id: payment.id, amount_refunded: 9600})
      else expect(sandboxRefund.parse(refunds.body.data[0])).to.include({id: refunded.body.refund.id, payment: payment.id, amount: 9600})

      // Every state change left its event, in order.
      expect(await eventTypes(gw, acct.merchant.id, env, SALE_EVENTS)).to.deep.equal([
        'checkout.session.completed',
        'payment.succeeded',
        'store.order.created',
        'store.order.updated', // evidence
        'store.order.updated', // shipped
        'store.order.updated', // completed
        'refund.created',
        'charge.refunded',
        'payment.refunded',
        'store.order.updated', // refunded
      ])
      const completed = (await gw.admin('GET', `/events?merchant=${acct.merchant.id}&env=${env}&type=checkout.session.completed`)).body.data[0]
      expect(completed.livemode).to.equal(env === 'live')
      expect(completed.data.object.line_items[0]).to.include({product_id: product.body.id, variant_id: variantId, sku: 'BOWL-1'})
    })
  }
})
