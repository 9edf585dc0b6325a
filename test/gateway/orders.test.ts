import {expect} from 'chai'

import {order as orderSchema} from '@payapp/sdk/schemas/commerce'
import {eventTypes, readVariant, sale, sellable, type Account} from '../helpers/commerce.js'
import {expectError, TestGateway} from '../helpers/gateway.js'

describe('gateway store orders', () => {
  let gw: TestGateway
  before(async () => {
    gw = await TestGateway.start()
  })
  after(() => gw.close())

  const setStatus = (acct: Account, id: string, status: string) => acct.store('PATCH', `/orders/${id}`, {body: {status}})
  const addEvidence = (acct: Account, id: string, body: Record<string, unknown>) => acct.app('POST', `/orders/${id}/evidence`, {body})

  describe('reads', () => {
    it('shows the order of a store sale on the App API and the store API alike', async () => {
      const acct = await gw.account()
      const item = await sellable(acct, {unit_amount: 1800, sku: 'MUG-1'})
      const {order, payment, session} = await sale(gw, acct, item, 2)
      const viaApp = await acct.app('GET', `/orders/${order.id}`)
      const viaStore = await acct.store('GET', `/orders/${order.id}`)
      expect(viaApp.status, viaApp.text).to.equal(200)
      expect(viaStore.body).to.deep.equal(viaApp.body)
      const parsed = orderSchema.parse(viaApp.body)
      expect(parsed).to.include({
        object: 'order',
        livemode: false,
        source: 'store',
        status: 'paid',
        checkout_session: session.id,
        payment: payment.id,
        product_id: item.product.id,
        variant_id: item.variant.id,
        sku: 'MUG-1',
        quantity: 2,
        amount: 3600,
        currency: 'eur',
        fixture: false,
      })
      expect(parsed.customer).to.deep.equal({name: 'Ada Buyer', email: 'ada@example.com'})
    })

    it('lists orders newest first with limit, offset and has_more', async () => {
      const acct = await gw.account()
      const item = await sellable(acct)
      const ids: string[] = []
      for (let i = 0; i < 3; i++) ids.push((await sale(gw, acct, item)).order.id)
      const first = await acct.app('GET', '/orders?limit=2')
      expect(first.body.object).to.equal('list')
      expect(first.body.data.map((o: any) => o.id)).to.deep.equal([ids[2], ids[1]])
      expect(first.body.has_more).to.equal(true)
      const rest = await acct.store('GET', '/orders?limit=2&offset=2')
      expect(rest.body.data.map((o: any) => o.id)).to.deep.equal([ids[0]])
      expect(rest.body.has_more).to.equal(false)
    })

    it("answers 404 for another merchant's or environment's order", async () => {
      const acct = await gw.account()
      const {order} = await sale(gw, acct, await sellable(acct))
      const other = await gw.account()
      expectError(await other.app('GET', `/orders/${order.id}`), 404, 'resource_missing')
      const live = await gw.installation(acct.merchant.id, 'live')
      expectError(await gw.request('GET', `/v1/app/orders/${order.id}`, {token: live.token}), 404, 'resource_missing')
      expectError(await other.store('PATCH', `/orders/${order.id}`, {body: {status: 'processing'}}), 404, 'resource_missing')
    })
  })

  describe('fulfilment', () => {
    it('moves paid → processing → shipped → completed, shipped and completed only with evidence', async () => {
      const acct = await gw.account()
      const {order} = await sale(gw, acct, await sellable(acct))
      const processing = await setStatus(acct, order.id, 'processing')
      expect(processing.status, processing.text).to.equal(200)
      expect(processing.body.status).to.equal('processing')

      const err = expectError(await setStatus(acct, order.id, 'shipped'), 409, 'evidence_required')
      expect(err.param).to.equal('status')
      const withEvidence = await addEvidence(acct, order.id, {tracking_number: '1Z999AA10123456784', carrier: 'UPS'})
      expect(withEvidence.status, withEvidence.text).to.equal(200)
      expect(withEvidence.body.evidence).to.have.length(1)
      expect(withEvidence.body.evidence[0]).to.include({object: 'order_evidence', type: 'tracking', tracking_number: '1Z999AA10123456784', carrier: 'UPS'})

      const shipped = await setStatus(acct, order.id, 'shipped')
      expect(shipped.body).to.include({status: 'shipped'})
      expect(shipped.body.shipped_at).to.be.a('number')
      const completed = await setStatus(acct, order.id, 'completed')
      expect(completed.body).to.include({status: 'completed'})
      expect(completed.body.completed_at).to.be.a('number')
      expect((await acct.app('GET', `/orders/${order.id}`)).body.status).to.equal('completed')
    })

    it('refuses moves the table does not allow with 409 invalid_status_transition', async () => {
      const acct = await gw.account()
      const item = await sellable(acct)
      const {order} = await sale(gw, acct, item)
      await addEvidence(acct, order.id, {note: 'Handed over at the counter'})
      expect((await setStatus(acct, order.id, 'shipped')).status).to.equal(200)
      for (const status of ['processing', 'canceled', 'shipped']) {
        expect(expectError(await setStatus(acct, order.id, status), 409, 'invalid_status_transition').param).to.equal('status')
      }
      expect((await setStatus(acct, order.id, 'completed')).status).to.equal(200)
      expectError(await setStatus(acct, order.id, 'canceled'), 409, 'invalid_status_transition')

      const second = (await sale(gw, acct, item)).order
      const canceled = await setStatus(acct, second.id, 'canceled')
      expect(canceled.body).to.include({status: 'canceled'})
      expect(canceled.body.canceled_at).to.be.a('number')
      expectError(await setStatus(acct, second.id, 'processing'), 409, 'invalid_status_transition')
      expectError(await setStatus(acct, second.id, 'paid'), 400, 'parameter_invalid_enum')
    })

    it('lets a paid order complete directly once evidence is attached (digital delivery)', async () => {
      const acct = await gw.account()
      const {order} = await sale(gw, acct, await sellable(acct))
      expectError(await setStatus(acct, order.id, 'completed'), 409, 'evidence_required')
      await addEvidence(acct, order.id, {note: 'Download link e-mailed'})
      const done = await setStatus(acct, order.id, 'completed')
      expect(done.body).to.include({status: 'completed', shipped_at: null})
    })

    it('accepts a file the merchant uploaded as evidence, and only such a file', async () => {
      const acct = await gw.account()
      const {order} = await sale(gw, acct, await sellable(acct))
      const form = new FormData()
      form.append('file', new Blob([Buffer.from('%PDF-1.4 proof of delivery')], {type: 'application/pdf'}), 'pod.pdf')
      const upload = await acct.app('POST', '/files', {rawBody: form})
      expect(upload.status, upload.text).to.equal(201)

      const other = await gw.account()
      const foreign = new FormData()
      foreign.append('file', new Blob([Buffer.from('x')], {type: 'text/plain'}), 'x.txt')
      const foreignUpload = await other.app('POST', '/files', {rawBody: foreign})

      expect(expectError(await addEvidence(acct, order.id, {file: 'files/never/uploaded.pdf'}), 400, 'file_not_found').param).to.equal('file')
      expectError(await addEvidence(acct, order.id, {file: foreignUpload.body.path}), 400, 'file_not_found')
      const res = await addEvidence(acct, order.id, {file: upload.body.path})
      expect(res.status, res.text).to.equal(200)
      expect(res.body.evidence[0]).to.include({type: 'file', file: upload.body.path})
    })

    it('validates evidence bodies', async () => {
      const acct = await gw.account()
      const {order} = await sale(gw, acct, await sellable(acct))
      expect(expectError(await addEvidence(acct, order.id, {tracking_number: '123'}), 400, 'parameter_missing').param).to.equal('carrier')
      expectError(await addEvidence(acct, order.id, {}), 400, 'parameter_missing')
      expectError(await addEvidence(acct, 'ord_missing', {note: 'left at the door'}), 404, 'resource_missing')
    })

    it('emits store.order.updated for every change', async () => {
      const acct = await gw.account()
      const {order} = await sale(gw, acct, await sellable(acct))
      await setStatus(acct, order.id, 'processing')
      await addEvidence(acct, order.id, {tracking_number: 'JJD000390007', carrier: 'DHL'})
      await setStatus(acct, order.id, 'shipped')
      expectError(await setStatus(acct, order.id, 'processing'), 409, 'invalid_status_transition')
      expect(await eventTypes(gw, acct.merchant.id, 'test', ['store.'])).to.deep.equal([
        'store.order.created',
        'store.order.updated',
        'store.order.updated',
        'store.order.updated',
      ])
    })

    it('needs orders:write to change an order and orders:read to read one', async () => {
      const acct = await gw.account()
      const {order} = await sale(gw, acct, await sellable(acct))
      const reader = await gw.installation(acct.merchant.id, 'test', ['orders:read'])
      const read = await gw.request('GET', `/v1/app/orders/${order.id}`, {token: reader.token})
      expect(read.status).to.equal(200)
      const write = await gw.request('PATCH', `/v1/app/orders/${order.id}`, {token: reader.token, body: {status: 'processing'}})
      expect(expectError(write, 403).type).to.equal('insufficient_scope')
    })
  })

  describe('POST /orders (sandbox fixtures)', () => {
    it('creates a paid fixture order without payment and without touching stock', async () => {
      const acct = await gw.account()
      const item = await sellable(acct, {unit_amount: 700, stock: 5, sku: 'FIX-1'})
      const res = await acct.app('POST', '/orders', {body: {product_id: item.product.id, quantity: 3}})
      expect(res.status, res.text).to.equal(201)
      expect(orderSchema.parse(res.body)).to.include({
        status: 'paid',
        fixture: true,
        payment: null,
        checkout_session: null,
        product_id: item.product.id,
        variant_id: item.variant.id,
        sku: 'FIX-1',
        quantity: 3,
        amount: 2100,
      })
      expect(await readVariant(acct, item.product.id, item.variant.id)).to.include({stock_qty: 5, stock_reserved: 0})
      expect((await acct.store('GET', `/orders/${res.body.id}`)).body.id).to.equal(res.body.id)
      expect(await eventTypes(gw, acct.merchant.id, 'test', ['store.'])).to.deep.equal(['store.order.created'])
      const pending = await acct.app('POST', '/orders', {body: {product_id: item.product.id, status: 'pending', customer_name: 'Fixture Fay'}})
      expect(pending.body).to.include({status: 'pending'})
      expect(pending.body.customer.name).to.equal('Fixture Fay')
    })

    it('refuses live installations, the store API, and products or variants the merchant does not have', async () => {
      const acct = await gw.account()
      const item = await sellable(acct)
      const live = await gw.installation(acct.merchant.id, 'live')
      expectError(await gw.request('POST', '/v1/app/orders', {token: live.token, body: {product_id: item.product.id}}), 400, 'livemode_forbidden')
      expectError(await acct.store('POST', '/orders', {body: {product_id: item.product.id}}), 405, 'method_not_allowed')
      expect(expectError(await acct.app('POST', '/orders', {body: {product_id: 'prod_nope'}}), 404).param).to.equal('product_id')
      const other = await sellable(acct)
      expect(expectError(await acct.app('POST', '/orders', {body: {product_id: item.product.id, variant_id: other.variant.id}}), 404).param).to.equal('variant_id')
    })
  })
})
