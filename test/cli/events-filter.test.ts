/** `payapp events list` by type, time and delivery state, and `payapp events resend` with a filter, as a process against a real gateway. */
import {expect} from 'chai'

import {runCli} from '../helpers/cli.js'
import {TestGateway} from '../helpers/gateway.js'
import {receiver, until} from '../helpers/receiver.js'

describe('payapp events list --delivery/--since/--until and events resend with a filter', function () {
  this.timeout(60_000)
  let gw: TestGateway
  before(async () => {
    gw = await TestGateway.start()
  })
  after(() => gw.close())

  it('lists the failed events and resends them all, oldest first, in one command', async () => {
    const acct = await gw.account('test')
    const env = {PAYAPP_BASE_URL: gw.url, PAYAPP_ADMIN_KEY: gw.gw.adminKey, PAYAPP_MERCHANT: acct.merchant.id}
    // The first deliveries keep failing (their retries run on the wall clock while the test goes on); a resend is a new delivery and succeeds.
    const original = new Set<string | undefined>()
    let resending = false
    const rx = await receiver((d) => {
      if (!resending) original.add(d.deliveryId)
      return original.has(d.deliveryId) ? 503 : 200
    })
    const resent_ = () => rx.got.filter((g) => !original.has(g.deliveryId))
    try {
      const we = (await gw.admin('POST', '/webhook_endpoints', {merchant: acct.merchant.id, env: 'test', url: rx.url, events: ['product.created']})).body
      for (const name of ['First', 'Second']) await acct.store('POST', '/products', {body: {name, price: {currency: 'eur', unit_amount: 900}}})
      await until(() => rx.got.length >= 2, 'two failed attempts')
      await until(async () => ((await gw.admin('GET', `/webhook_endpoints/${we.id}/deliveries`)).body.data as any[]).length >= 2, 'two logged attempts')

      const listed = await runCli(['events', 'list', '--delivery', 'failed', '--json'], {env})
      expect(listed.code, listed.stderr).to.equal(0)
      const failed = listed.json().data as any[]
      expect(failed.map((e) => e.data.object.name)).to.deep.equal(['Second', 'First'])
      const since = await runCli(['events', 'list', '--type', 'product.created', '--since', failed[1].id, '--json'], {env})
      expect(since.json().data.map((e: any) => e.id)).to.deep.equal([failed[0].id])
      const until_ = await runCli(['events', 'list', '--type', 'product.created', '--until', new Date((failed[1].created - 1) * 1000).toISOString(), '--json'], {env})
      expect(until_.json().data).to.deep.equal([])
      const bad = await runCli(['events', 'list', '--delivery', 'lost'], {env})
      expect(bad.code).to.equal(2)

      resending = true
      const resent = await runCli(['events', 'resend', '--delivery', 'failed', '--endpoint', we.id], {env})
      expect(resent.code, resent.stderr).to.equal(0)
      expect(resent.stdout).to.equal(`Queued 2 events (${failed[1].id} … ${failed[0].id}), 2 deliveries\n`)
      await until(() => resent_().length >= 2, 'the two resent events', 10_000)
      expect(resent_().map((g) => g.event.data.object.name)).to.deep.equal(['First', 'Second'])

      const neither = await runCli(['events', 'resend', '--json'], {env})
      expect(neither.code).to.equal(2)
      expect(neither.json().error).to.include({type: 'usage_error', param: 'event'})
    } finally {
      await rx.close()
    }
  })
})
