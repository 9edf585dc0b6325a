/**
 * The receiver against a real gateway started in this process (payapp/testing): real sales, real signed
 * deliveries, and the gateway's own retries, made due by moving its test clock. Webhook fault rules make
 * the gateway deliver as the platform may (the spec: "not exactly-once and order is not guaranteed"):
 * duplicated, reordered, failing then recovering; each order is still fulfilled exactly once.
 */
import assert from 'node:assert/strict'
import {once} from 'node:events'
import {mkdtempSync} from 'node:fs'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {after, before, beforeEach, describe, it} from 'node:test'

import {MerchantClient, signWebhookPayload, type Order, type StoreClient} from 'payapp/sdk'
import {startGateway, type TestGateway} from 'payapp/testing'

import {createApp, type App} from '../src/app.js'
import {SUBSCRIBED_EVENTS, type Actions} from '../src/handlers.js'

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
  let merchantApi: MerchantClient
  let token: string
  let merchant: string
  const dataDir = mkdtempSync(join(tmpdir(), 'webhook-app-'))
  const running: Array<{close(): Promise<void>}> = []
  let n = 0

  before(async () => {
    gw = await startGateway()
    merchant = (await gw.defaultMerchant()).id
    const key = await gw.secretKey()
    store = key.client
    merchantApi = new MerchantClient({secretKey: key.secret_key, baseUrl: gw.url, maxRetries: 0})
    token = (await gw.installation({scopes: ['orders:read', 'products:read']})).token
  })
  after(async () => {
    for (const r of running) await r.close().catch(() => {})
    await gw.close()
  })
  beforeEach(async () => {
    // One endpoint per test, so earlier tests' apps receive nothing more; no fault rule carries over.
    for (const e of (await gw.admin.webhookEndpoints.list(merchant)).data) await gw.admin.webhookEndpoints.delete(e.id)
    await gw.admin.faults.clear()
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
  const subscribe = (url: string) => gw.admin.webhookEndpoints.create({merchant, env: 'test', url: `${url}/webhooks`, secret: SECRET, events: SUBSCRIBED_EVENTS})

  /** A webhook fault rule on one endpoint: the gateway misbehaves on purpose, as `payapp gateway faults add --webhooks` does. */
  const misdeliver = (endpoint: string, rule: Omit<Parameters<TestGateway['admin']['faults']['create']>[0], 'scope' | 'endpoint'>) => gw.admin.faults.create({scope: 'webhooks', endpoint, ...rule})

  async function sale(): Promise<{session: string; order: string}> {
    const product = await store.products.create({name: `Mug ${++n}`, price: {currency: 'eur', unit_amount: 1200}})
    const checkout = await store.checkouts.create({product_id: product.id})
    const paid = await gw.admin.checkouts.complete(checkout.session_id)
    return {session: checkout.session_id, order: paid.order!.id}
  }

  const attempts = async (endpoint: string, type: string) => (await gw.admin.webhookEndpoints.deliveries(endpoint)).data.filter((d) => d.type === type)
  /**
   * Waits until no delivery to the endpoint is left to make (each delivered or given up), and returns its log of
   * attempts. The log holds attempts made, not deliveries queued: the merchant's event log must also have no event
   * still waiting for its first attempt, or a poll between two attempts would take the first for all of them.
   */
  const settled = (endpoint: string) =>
    eventually(async () => {
      if ((await gw.admin.events.list({merchant, delivery: 'pending', limit: 1})).data.length > 0) return undefined
      const log = (await gw.admin.webhookEndpoints.deliveries(endpoint)).data
      const last = new Map(log.map((d) => [d.delivery, d]))
      return log.length > 0 && [...last.values()].every((d) => d.outcome !== 'retrying') ? log : undefined
    }, 'every delivery settled')

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

  it('duplicated deliveries: every event arrives twice, the order is fulfilled once', async () => {
    const {app, url, fulfilled} = await startApp()
    const endpoint = await subscribe(url)
    await misdeliver(endpoint.id, {duplicate: true})
    const {order} = await sale()
    await eventually(async () => ((await attempts(endpoint.id, 'checkout.session.completed')).filter((d) => d.delivered).length === 2 ? true : undefined), 'both copies')
    await app.idle()
    assert.deepEqual(fulfilled.map((o) => o.id), [order])
    const copies = (await settled(endpoint.id)).filter((d) => d.injected.includes('duplicate'))
    assert.ok(copies.some((d) => d.type === 'checkout.session.completed'))
  })

  it('reordered deliveries: the sale\'s events arrive newest first, the order is fulfilled once and mirrored as paid', async () => {
    const mirrored: string[] = []
    const {app, url, fulfilled} = await startApp({actions: {orderChanged: (o) => void mirrored.push(o.status)}})
    const endpoint = await subscribe(url)
    await misdeliver(endpoint.id, {reorder: true})
    const {order} = await sale()
    const log = await settled(endpoint.id)
    const emitted = (await gw.admin.events.list({merchant, order: 'asc', limit: 1000})).data.map((e) => e.id)
    const delivered = log.map((d) => d.event)
    // The sale's events reached the app in the reverse of the order they happened in.
    assert.deepEqual(delivered, [...delivered].sort((a, b) => emitted.indexOf(b) - emitted.indexOf(a)))
    assert.ok(delivered.length > 1)
    await app.idle()
    assert.deepEqual(fulfilled.map((o) => o.id), [order])
    // Each handler re-read the order: whatever the order of events, the status it saw is the current one.
    assert.ok(mirrored.length > 0 && mirrored.every((status) => status === 'paid'))
  })

  it('failing then recovering deliveries: three attempts fail, the retries on the clock deliver, the order is fulfilled once', async () => {
    const {app, url, fulfilled} = await startApp()
    const endpoint = await subscribe(url)
    await misdeliver(endpoint.id, {fail_attempts: 3, event_type: 'checkout.session.completed'})
    const {order} = await sale()
    await eventually(async () => ((await attempts(endpoint.id, 'checkout.session.completed')).length === 1 ? true : undefined), 'the first (failed) attempt')
    assert.equal(fulfilled.length, 0)
    // The retries fall due 1 s, 5 s and 30 s later on the gateway's clock: move it instead of waiting.
    for (const seconds of [1, 5, 30]) await gw.clock.advance(seconds)
    const log = await attempts(endpoint.id, 'checkout.session.completed')
    assert.deepEqual(log.map((d) => [d.attempt, d.outcome, d.injected]), [
      [1, 'retrying', ['failed']],
      [2, 'retrying', ['failed']],
      [3, 'retrying', ['failed']],
      [4, 'delivered', []],
    ])
    await app.idle()
    assert.deepEqual(fulfilled.map((o) => o.id), [order])
  })

  it('all at once over many sales (seeded): duplicated, reordered and failing deliveries; each order fulfilled exactly once', async () => {
    const {app, url, fulfilled} = await startApp()
    const endpoint = await subscribe(url)
    await misdeliver(endpoint.id, {duplicate: true, reorder: true, fail_attempts: 2, probability: 0.6, seed: 7})
    const orders: string[] = []
    for (let i = 0; i < 5; i++) orders.push((await sale()).order)
    await gw.clock.advance(60)
    await settled(endpoint.id)
    await app.idle()
    assert.deepEqual(fulfilled.map((o) => o.id).sort(), [...orders].sort())
  })

  it('routes fraud_warning.* events the gateway emits to review', async () => {
    const reviewed: unknown[] = []
    const {app, url} = await startApp({actions: {review: (w) => void reviewed.push(w.id)}})
    await subscribe(url)
    const warning = await merchantApi.fraudWarnings.testCreate({fraud_type: 'card_never_received'})
    await eventually(() => (reviewed.length ? true : undefined), 'the fraud_warning.created delivery')
    await app.idle()
    assert.deepEqual(reviewed, [warning.id])
  })
})
