/**
 * A gateway process alone on its database (Platform.start; SQLite file, or PostgreSQL with PAYAPP_TEST_DB) skips
 * the comparison of the shared version before each request: nothing else commits there. The state holds only
 * while the process's lease vouches for it. That a process which joins ends it first, so both see each other's
 * changes, is tested with real processes (multiprocess.test.ts): two SQLite writers in one process would wait
 * on each other's locks.
 */
import {expect} from 'chai'

import {Platform} from '../../src/gateway/platform.js'
import {TestGateway} from '../helpers/gateway.js'
import {prepareDatabase} from '../helpers/test-db.js'

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

  it('never compares on :memory:, which no other process can open', async () => {
    const platform = await open(':memory:')
    expect(platform.mustSync).to.equal(false)
  })
})
