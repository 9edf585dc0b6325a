import type {ChildProcess} from 'node:child_process'

import Database from 'better-sqlite3'
import {expect} from 'chai'

import {startGatewayProcess, tempHome} from '../helpers/cli.js'
import {TestGateway} from '../helpers/gateway.js'
import {onPostgres, prepareDatabase} from '../helpers/test-db.js'

/**
 * "No lost acknowledged write": the gateway runs as its own process on a real SQLite file; every write
 * it answered 2xx must be there after the process is killed (SIGKILL, no chance to clean up) or
 * stopped (SIGTERM, which also finishes the requests in flight).
 */
describe('gateway durability (a real process on a real SQLite file, or PostgreSQL with PAYAPP_TEST_DB)', function () {
  this.timeout(60_000)
  const home = tempHome()
  const db = TestGateway.tempDbFile()

  const start = () => startAt(db)

  const startAt = async (file: string) => {
    await prepareDatabase(file)
    return startGatewayProcess(['--db', file, '--rate-limit', 'off'], home)
  }

  const exited = (child: ChildProcess) => new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))

  async function post(url: string, path: string, token: string, body: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(url + path, {method: 'POST', headers: {authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers}, body: JSON.stringify(body)})
    return {status: res.status, body: (await res.json()) as any, replayed: res.headers.get('idempotent-replayed')}
  }

  let token: string

  it('keeps every acknowledged write across a SIGKILL', async () => {
    const first = await start()
    const merchant = await post(first.url, '/_admin/merchants', first.adminKey, {})
    const inst = await post(first.url, '/_admin/installations', first.adminKey, {merchant: merchant.body.id, env: 'test', scopes: ['products:read', 'products:write']})
    token = inst.body.token
    const results = await Promise.all(Array.from({length: 60}, (_, i) => post(first.url, '/v1/app/products', token, {name: `Durable ${i}`})))
    const acknowledged = results.filter((r) => r.status === 201).map((r) => r.body.id)
    expect(acknowledged).to.have.length(60)
    first.child.kill('SIGKILL')
    await exited(first.child)

    const second = await start()
    const res = await fetch(`${second.url}/v1/app/products?limit=100`, {headers: {authorization: `Bearer ${token}`}})
    const ids = ((await res.json()) as {data: {id: string}[]}).data.map((p) => p.id)
    expect(ids).to.include.members(acknowledged)
    second.child.kill('SIGKILL')
    await exited(second.child)
  })

  it('finishes the requests in flight on SIGTERM, keeps them, and exits 0', async () => {
    const gw = await start()
    const inFlight = Array.from({length: 40}, (_, i) => post(gw.url, '/v1/app/products', token, {name: `In flight ${i}`}).catch(() => ({status: 0, body: {}})))
    // Ask it to stop once the server is answering them (a fixed delay misses on a loaded machine), while the rest are in flight.
    await Promise.race(inFlight)
    gw.child.kill('SIGTERM')
    const [results, code] = await Promise.all([Promise.all(inFlight), exited(gw.child)])
    expect(code).to.equal(0)
    const acknowledged = results.filter((r) => r.status === 201).map((r) => r.body.id as string)
    // Requests that arrived were answered; none was cut off with a server error.
    expect(acknowledged.length).to.be.greaterThan(0)
    expect(results.every((r) => r.status === 201 || r.status === 0 || r.status === 503)).to.equal(true)

    const again = await start()
    const res = await fetch(`${again.url}/v1/app/products?limit=100`, {headers: {authorization: `Bearer ${token}`}})
    const ids = ((await res.json()) as {data: {id: string}[]}).data.map((p) => p.id)
    expect(ids).to.include.members(acknowledged)
    again.child.kill('SIGTERM')
    expect(await exited(again.child)).to.equal(0)
  })

  // SQLite's own: it writes 40,000 due sessions into the file and watches the claim through a second connection.
  ;(onPostgres ? it.skip : it)('frees an Idempotency-Key whose request was SIGKILLed mid-transaction, so its retry completes the write (SQLite file)', async () => {
    const keyDb = TestGateway.tempDbFile()
    let gw = await startAt(keyDb)
    const merchant = await post(gw.url, '/_admin/merchants', gw.adminKey, {})
    const key = await post(gw.url, '/_admin/keys', gw.adminKey, {merchant: merchant.body.id, mode: 'test', scopes: ['products:write', 'checkout:write']})
    const sk = key.body.secret_key as string
    const product = await post(gw.url, '/v1/store/products', sk, {name: 'Slow sale', price: {currency: 'eur', unit_amount: 1000}})
    const first = await post(gw.url, '/v1/store/checkouts', sk, {product_id: product.body.id})
    expect(first.status).to.equal(201)
    gw.child.kill('SIGKILL')
    await exited(gw.child)

    // Thousands of open sessions fall due at once: the next checkout's transaction expires them all, which takes a while.
    const file = new Database(keyDb)
    const row = file.prepare<[string], {data: string; merchant: string; env: string; created: number}>('SELECT data, merchant, env, created FROM objects WHERE id = ?').get(first.body.session_id)!
    const insert = file.prepare('INSERT INTO objects (id, kind, merchant, env, parent, created, data) VALUES (?, ?, ?, ?, NULL, ?, ?)')
    file.transaction(() => {
      for (let i = 0; i < 40_000; i++) {
        const id = `cs_due${i}`
        insert.run(id, 'checkout_session', row.merchant, row.env, row.created, JSON.stringify({...JSON.parse(row.data), id, expires_at: 1, reservation: null}))
      }
    })()
    file.close()

    gw = await startAt(keyDb)
    const keyed = {'idempotency-key': 'sigkill-mid-transaction'}
    let answered = false
    const pending = post(gw.url, '/v1/store/checkouts', sk, {product_id: product.body.id}, keyed).then(
      () => (answered = true),
      () => undefined,
    )
    // Kill while the request's transaction runs: its claim visible (an old gateway committed it first), or the gateway busy.
    const reader = new Database(keyDb, {readonly: true})
    for (;;) {
      const claimed = reader.prepare("SELECT 1 FROM idempotency WHERE key = ? AND state = 'in_flight'").get('sigkill-mid-transaction')
      const busy = await Promise.race([fetch(`${gw.url}/_admin/clock`, {headers: {authorization: `Bearer ${gw.adminKey}`}}).then(() => false), new Promise((r) => setTimeout(() => r(true), 300))])
      if (claimed || busy) break
      if (answered) throw new Error('the keyed request finished before it could be killed: make its transaction longer')
    }
    reader.close()
    gw.child.kill('SIGKILL')
    await exited(gw.child)
    await pending

    gw = await startAt(keyDb)
    const retry = await post(gw.url, '/v1/store/checkouts', sk, {product_id: product.body.id}, keyed)
    expect(retry.status, JSON.stringify(retry.body)).to.equal(201)
    expect(retry.replayed).to.equal(null)
    const again = await post(gw.url, '/v1/store/checkouts', sk, {product_id: product.body.id}, keyed)
    expect(again.replayed).to.equal('true')
    expect(again.body.session_id).to.equal(retry.body.session_id)
    gw.child.kill('SIGKILL')
    await exited(gw.child)
  })
})
