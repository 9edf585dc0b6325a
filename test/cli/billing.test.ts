/**
 * `payapp trigger` for every event type, `--override` validation, `payapp events list|resend` and
 * `payapp gateway clock advance`, against a real gateway over HTTP.
 */
import {expect} from 'chai'

import {GatewayAdmin, MerchantClient, StoreClient} from '@payapp/sdk'
import {RECIPES, TRIGGER_EVENTS, parseOverrides, trigger, type TriggerEvent} from '../../src/cli/services/trigger.js'
import {date} from '../../src/cli/output.js'
import {runCli} from '../helpers/cli.js'
import {TestGateway} from '../helpers/gateway.js'
import {receiver} from '../helpers/receiver.js'

describe('payapp trigger, events and gateway clock', function () {
  this.timeout(120_000)
  let gw: TestGateway
  before(async () => {
    gw = await TestGateway.start()
  })
  after(() => gw.close())

  it('causes every event type the gateway emits through its real state change (in-process)', async () => {
    const acct = await gw.account('test')
    const deps = {
      store: new StoreClient({baseUrl: gw.url, secretKey: acct.secretKey, maxRetries: 0}),
      admin: new GatewayAdmin({baseUrl: gw.url, adminKey: gw.gw.adminKey}),
      merchant: acct.merchant.id,
      env: 'test' as const,
      baseUrl: gw.url,
      merchantApi: new MerchantClient({baseUrl: gw.url, secretKey: acct.secretKey, maxRetries: 0}),
    }
    for (const event of TRIGGER_EVENTS) {
      const result = await trigger(event, {}, deps)
      expect(result.events.map((e) => e.type), event).to.include(event)
      expect(result.steps.length, event).to.be.greaterThan(0)
    }
    // Every type the gateway logged for this merchant is one trigger knows.
    const logged = new Set<string>()
    for (const env of ['test', 'live']) {
      for (const e of (await gw.admin('GET', `/events?merchant=${acct.merchant.id}&env=${env}&limit=1000`)).body.data) logged.add(e.type)
    }
    expect([...logged].filter((t) => !(t in RECIPES))).to.deep.equal([])
  })

  it('applies overrides to the objects it creates and rejects unknown or invalid ones before anything runs', async () => {
    expect(parseOverrides('subscription.created', ['quantity=3', 'metadata.plan=pro', 'customer_name=Grace Hopper'])).to.deep.equal({
      quantity: 3,
      metadata: {plan: 'pro'},
      customer_name: 'Grace Hopper',
    })
    expect(() => parseOverrides('subscription.created', ['colour=red'])).to.throw(/--override colour: not a field .* \(it takes: quantity, trial_days/)
    expect(() => parseOverrides('fraud_warning.created', ['amount=0'])).to.throw(/--override amount/)
    expect(() => parseOverrides('payout.paid', ['amount'])).to.throw(/field=value/)

    const acct = await gw.account('test')
    const env = {PAYAPP_BASE_URL: gw.url, PAYAPP_ADMIN_KEY: gw.gw.adminKey, PAYAPP_MERCHANT: acct.merchant.id, PAYAPP_SECRET_KEY: acct.secretKey}
    const bad = await runCli(['trigger', 'subscription.created', '--override', 'colour=red', '--json'], {env})
    expect(bad.code).to.equal(2)
    expect(bad.json().error).to.include({type: 'usage_error', param: '--override'})
    expect((await gw.admin('GET', `/events?merchant=${acct.merchant.id}`)).body.data).to.deep.equal([])

    const ok = await runCli(['trigger', 'subscription.created', '--override', 'quantity=3', '--override', 'metadata.plan=pro', '--json'], {env})
    expect(ok.code, ok.stderr).to.equal(0)
    const created = ok.json().events.find((e: any) => e.type === 'subscription.created').data.object
    expect(created).to.include({quantity: 3, status: 'incomplete'})
    expect(created.metadata).to.deep.equal({plan: 'pro'})

    const fraud = await runCli(['trigger', 'fraud_warning.created', '--override', 'amount=9900', '--override', 'fraud_type=made_with_stolen_card', '--json'], {env})
    expect(fraud.code, fraud.stderr).to.equal(0)
    expect(fraud.json().events[0].data.object).to.include({amount: 9900, fraud_type: 'made_with_stolen_card'})
    const help = await runCli(['trigger', '--help'])
    for (const event of TRIGGER_EVENTS as TriggerEvent[]) expect(help.stdout).to.include(event)
  })

  it('lists and resends events, and advances the clock until everything due has happened', async () => {
    const acct = await gw.account('test')
    const env = {PAYAPP_BASE_URL: gw.url, PAYAPP_ADMIN_KEY: gw.gw.adminKey, PAYAPP_MERCHANT: acct.merchant.id, PAYAPP_SECRET_KEY: acct.secretKey}
    const rx = await receiver()
    try {
      const we = (await gw.admin('POST', '/webhook_endpoints', {merchant: acct.merchant.id, env: 'test', url: rx.url, events: ['subscription.*', 'invoice.*']})).body
      const sub = await acct.api('POST', '/v1/subscriptions', {
        body: {price_id: (await acct.store('POST', '/products', {body: {name: 'Plan', price: {currency: 'eur', unit_amount: 900, recurring: {interval: 'month'}}}})).body.default_price, customer_name: 'Ada Lovelace', customer_email: 'ada@example.com'},
      })
      await gw.admin('POST', `/subscriptions/${sub.body.id}/confirm`, {outcome: 'paid'})

      const advanced = await runCli(['gateway', 'clock', 'advance', '62d', '--json'], {env})
      expect(advanced.code, advanced.stderr).to.equal(0)
      // PAYAPP_MERCHANT names whose clock moves.
      expect(advanced.json()).to.include({object: 'clock', merchant: acct.merchant.id})
      expect(advanced.json().jobs_run).to.be.at.least(2)
      // Both renewals were delivered before the command returned.
      expect(rx.got.filter((r) => r.event.type === 'invoice.paid')).to.have.length(3)

      const listed = await runCli(['events', 'list', '--type', 'invoice.paid', '--json'], {env})
      expect(listed.code, listed.stderr).to.equal(0)
      const events = listed.json().data
      expect(events.map((e: any) => e.type)).to.deep.equal(['invoice.paid', 'invoice.paid', 'invoice.paid'])
      const human = await runCli(['events', 'list', '--limit', '2'], {env})
      expect(human.stdout).to.match(/^ID\s+TYPE\s+OBJECT\s+CREATED/)
      // The CLI's one date format (as in orders, payments, subscriptions): `2026-05-01 12:00:00 UTC`, not ISO's `T…Z`.
      const all = (await runCli(['events', 'list', '--limit', '100', '--json'], {env})).json().data as {id: string; created: number}[]
      const rows = human.stdout.trimEnd().split('\n').slice(1)
      expect(rows).to.have.length(2)
      for (const row of rows) {
        const shown = all.find((e) => e.id === row.split(/\s+/)[0])!
        expect(row.endsWith(`  ${date(shown.created)}`), row).to.equal(true)
      }

      const before = rx.got.length
      const resent = await runCli(['events', 'resend', events[0].id, '--endpoint', we.id, '--json'], {env})
      expect(resent.code, resent.stderr).to.equal(0)
      expect(resent.json()).to.deep.equal({object: 'event_resend', event: events[0].id, queued_deliveries: 1})
      await gw.admin('POST', '/clock', {advance_seconds: 0})
      expect(rx.got.slice(before).map((r) => r.event.id)).to.deep.equal([events[0].id])
      expect((await runCli(['events', 'resend', 'evt_missing'], {env})).code).to.equal(5)

      const now = (await gw.admin('GET', `/clock?merchant=${acct.merchant.id}`)).body.now
      const target = now + 3 * 86_400
      const to = await runCli(['gateway', 'clock', 'advance', '--to', new Date(target * 1000).toISOString(), '--json'], {env})
      expect(to.code, to.stderr).to.equal(0)
      expect(to.json().now).to.equal(target)
      // The clock runs on in real time after the jump: what `gateway clock` shows must be the merchant's time at
      // some second of the call, read just before and just after it.
      const from = (await gw.admin('GET', `/clock?merchant=${acct.merchant.id}`)).body.now as number
      const shown = await runCli(['gateway', 'clock'], {env})
      const until = (await gw.admin('GET', `/clock?merchant=${acct.merchant.id}`)).body.now as number
      expect(from).to.be.at.least(target)
      const seconds = Array.from({length: until - from + 1}, (_, i) => date(from + i))
      expect(shown.stdout).to.match(new RegExp(`^Clock of ${acct.merchant.id} at (${seconds.join('|')}) \\(offset \\d+ s\\)\n$`))
      expect((await runCli(['gateway', 'clock', 'advance', '--to', new Date((now - 86_400) * 1000).toISOString()], {env})).code).to.equal(6)

      const bad = await runCli(['gateway', 'clock', 'advance', 'soon'], {env})
      expect(bad.code).to.equal(2)
      expect(bad.stderr).to.include('Not a duration')
    } finally {
      await rx.close()
    }
  })
})
