/**
 * Webhook secret rotation (`POST /_admin/webhook_endpoints/{id}/rotate_secret`): while the previous secret
 * is valid each delivery carries one `v1` per secret, newest first, and verifies with either secret, in the
 * SDK and in stripe-node's `constructEvent` (the same `t=…,v1=…` HMAC scheme); after the overlap (gateway
 * clock) only the new one. Real HTTP to a real local receiver.
 */
import {expect} from 'chai'
import Stripe from 'stripe'

import {verifyWebhook} from '@payapp/sdk/webhooks-node'
import {advanceClock} from '../helpers/commerce.js'
import {expectError, TestGateway, type Account} from '../helpers/gateway.js'
import {receiverPool, until, type Receiver} from '../helpers/receiver.js'

/** stripe-node, used only for its signature check; it makes no request. */
const stripe = new Stripe('sk_test_unused')
const stripeVerifies = (body: string, header: string | undefined, secret: string) => {
  try {
    stripe.webhooks.constructEvent(body, header ?? '', secret)
    return true
  } catch {
    return false
  }
}
const sdkVerifies = (body: string, header: string | undefined, secret: string | string[]) => {
  try {
    verifyWebhook(body, header, secret)
    return true
  } catch {
    return false
  }
}

describe('gateway: webhook secret rotation', function () {
  this.timeout(30_000)
  let gw: TestGateway
  const receivers = receiverPool()
  before(async () => {
    gw = await TestGateway.start()
  })
  afterEach(() => receivers.closeAll())
  after(() => gw.close())

  async function setUp(): Promise<{acct: Account; rx: Receiver; we: any}> {
    const acct = await gw.account('test')
    const rx = await receivers.open()
    const we = (await gw.admin('POST', '/webhook_endpoints', {merchant: acct.merchant.id, env: 'test', url: rx.url, events: ['product.created']})).body
    return {acct, rx, we}
  }
  const product = async (acct: Account, rx: Receiver) => {
    const n = rx.got.length
    expect((await acct.store('POST', '/products', {body: {name: `Mug ${n}`, price: {currency: 'eur', unit_amount: 900}}})).status).to.equal(201)
    await until(() => rx.got.length === n + 1, 'the delivery')
    return rx.got[n]
  }

  it('signs with both secrets, newest first, during the overlap (SDK and stripe-node verify either), and with the new one alone after it', async () => {
    const {acct, rx, we} = await setUp()
    const old = we.secret as string
    const res = await gw.admin('POST', `/webhook_endpoints/${we.id}/rotate_secret`, {expire_previous_in_seconds: 3600})
    expect(res.status, res.text).to.equal(200)
    const rotated = res.body
    expect(rotated.secret).to.match(/^whsec_/).and.not.equal(old)
    const now = (await gw.admin('GET', '/clock')).body.now as number
    expect(rotated.previous_secrets_expire).to.have.length(1)
    expect(rotated.previous_secrets_expire[0]).to.be.within(now + 3599, now + 3600)
    // The new secret is answered in full once: lists mask it.
    const listed = (await gw.admin('GET', `/webhook_endpoints?merchant=${acct.merchant.id}`)).body.data[0]
    expect(listed.secret).to.not.equal(rotated.secret)
    expect(listed.previous_secrets_expire).to.deep.equal(rotated.previous_secrets_expire)

    const during = await product(acct, rx)
    expect(during.signature).to.match(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/)
    const [, newest, previous] = during.signature!.split(',')
    const alone = (v1: string) => `${during.signature!.split(',')[0]},${v1}`
    // Newest first: the first v1 is the new secret's.
    expect(sdkVerifies(during.body, alone(newest), rotated.secret)).to.equal(true)
    expect(sdkVerifies(during.body, alone(previous), old)).to.equal(true)
    for (const secret of [old, rotated.secret]) {
      expect(sdkVerifies(during.body, during.signature, secret), `SDK with ${secret === old ? 'old' : 'new'}`).to.equal(true)
      expect(stripeVerifies(during.body, during.signature, secret), `stripe-node with ${secret === old ? 'old' : 'new'}`).to.equal(true)
    }
    expect(sdkVerifies(during.body, during.signature, [old, rotated.secret])).to.equal(true)

    await advanceClock(gw, 3600)
    const after = await product(acct, rx)
    expect(after.signature).to.match(/^t=\d+,v1=[0-9a-f]{64}$/)
    expect(sdkVerifies(after.body, after.signature, rotated.secret)).to.equal(true)
    expect(stripeVerifies(after.body, after.signature, rotated.secret)).to.equal(true)
    expect(sdkVerifies(after.body, after.signature, old)).to.equal(false)
    expect(stripeVerifies(after.body, after.signature, old)).to.equal(false)
    expect((await gw.admin('GET', `/webhook_endpoints?merchant=${acct.merchant.id}`)).body.data[0].previous_secrets_expire).to.deep.equal([])
  })

  it('keeps the previous secret 24 h of gateway time by default, and 0 ends it at once', async () => {
    const {acct, rx, we} = await setUp()
    const first = we.secret as string
    const second = (await gw.admin('POST', `/webhook_endpoints/${we.id}/rotate_secret`, {})).body.secret as string
    await advanceClock(gw, 23 * 3600)
    expect(sdkVerifies((await product(acct, rx)).body, rx.got.at(-1)!.signature, first)).to.equal(true)
    await advanceClock(gw, 3600)
    expect(sdkVerifies((await product(acct, rx)).body, rx.got.at(-1)!.signature, first)).to.equal(false)

    const third = (await gw.admin('POST', `/webhook_endpoints/${we.id}/rotate_secret`, {expire_previous_in_seconds: 0})).body.secret as string
    const got = await product(acct, rx)
    expect(got.signature!.split(',v1=')).to.have.length(2)
    expect(sdkVerifies(got.body, got.signature, third)).to.equal(true)
    expect(sdkVerifies(got.body, got.signature, second)).to.equal(false)
  })

  it('takes a chosen new secret, refuses a bad body, and answers 404 for an unknown endpoint', async () => {
    const {we} = await setUp()
    const chosen = await gw.admin('POST', `/webhook_endpoints/${we.id}/rotate_secret`, {secret: 'whsec_chosen_new_one'})
    expect(chosen.body.secret).to.equal('whsec_chosen_new_one')
    expect(expectError(await gw.admin('POST', `/webhook_endpoints/${we.id}/rotate_secret`, {expire_previous_in_seconds: -1}), 400).param).to.equal('expire_previous_in_seconds')
    expectError(await gw.admin('POST', '/webhook_endpoints/we_missing/rotate_secret', {}), 404)
  })
})
