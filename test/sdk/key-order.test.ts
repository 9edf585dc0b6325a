/**
 * A parsed resource has every field the platform sent, its envelope in the order the spec lists it (the
 * CLI's `--json` output and an app's logs show the SDK's order): a session's `mode` before `livemode`,
 * `object` first on the catalogue's options and variants, no `livemode` on option groups, `type` before
 * `livemode` on events. One case per resource whose envelope differs from `id, object, livemode`, in both
 * environments (payments and refunds change shape).
 */
import {expect} from 'chai'

import {AppClient, GatewayAdmin, MerchantClient, StoreClient} from '@payapp/sdk'
import {optionedVariant, sale} from '../helpers/commerce.js'
import {TestGateway} from '../helpers/gateway.js'

describe('sdk: resource envelopes as parsed', function () {
  this.timeout(60_000)
  let gw: TestGateway
  after(() => gw?.close())
  before(async () => {
    gw = await TestGateway.start()
  })

  for (const env of ['test', 'live'] as const) {
    it(`in ${env} mode: option groups and values, variants, sessions, payments, refunds, balance, analytics, events`, async () => {
      const acct = await gw.account(env)
      const item = await optionedVariant(acct)
      const paid = await sale(gw, acct, item)
      const refund = await acct.v1('POST', '/refunds', {body: {payment: paid.payment.id, amount: 300}})
      expect(refund.status, refund.text).to.equal(201)

      let sent: unknown
      const fetchAndKeep: typeof fetch = async (url, init) => {
        const res = await fetch(url, init)
        sent = JSON.parse(await res.clone().text())
        return res
      }
      const opts = {baseUrl: gw.url, maxRetries: 0, fetch: fetchAndKeep}
      const app = new AppClient({token: acct.token, ...opts})
      const store = new StoreClient({secretKey: acct.secretKey, ...opts})
      const merchant = new MerchantClient({secretKey: acct.secretKey, ...opts})
      const admin = new GatewayAdmin({adminKey: gw.gw.adminKey, ...opts})

      const product = item.product.id as string
      // Each call, with the fields the spec lists first for what it returns (the CLI's --json shows the SDK's order).
      const calls: Record<string, [() => Promise<unknown>, (body: any) => unknown, string[]]> = {
        'store options.list': [() => store.call('options.list', {params: {id: product}}), (b) => b.data[0], ['object', 'id', 'product', 'name', 'values']],
        'store option values': [() => store.call('options.list', {params: {id: product}}), (b) => b.data[0].values[0], ['object', 'id', 'value', 'sort_order']],
        'store variants.list': [() => store.call('variants.list', {params: {id: product}}), (b) => b.data[0], ['object', 'id', 'livemode', 'product']],
        'merchant checkoutSessions.retrieve': [() => merchant.call('checkoutSessions.retrieve', {params: {id: paid.session.id}}), (b) => b, ['id', 'object', 'mode', 'livemode', 'status']],
        'app payments.retrieve': [() => app.call('payments.retrieve', {params: {id: paid.payment.id}}), (b) => b, env === 'live' ? ['id', 'object', 'livemode', 'status'] : ['id', 'object', 'livemode', 'session_id']],
        'merchant refunds.retrieve': [() => merchant.call('refunds.retrieve', {params: {id: refund.body.id}}), (b) => b, ['id', 'object', 'livemode', 'payment']],
        'app refunds.list': [() => app.call('refunds.list'), (b) => b.data[0], env === 'live' ? ['id', 'object', 'livemode', 'status'] : ['id', 'object', 'livemode', 'payment']],
        'app balance.retrieve': [() => app.call('balance.retrieve'), (b) => b, ['object', 'livemode', 'available', 'pending']],
        'app analytics.summary': [() => app.call('analytics.summary'), (b) => b, ['object', 'livemode', 'days']],
        'admin events.list': [() => admin.events.list({merchant: acct.merchant.id, env}), (b) => b.data[0], ['id', 'object', 'type', 'livemode', 'created']],
      }
      for (const [call, [run, pick, lead]] of Object.entries(calls)) {
        const parsed = pick(await run()) as object
        const raw = pick(sent) as object
        expect(Object.keys(parsed).slice(0, lead.length), call).to.deep.equal(lead)
        expect(Object.keys(parsed), `${call}: the fields sent`).to.have.members(Object.keys(raw))
        expect(parsed, call).to.deep.equal(raw)
      }
    })
  }
})
