/**
 * The receiver against a real gateway started in this process (payapp/testing): real sales, real signed
 * deliveries, and the gateway's own retries, made due by moving its test clock.
 */
import assert from 'node:assert/strict'
import {once} from 'node:events'
import {mkdtempSync} from 'node:fs'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {after, before, beforeEach, describe, it} from 'node:test'

import {signWebhookPayload, type Order, type StoreClient} from 'payapp/sdk'
import {startGateway, type TestGateway} from 'payapp/testing'

import {createApp, type App} from '../src/app.js'
import type {Actions} from '../src/handlers.js'

const SECRET = 'whsec_test_webhook_app'
const urlOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`

/** Polls until `check` returns a value: the gateway delivers from a background worker. */
async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, what: string): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const value = await check()
    if (value !== undefined) return value
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`timed out waiting for ${what}`)
}

describe('webhook app against a real gateway', () => {
  let gw: TestGateway
  let store: StoreClient
  let token: string
  let merchant: string
  const dataDir = mkdtempSync(join(tmpdir(), 'webhook-app-'))
  const running: Array<{close(): Promise<void>}> = []
  let n = 0

  before(async () => {
    gw = await startGateway()
    merchant = (await gw.defaultMerchant()).id
    store = (await gw.secretKey()).client
    token = (await gw.installation({scopes: ['orders:read', 'products:read']})).token
  })
  after(async () => {
    for (const r of running) await r.close().catch(() => {})
    await gw.close()
  })
  beforeEach(async () => {
    // One endpoint per test, so earlier tests' apps receive nothing more.
    for (const e of (await gw.admin.webhookEndpoints.list(merchant)).data) await gw.admin.webhookEndpoints.delete(e.id)
  })

  interface Started {
    app: App
    url: string
    fulfilled: Order[]
  }

  async function startApp(opts: {actions?: Partial<Actions>; retryDelaysMs?: number[]; inboxFile?: string} = {}): Promise<Started> {
    const fulfilled: Order[] = []
    const actions: Actions = {fulfil: (o) => void fulfilled.push(o), orderChanged: () => {}, review: () => {}, ...opts.actions}
    const app = await createApp({
      token,
      baseUrl: gw.url,
      webhookSecret: SECRET,
      inboxFile: opts.inboxFile ?? join(dataDir, `inbox-${++n}.jsonl`),
      actions,
      retryDelaysMs: opts.retryDelaysMs ?? [20, 20, 20],
    })
    app.server.listen(0, '127.0.0.1')
    await once(app.server, 'listening')
    running.push(app)
    return {app, url: urlOf(app.server), fulfilled}
  }

  /** The gateway delivers this merchant's events to `url` signed with SECRET, as `payapp listen` sets up. */
  const subscribe = (url: string) =>
    gw.admin.webhookEndpoints.create({merchant, env: 'test', url: `${url}/webhooks`, secret: SECRET, events: ['checkout.session.completed', 'store.*']})

  async function sale(): Promise<{session: string; order: string}> {
    const product = await store.products.create({name: `Mug ${++n}`, price: {currency: 'eur', unit_amount: 1200}})
    const checkout = await store.checkouts.create({product_id: product.id})
    const paid = await gw.admin.checkouts.complete(checkout.session_id)
    return {session: checkout.session_id, order: paid.order!.id}
  }

  const attempts = async (endpoint: string, type: string) => (await gw.admin.webhookEndpoints.deliveries(endpoint)).data.filter((d) => d.type === type)

  it('a paid sale is delivered, verified, re-read and fulfilled once', async () => {
    const {app, url, fulfilled} = await startApp()
    const endpoint = await subscribe(url)
    const {order} = await sale()
    await eventually(() => (fulfilled.length ? true : undefined), 'the fulfilment')
    await app.idle()
    assert.deepEqual(fulfilled.map((o) => [o.id, o.status]), [[order, 'paid']])
    const delivered = await attempts(endpoint.id, 'checkout.session.completed')
    assert.deepEqual(delivered.map((d) => [d.status, d.delivered]), [[200, true]])
  })

  it('a slow handler: the delivery is acknowledged at once and the event handled after', async () => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const fulfilled: string[] = []
    const {app, url} = await startApp({actions: {fulfil: async (o) => { await gate; fulfilled.push(o.id) }}})
    const endpoint = await subscribe(url)
    const {order} = await sale()
    // Delivered (200) while the handler is still waiting: the platform's 15 s timeout never comes into it.
    await eventually(async () => ((await attempts(endpoint.id, 'checkout.session.completed')).some((d) => d.delivered) ? true : undefined), 'the delivery')
    assert.deepEqual(fulfilled, [])
    release()
    await eventually(() => (fulfilled.length ? true : undefined), 'the slow fulfilment')
    await app.idle()
    assert.deepEqual(fulfilled, [order])
  })

  it('a failing handler: the event stays in the inbox and is retried there until it is handled', async () => {
    let calls = 0
    const fulfilled: string[] = []
    const {app, url} = await startApp({
      actions: {
        fulfil: (o) => {
          if (++calls < 3) throw new Error(`warehouse unavailable (${calls})`)
          fulfilled.push(o.id)
        },
      },
    })
    const endpoint = await subscribe(url)
    const {order, session} = await sale()
    await eventually(() => (fulfilled.length ? true : undefined), 'the fulfilment after two failures')
    await app.idle()
    assert.deepEqual(fulfilled, [order])
    const entry = app.inbox.recent(100).find((e) => e.event.type === 'checkout.session.completed' && (e.event.data.object as {id: string}).id === session)!
    assert.equal(entry.status, 'handled')
    assert.equal(entry.attempts, 2)
    // The platform heard one 200 and never redelivered.
    assert.deepEqual((await attempts(endpoint.id, 'checkout.session.completed')).map((d) => d.status), [200])
  })

  it('the gateway retries when the answer is lost, and the redelivery is acknowledged without handling twice', async () => {
    const {app, url, fulfilled} = await startApp()
    // A network between the two that drops the first answer after the app has recorded the event.
    let dropped = 0
    const proxy = createServer(async (req, res) => {
      const chunks: Buffer[] = []
      for await (const chunk of req) chunks.push(chunk as Buffer)
      const answer = await fetch(url + req.url, {method: req.method, headers: req.headers as Record<string, string>, body: Buffer.concat(chunks)})
      const body = await answer.text()
      if (dropped++ === 0) return req.socket.destroy()
      res.writeHead(answer.status, {'content-type': 'application/json'}).end(body)
    })
    proxy.listen(0, '127.0.0.1')
    await once(proxy, 'listening')
    running.push({close: () => new Promise<void>((resolve) => proxy.close(() => resolve()))})
    const endpoint = await subscribe(urlOf(proxy))
    const {order} = await sale()

    const first = await eventually(async () => (await attempts(endpoint.id, 'checkout.session.completed')).find((d) => d.attempt === 1), 'the first attempt')
    assert.equal(first.delivered, false)
    // The retry is due 1 s later on the gateway's clock: move it instead of waiting.
    await gw.clock.advance(2)
    const second = await eventually(async () => (await attempts(endpoint.id, 'checkout.session.completed')).find((d) => d.attempt === 2), 'the retry')
    assert.equal(second.status, 200)
    await app.idle()
    assert.deepEqual(fulfilled.map((o) => o.id), [order])
  })

  it('a restart handles the events recorded but not yet handled before it', async () => {
    const inboxFile = join(dataDir, 'restart.jsonl')
    const first = await startApp({inboxFile, retryDelaysMs: [60_000], actions: {fulfil: () => { throw new Error('down') }}})
    const endpoint = await subscribe(first.url)
    const {order} = await sale()
    await eventually(async () => ((await attempts(endpoint.id, 'checkout.session.completed')).some((d) => d.delivered) ? true : undefined), 'the delivery')
    await eventually(() => (first.app.inbox.pending().some((e) => e.attempts === 1) ? true : undefined), 'the failed attempt')
    await first.app.close()

    const second = await startApp({inboxFile})
    await second.app.idle()
    assert.deepEqual(second.fulfilled.map((o) => o.id), [order])
  })

  it('refuses unsigned or tampered bodies and records nothing', async () => {
    const {app, url} = await startApp()
    const event = {id: 'evt_tampered', object: 'event', type: 'store.order.created', livemode: false, created: Math.floor(Date.now() / 1000), data: {object: {}}}
    const {body, header} = signWebhookPayload(event, SECRET)
    const post = (b: string, signature?: string) =>
      fetch(`${url}/webhooks`, {method: 'POST', headers: {'content-type': 'application/json', ...(signature ? {'service-signature': signature} : {})}, body: b})
    assert.equal((await post(body)).status, 400)
    assert.equal((await post(body.replace('store.order.created', 'store.order.updated'), header)).status, 400)
    assert.equal(app.inbox.get('evt_tampered'), undefined)
  })

  it('routes fraud_warning.* events to review (the local gateway does not emit them: a signed event stands in)', async () => {
    const reviewed: unknown[] = []
    const {app, url} = await startApp({actions: {review: (w) => void reviewed.push(w.id)}})
    const event = {id: 'evt_fw_1', object: 'event', type: 'fraud_warning.created', livemode: false, created: Math.floor(Date.now() / 1000), data: {object: {id: 'fw_1', object: 'fraud_warning'}}}
    const {body, header} = signWebhookPayload(event, SECRET)
    const res = await fetch(`${url}/webhooks`, {method: 'POST', headers: {'content-type': 'application/json', 'service-signature': header}, body})
    assert.equal(res.status, 200)
    await app.idle()
    assert.deepEqual(reviewed, ['fw_1'])
  })
})
