/**
 * How one PostgreSQL storage learns of another's change to the shared version (src/gateway/storage/pg-watch.ts):
 * by the time the changing unit is answered, every other storage's `external()` token has moved, with no
 * query of its own; storages on another schema of the database (another platform) are not waited for, nor is
 * one that began listening after the change committed.
 */
import {createHash} from 'node:crypto'

import {expect} from 'chai'
import pg from 'pg'

import {VersionWatch} from '../../src/gateway/storage/pg-watch.js'
import {PostgresStorage} from '../../src/gateway/storage/postgres.js'
import {SHARED_VERSION_KEY} from '../../src/gateway/storage/storage.js'
import {postgresForSuite} from '../helpers/test-db.js'

describe('PostgreSQL storage: another process’s change of the shared version', function () {
  this.timeout(60_000)
  let own: {url: string; stop: () => void} | undefined
  let url: string
  const opened: PostgresStorage[] = []
  const open = async (at = url) => {
    const storage = await PostgresStorage.open(at)
    opened.push(storage)
    return storage
  }

  before(async function () {
    own = await postgresForSuite()
    if (!own) return this.skip()
    url = own.url
  })
  after(async () => {
    await Promise.all(opened.map((s) => s.close()))
    own?.stop()
  })

  it('has moved every other storage’s token when the changing unit is answered, each time', async () => {
    const [a, b, c] = await Promise.all([open(), open(), open()])
    for (let i = 0; i < 20; i++) {
      const [from, ...others] = [a, b, c].slice(i % 3).concat([a, b, c].slice(0, i % 3))
      const before = await Promise.all(others.map((s) => s.external()))
      await from!.write((tx) => tx.setMeta(SHARED_VERSION_KEY, `v${i}`))
      // Read at once: the notification was taken in before the answer.
      const after = await Promise.all(others.map((s) => s.external()))
      for (const [k, token] of after.entries()) {
        expect(token, `change ${i}, storage ${k}`).to.not.equal(before[k])
        expect(token, 'a token of the watch, not a version read').to.match(/^n:/)
      }
    }
  })

  it('does not move the token of a storage on another schema (another platform on the database)', async () => {
    const schema = `pgwatch_other_${process.pid}`
    const admin = new pg.Client({connectionString: url})
    await admin.connect()
    await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
    await admin.end()
    const elsewhere = new URL(url)
    elsewhere.searchParams.set('options', `-c search_path=${schema}`)
    const [a, b, other] = await Promise.all([open(), open(), open(elsewhere.toString())])
    const before = await Promise.all([b.external(), other.external()])
    await a.write((tx) => tx.setMeta(SHARED_VERSION_KEY, 'elsewhere'))
    const after = await Promise.all([b.external(), other.external()])
    expect(after[0]).to.not.equal(before[0])
    expect(after[1]).to.equal(before[1])
  })

  it('does not hold a change’s answer for a watch that began listening after it committed (a process starting meanwhile)', async function () {
    // Without the new watch's hello, the change waits the minute below for its acknowledgement: past this timeout.
    this.timeout(20_000)
    const unit = new pg.Client({connectionString: url})
    const pool = new pg.Pool({connectionString: url, max: 2})
    let joined: PostgresStorage | undefined
    const watch = new VersionWatch(
      () => new pg.Client({connectionString: url}),
      async (text, values) => {
        // The watches are listed once the change committed: a storage opened right then listens after it, yet is listed.
        if (text.includes('pg_stat_activity') && !joined) joined = await open()
        return (await pool.query(text, values)).rows
      },
      60_000,
    )
    try {
      await unit.connect()
      await watch.start()
      const store = {setMeta: async (_key: string, _value: string) => {}}
      await unit.query('BEGIN')
      const announced = watch.inUnit(store, (text, values) => unit.query(text, values))
      await store.setMeta(SHARED_VERSION_KEY, 'while-one-starts')
      await unit.query('COMMIT')
      await announced.committed()
      expect(joined, 'a storage opened between the commit and the list of watches').to.not.equal(undefined)
    } finally {
      await watch.close()
      await Promise.all([unit.end(), pool.end()])
    }
  })

  it('sends its connection one query at a time while a burst of changes comes in (node-postgres deprecates more; pg 9 refuses them)', async () => {
    // The watch's own connection, counting the queries it has running at once.
    let running = 0
    let most = 0
    let acked = 0
    class Counting extends pg.Client {
      override query(...args: unknown[]): any {
        const acking = Array.isArray(args[1]) && String(args[1][1]).startsWith('burst:')
        running += 1
        most = Math.max(most, running)
        const result = (super.query as (...a: unknown[]) => Promise<unknown>)(...args)
        return result.finally(() => {
          running -= 1
          if (acking) acked += 1
        })
      }
    }
    const pool = new pg.Pool({connectionString: url, max: 2})
    const watch = new VersionWatch(() => new Counting({connectionString: url}), async (text, values) => (await pool.query(text, values)).rows)
    const other = new pg.Client({connectionString: url})
    try {
      await Promise.all([watch.start(), other.connect()])
      const [{schema}] = (await other.query('SELECT current_schema() AS schema')).rows
      const channel = `payapp_version_${createHash('sha256').update(String(schema)).digest('hex').slice(0, 16)}`
      // 50 changes' notifications in one commit reach the watch together: each is acknowledged.
      await other.query(`DO $$ BEGIN FOR i IN 1..50 LOOP PERFORM pg_notify('${channel}', 'burst:' || i); END LOOP; END $$`)
      for (let i = 0; i < 100 && acked < 50; i++) await new Promise((r) => setTimeout(r, 50))
      expect(acked, 'acknowledgements of the burst').to.equal(50)
      expect(most, 'queries running at once on the watch connection').to.equal(1)
    } finally {
      await watch.close()
      await Promise.all([other.end(), pool.end()])
    }
  })

  it('does not move the token for a unit that changes nothing shared', async () => {
    const [a, b] = await Promise.all([open(), open()])
    const before = await b.external()
    await a.write((tx) => tx.setMeta('something_else', 'x'))
    expect(await b.external()).to.equal(before)
  })
})
