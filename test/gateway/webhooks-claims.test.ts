/**
 * How gateway processes on one database share an endpoint's webhook deliveries (storage's `claim`),
 * on the run's engine (SQLite file, or PostgreSQL with PAYAPP_TEST_DB): two storages stand for two
 * processes. A claim takes a batch of the endpoint's due deliveries in delivery order under one lease;
 * while any of them is held no other process sends to that endpoint (events stay in order), though it
 * sends to others; a process that died (its lease ran out) is taken over, batch and all, and its late
 * log of an attempt is refused, so each attempt is logged by the process that holds the delivery.
 */
import {expect} from 'chai'

import {openStorage} from '../../src/gateway/storage/open.js'
import type {Storage} from '../../src/gateway/storage/storage.js'
import {TestGateway} from '../helpers/gateway.js'
import {prepareDatabase} from '../helpers/test-db.js'

const merchant = 'mch_claims'
const LEASE = 60_000

describe('webhook delivery claims: processes sharing one endpoint', function () {
  this.timeout(30_000)
  let a: Storage
  let b: Storage

  beforeEach(async () => {
    const db = TestGateway.tempDbFile()
    await prepareDatabase(db)
    a = await openStorage(db)
    b = await openStorage(db)
    await a.write(async (tx) => {
      for (const id of ['we_claims_1', 'we_claims_2']) {
        await tx.webhooks.insertEndpoint({id, merchant, env: 'test', url: 'http://127.0.0.1:9/hook', events: ['*'], secret: 'whsec_x', installation: null, created: 1, previous_secrets: []})
      }
    })
  })
  afterEach(async () => {
    await a?.close()
    await b?.close()
  })

  /** Queues `n` deliveries of `product.created` events due at clock time 1; answers their event ids. */
  const queue = (endpoint: string, n: number, prefix = 'evt') =>
    a.write(async (tx) => {
      const events: string[] = []
      for (let i = 1; i <= n; i++) {
        await tx.webhooks.enqueue(endpoint, {id: `${prefix}_${i}`, type: 'product.created'}, '{}', 1)
        events.push(`${prefix}_${i}`)
      }
      return events
    })
  const claim = (s: Storage, owner: string, endpoint: string, limit: number, wallNow = Date.now()) =>
    s.write((tx) => tx.webhooks.claim(endpoint, owner, 10, wallNow, wallNow + LEASE, limit))
  const delivered = {status: 200, error: null, next: null, delivered: true}

  it('takes the first due deliveries in delivery order, a batch under one lease; a reordered one sorts where its rule put it', async () => {
    const first = await queue('we_claims_1', 4)
    // A reorder rule's delivery sorts just before the one it was queued after.
    await a.write((tx) => tx.webhooks.enqueue('we_claims_1', {id: 'evt_reordered', type: 'product.created'}, '{}', 1, {rule: 'flt_x', failAttempts: 0, effects: ['reordered'], ord: 1.5}))
    const batch = await claim(a, 'A', 'we_claims_1', 3)
    expect(batch.map((d) => d.event_id)).to.deep.equal([first[0], 'evt_reordered', first[1]])
    expect(batch.every((d) => d.endpoint === 'we_claims_1' && d.attempts === 0)).to.equal(true)
  })

  it("while any delivery of its batch is held, another process claims none of that endpoint's, not even those after the batch, but claims another endpoint's", async () => {
    await queue('we_claims_1', 5)
    const [other] = await queue('we_claims_2', 1, 'evt_other')
    const batch = await claim(a, 'A', 'we_claims_1', 2)
    expect(batch).to.have.length(2)
    expect(await claim(b, 'B', 'we_claims_1', 10)).to.deep.equal([])
    // A logs the first of its two: the second still holds the endpoint.
    expect(await a.write((tx) => tx.webhooks.recordAttempt(batch[0].id, 1, 10, delivered, 'A'))).to.equal(true)
    expect(await claim(b, 'B', 'we_claims_1', 10)).to.deep.equal([])
    expect((await claim(b, 'B', 'we_claims_2', 10)).map((d) => d.event_id)).to.deep.equal([other])
    // Both logged: the endpoint is free, and the next process takes what is left, in order.
    expect(await a.write((tx) => tx.webhooks.recordAttempt(batch[1].id, 1, 10, delivered, 'A'))).to.equal(true)
    expect((await claim(b, 'B', 'we_claims_1', 10)).map((d) => d.event_id)).to.deep.equal(['evt_3', 'evt_4', 'evt_5'])
  })

  it("takes over a dead process's batch once its lease ran out; that process's late log of an attempt is refused, the new holder's kept", async () => {
    const events = await queue('we_claims_1', 3)
    const batch = await claim(a, 'A', 'we_claims_1', 3)
    expect(batch).to.have.length(3)
    // A claim again by the holder renews its own batch.
    expect((await claim(a, 'A', 'we_claims_1', 3)).map((d) => d.event_id)).to.deep.equal(events)
    // B, after A's lease ran out: the whole batch, in order.
    const taken = await claim(b, 'B', 'we_claims_1', 10, Date.now() + LEASE + 1)
    expect(taken.map((d) => d.event_id)).to.deep.equal(events)
    expect(await a.write((tx) => tx.webhooks.recordAttempt(batch[0].id, 1, 10, delivered, 'A'))).to.equal(false)
    expect(await b.write((tx) => tx.webhooks.recordAttempt(taken[0].id, 1, 10, delivered, 'B'))).to.equal(true)
    expect((await b.reads.webhooks.attempts('we_claims_1')).map((x) => x.event_id)).to.deep.equal([events[0]])
    // Given up by a stopping process: the rest are another's at once.
    await b.write((tx) => tx.webhooks.release('B'))
    expect((await claim(a, 'A', 'we_claims_1', 10)).map((d) => d.event_id)).to.deep.equal(events.slice(1))
  })

  it("reads a backlog's first due deliveries in order from an index, not by sorting every due one (draining n deliveries stays linear)", async () => {
    // A backlog of 3,000 due deliveries of one endpoint (a clock jump, or a process down for a while), with statistics.
    await a.write(async (tx) => {
      for (let i = 1; i <= 3000; i++) await tx.webhooks.enqueue('we_claims_1', {id: `evt_backlog_${i}`, type: 'product.created'}, '{}', 1)
    })
    expect((await claim(a, 'A', 'we_claims_1', 50)).map((d) => d.event_id)).to.deep.equal(Array.from({length: 50}, (_, i) => `evt_backlog_${i + 1}`))
    const storage = a as unknown as {writer?: {db: {exec(text: string): void; prepare(text: string): {all(...args: unknown[]): Array<{detail: string}>}}; statements: Map<string, unknown>}}
    let plan: string
    if (storage.writer) {
      // SQLite: the claim's statement as it was prepared, explained with the same values.
      storage.writer.db.exec('ANALYZE')
      const text = [...storage.writer.statements.keys()].find((t) => t.startsWith('UPDATE webhook_deliveries SET owner'))!
      plan = storage.writer.db.prepare(`EXPLAIN QUERY PLAN ${text}`).all('B', 1, 'we_claims_1', 10, 50, 'we_claims_1', 'B', 1).map((r) => r.detail).join('\n')
    } else {
      // PostgreSQL: a storage of one connection claims (the statement is prepared on it), and explains it there.
      const {PostgresStorage} = await import('../../src/gateway/storage/postgres.js')
      const one = await PostgresStorage.open((a as unknown as {location: string}).location, {max: 1})
      try {
        await claim(one, 'C', 'we_claims_2', 50)
        const pool = (one as unknown as {pool: {query(text: string, values?: unknown[]): Promise<{rows: Array<Record<string, string>>}>}}).pool
        await pool.query('ANALYZE webhook_deliveries')
        const [prepared] = (await pool.query("SELECT statement FROM pg_prepared_statements WHERE statement LIKE 'WITH gate AS%'")).rows
        plan = (await pool.query(`EXPLAIN (COSTS OFF) ${prepared!.statement}`, ['B', 1, 'we_claims_1', 10, 1, 50])).rows.map((r) => r['QUERY PLAN']).join('\n')
      } finally {
        await one.close()
      }
    }
    expect(plan).to.contain('webhook_deliveries_in_order')
    expect(plan).not.to.match(/TEMP B-TREE FOR ORDER BY|Sort Key/)
  })

  it('claims nothing not yet due on the clock, and nothing of a delivery logged as delivered', async () => {
    await a.write((tx) => tx.webhooks.enqueue('we_claims_1', {id: 'evt_later', type: 'product.created'}, '{}', 50))
    expect(await claim(a, 'A', 'we_claims_1', 10)).to.deep.equal([])
    const [now] = await queue('we_claims_1', 1)
    const [due] = await claim(a, 'A', 'we_claims_1', 10)
    expect(due.event_id).to.equal(now)
    await a.write((tx) => tx.webhooks.recordAttempt(due.id, 1, 10, delivered, 'A'))
    expect(await claim(a, 'A', 'we_claims_1', 10)).to.deep.equal([])
  })
})
