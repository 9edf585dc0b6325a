/**
 * A gateway process alone on its database (Platform.start; SQLite file, or PostgreSQL with PAYAPP_TEST_DB) skips
 * the comparison of the shared version before each request: nothing else commits there. The state holds only
 * while the process's lease vouches for it. That a process which joins ends it first, so both see each other's
 * changes, is tested with real processes (multiprocess.test.ts): two SQLite writers in one process would wait
 * on each other's locks. On PostgreSQL two platforms in this process can: a start-up that stalls is tested here.
 */
import {expect} from 'chai'

import {Platform} from '../../src/gateway/platform.js'
import {holdNextRead, TestGateway} from '../helpers/gateway.js'
import {until} from '../helpers/receiver.js'
import {onPostgres, prepareDatabase} from '../helpers/test-db.js'

describe('gateway platform: a process alone on its database', function () {
  this.timeout(30_000)
  const platforms: Platform[] = []
  const open = async (db: string) => {
    const platform = await Platform.open({db, rateLimit: false})
    platforms.push(platform)
    await platform.start()
    return platform
  }
  afterEach(async () => {
    await Promise.all(platforms.splice(0).map((p) => p.close()))
  })

  it('compares nothing before a request while alone, and compares again once its lease has run out unrenewed (a stalled event loop)', async () => {
    const db = TestGateway.tempDbFile()
    await prepareDatabase(db)
    const first = await open(db)
    expect(first.mustSync).to.equal(false)
    const now = Date.now
    try {
      // 5 s on: past the lease (at most 5 s), as if the event loop had stalled since the last renewal.
      Date.now = () => now() + 5000
      expect(first.mustSync).to.equal(true)
    } finally {
      Date.now = now
    }
    expect(first.mustSync).to.equal(false)
  })

  ;(onPostgres ? it : it.skip)('leaves the alone state for a process that joined while its start-up stalled past every lease: one rate count for both (PostgreSQL)', async () => {
    const db = TestGateway.tempDbFile()
    await prepareDatabase(db)
    const opts = {db, rateLimit: true, rateLimits: {limits: {write: 1000}}, leaseMs: 300}
    const first = await Platform.open(opts)
    platforms.push(first)
    // Its start-up stalls once its joining unit committed (at the re-read of the fault rules that follows it).
    const stalled = holdNextRead(first.storage.reads.faults, 'all')
    const firstStarted = first.start()
    await stalled.read
    const second = await Platform.open(opts)
    platforms.push(second)
    // It finds the first named alone and waits for the hand-over, until the first's lease has run out unrenewed.
    await second.start()
    stalled.release()
    await firstStarted
    // The first sees the join (its watch looks every 50 ms) though no lease was live then, its own neither: from then
    // on a write counted through either process is one count of the window. Before, it counted apart for good.
    const hit = async (p: Platform) => (await p.rateLimiter.hit('key_alone', 'write', true))!.remaining
    await until(async () => (await hit(second)) === (await hit(first)) + 1, 'one count through both processes', 5000)
    const remaining: number[] = []
    for (let i = 0; i < 6; i++) remaining.push(await hit(i % 2 ? second : first))
    expect(remaining.slice(1).map((r, i) => remaining[i]! - r)).to.deep.equal([1, 1, 1, 1, 1])
  })

  it('never compares on :memory:, which no other process can open', async () => {
    const platform = await open(':memory:')
    expect(platform.mustSync).to.equal(false)
  })
})
