/**
 * Runs the app against a real local gateway: the payapp CLI installed in node_modules starts one on a
 * free port with an in-memory database and a seeded demo store, and is stopped at the end.
 */
import assert from 'node:assert/strict'
import {spawn} from 'node:child_process'
import {once} from 'node:events'
import {readFileSync} from 'node:fs'
import {createInterface} from 'node:readline'
import {after, before, describe, it} from 'node:test'
import {fileURLToPath} from 'node:url'

import {AppClient, signWebhookPayload} from 'payapp/sdk'

import {createApp} from '../src/app.js'

const WEBHOOK_SECRET = 'whsec_test_app'

/** `payapp gateway start … --json`; resolves with the child and the first stdout line (url, admin key, seeded credentials). */
async function startGateway() {
  // The installed package's bin, run with this node: the same as node_modules/.bin/payapp, and no shell needed on Windows.
  const pkgUrl = new URL(import.meta.resolve('payapp/package.json'))
  const bin = fileURLToPath(new URL(JSON.parse(readFileSync(pkgUrl, 'utf8')).bin.payapp, pkgUrl))
  const args = ['gateway', 'start', '--port', '0', '--db', ':memory:', '--seed', '--json', '--no-save-profile', '--rate-limit', 'off']
  const child = spawn(process.execPath, [bin, ...args], {stdio: ['ignore', 'pipe', 'pipe']})
  let stderr = ''
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const firstLine = await new Promise((resolve, reject) => {
    createInterface({input: child.stdout}).once('line', resolve)
    child.once('exit', (code) => reject(new Error(`payapp gateway start exited with ${code}\n${stderr}`)))
    child.once('error', reject)
  })
  const info = JSON.parse(firstLine)
  if (info.error) throw new Error(`payapp gateway start: ${info.error.message}`)
  return {child, info}
}

async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
  await exited
  clearTimeout(timer)
}

describe('app', () => {
  let gateway
  let server
  let appUrl
  let client
  const handled = []

  before(async () => {
    gateway = await startGateway()
    const {url, seed} = gateway.info
    const token = seed.installations.test.token
    client = new AppClient({token, baseUrl: url})
    server = createApp({token, baseUrl: url, webhookSecret: WEBHOOK_SECRET, onEvent: (event) => handled.push(event.id)})
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    appUrl = `http://127.0.0.1:${server.address().port}`
  })

  after(async () => {
    server?.close()
    if (gateway) await stop(gateway.child)
  })

  const postWebhook = (body, signature) =>
    fetch(`${appUrl}/webhooks`, {method: 'POST', headers: {'content-type': 'application/json', 'service-signature': signature}, body})

  const event = (id) => ({
    id,
    object: 'event',
    type: 'order.created',
    livemode: false,
    created: Math.floor(Date.now() / 1000),
    data: {object: {id: 'ord_123', object: 'order', amount: 2500, currency: 'eur'}},
  })

  it('GET /catalogue lists the seeded products with their default price', async () => {
    const expected = []
    for await (const product of client.products.list()) if (product.active) expected.push(product)
    assert.ok(expected.length > 0, 'the seeded store has products')

    const res = await fetch(`${appUrl}/catalogue`)
    assert.equal(res.status, 200)
    const {data} = await res.json()
    assert.deepEqual(
      data.map((p) => ({id: p.id, name: p.name, default_price: p.default_price?.id ?? null})),
      expected.map((p) => ({id: p.id, name: p.name, default_price: p.default_price})),
    )
  })

  it('GET /catalogue shows a new product with its price', async () => {
    const product = await client.products.create({name: 'Enamel mug', price: {currency: 'eur', unit_amount: 1250}})
    const {data} = await (await fetch(`${appUrl}/catalogue`)).json()
    const row = data.find((p) => p.id === product.id)
    assert.deepEqual(row, {
      id: product.id,
      name: 'Enamel mug',
      default_price: {id: product.default_price, unit_amount: 1250, currency: 'eur', display: '€12.50'},
    })
  })

  it('accepts a signed webhook once, acknowledges a replay without processing it again', async () => {
    const {body, header} = signWebhookPayload(event('evt_signed_1'), WEBHOOK_SECRET)

    const first = await postWebhook(body, header)
    assert.equal(first.status, 200)
    assert.deepEqual(await first.json(), {received: true})

    const replay = await postWebhook(body, header)
    assert.equal(replay.status, 200)
    assert.deepEqual(await replay.json(), {received: true, duplicate: true})

    assert.deepEqual(handled.filter((id) => id === 'evt_signed_1'), ['evt_signed_1'])
    const {data} = await (await fetch(`${appUrl}/events`)).json()
    assert.equal(data.filter((e) => e.id === 'evt_signed_1').length, 1)
  })

  it('rejects a tampered, unsigned or wrongly signed webhook with 400', async () => {
    const {body, header} = signWebhookPayload(event('evt_tampered_1'), WEBHOOK_SECRET)
    const tampered = await postWebhook(body.replace('2500', '1'), header)
    assert.equal(tampered.status, 400)
    assert.equal((await tampered.json()).error.code, 'signature_mismatch')

    const unsigned = await fetch(`${appUrl}/webhooks`, {method: 'POST', body})
    assert.equal(unsigned.status, 400)
    assert.equal((await unsigned.json()).error.code, 'signature_missing')

    const other = signWebhookPayload(event('evt_tampered_1'), 'whsec_someone_else')
    assert.equal((await postWebhook(other.body, other.header)).status, 400)

    assert.ok(!handled.includes('evt_tampered_1'))
  })
})
