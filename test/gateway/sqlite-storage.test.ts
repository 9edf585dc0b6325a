import {closeSync, existsSync, mkdtempSync, openSync, readSync, statSync} from 'node:fs'
import {spawn} from 'node:child_process'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

import type Database from 'better-sqlite3'
import {expect} from 'chai'
import fc from 'fast-check'

import type {Documents} from '../../src/gateway/storage/documents.js'
import {SqliteStorage} from '../../src/gateway/storage/sqlite.js'
import {type AvailabilityChange, StorageBusy, StorageUnavailable} from '../../src/gateway/storage/storage.js'
import {openDatabase} from '../../src/gateway/storage/sqlite-driver.js'

/**
 * The SQLite file under a sustained stream of writes: WAL checkpoints run beside the event loop
 * (storage/checkpoints.ts), yet the WAL stays bounded, and every committed write is in the database
 * file once the storage closes.
 */
describe('SQLite storage: WAL checkpoints off the request path', function () {
  this.timeout(120_000)

  const walBytes = (file: string) => (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0)
  /** The WAL header's first salt, which SQLite increments each time the WAL starts over (its file keeps its size). */
  const walSalt = (file: string) => {
    if (!existsSync(`${file}-wal`)) return 0
    const fd = openSync(`${file}-wal`, 'r')
    try {
      const header = Buffer.alloc(32)
      return readSync(fd, header, 0, 32, 0) === 32 ? header.readUInt32BE(16) : 0
    } finally {
      closeSync(fd)
    }
  }

  it('keeps the WAL bounded while writers never pause, and leaves every write in the database file on close', async () => {
    // SQLite whatever PAYAPP_TEST_DB says: the checkpoints are SQLite's.
    const file = join(mkdtempSync(join(tmpdir(), 'payapp-wal-')), 'gateway.sqlite')
    const storage = new SqliteStorage(file)
    const scope = {merchant: 'acct_wal', env: 'test' as const}
    const filler = 'x'.repeat(3000)
    let written = 0
    let largestWal = 0
    let firstSalt: number | undefined
    let lastSalt = 0
    // 16 writers, each always with a write in flight: about 300 MB of WAL frames in all, several holds' worth.
    const TOTAL = 60_000
    const writer = async () => {
      while (written < TOTAL) {
        const n = written++
        await storage.write((tx) =>
          tx.insert('product', scope, {id: `prod_wal${n}`, object: 'product', name: `Product ${n}`, description: filler} as unknown as Documents['product'], {
            created: n,
          }),
        )
        if (n % 50 === 0) {
          largestWal = Math.max(largestWal, walBytes(file))
          lastSalt = walSalt(file)
          firstSalt ??= lastSalt
        }
      }
    }
    let offThread = false
    try {
      await Promise.all(Array.from({length: 16}, writer))
      offThread = storage.checkpointsOffThread
    } finally {
      storage.close()
    }
    // The worker thread took the checkpoints over once the WAL passed 1,000 pages (with this runtime's driver).
    expect(offThread).to.equal(true)
    // Writes wait for a whole checkpoint once a passive one ends past 64 MiB of WAL, or at once at 80 MiB: the
    // units already asked for come on top, never the whole stream; and the WAL starts over each time, not once
    // (its file keeps up to 80 MiB, which the next WAL overwrites).
    expect(largestWal).to.be.greaterThan(4 * 1024 * 1024).and.below(88 * 1024 * 1024)
    expect(lastSalt - firstSalt!).to.be.at.least(3)
    expect(walBytes(file)).to.equal(0)
    const db = openDatabase(file, {readonly: true})
    try {
      expect(db.prepare("SELECT COUNT(*) AS n FROM objects WHERE kind = 'product'").get()).to.deep.equal({n: TOTAL})
    } finally {
      db.close()
    }
  })
  it('keeps every acknowledged write across a SIGKILL after the WAL started over in its kept file', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'payapp-wal-kill-')), 'gateway.sqlite')
    // A process of 16 writers that prints each write's id once the storage acknowledged it (its batch committed).
    const script = `
      const {SqliteStorage} = await import(${JSON.stringify(pathToFileURL(join(process.cwd(), 'src/gateway/storage/sqlite.ts')).href)})
      const storage = new SqliteStorage(process.env.WAL_FILE)
      const scope = {merchant: 'acct_kill', env: 'test'}
      const filler = 'x'.repeat(3000)
      let n = 0
      await Promise.all(Array.from({length: 16}, async () => {
        for (;;) {
          const id = 'prod_kill' + n++
          await storage.write((tx) => tx.insert('product', scope, {id, object: 'product', name: id, description: filler}, {created: n}))
          process.stdout.write(id + '\\n')
        }
      }))
    `
    const child = spawn(process.execPath, ['--import', 'tsx', '--conditions', 'payapp-source', '--input-type=module', '-e', script], {
      env: {...process.env, WAL_FILE: file},
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const acknowledged: string[] = []
    let buffered = ''
    child.stdout.on('data', (chunk: Buffer) => {
      const lines = (buffered + chunk.toString()).split('\n')
      buffered = lines.pop()!
      acknowledged.push(...lines)
    })
    const exited = new Promise((resolve) => child.once('exit', resolve))
    try {
      // Killed once the WAL has started over twice or more, each time from the start of a file that kept its blocks.
      let first: number | undefined
      for (let waited = 0; ; waited += 20) {
        if (waited > 60_000) throw new Error(`the WAL never started over twice: ${acknowledged.length} writes, salt ${walSalt(file)} from ${first}, ${walBytes(file)} bytes`)
        await new Promise((resolve) => setTimeout(resolve, 20))
        const salt = walSalt(file)
        if (salt === 0) continue
        first ??= salt
        if (salt - first >= 2 && acknowledged.length > 20_000) break
      }
    } finally {
      child.kill('SIGKILL')
      await exited
    }
    expect(acknowledged.length).to.be.greaterThan(10_000)
    const db = openDatabase(file)
    try {
      const stored = new Set((db.prepare("SELECT id FROM objects WHERE kind = 'product'").all() as {id: string}[]).map((r) => r.id))
      expect(acknowledged.filter((id) => !stored.has(id))).to.deep.equal([])
    } finally {
      db.close()
    }
  })
})

describe('SQLite storage: two processes on one file', function () {
  this.timeout(60_000)

  it('a write lock another process holds: the write waits without stalling the process (reads answered meanwhile) and goes through when it is let go; held past 10 s, the write fails as busy (429 lock_timeout)', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'payapp-busy-')), 'gateway.sqlite')
    const storage = new SqliteStorage(file)
    const scope = {merchant: 'mer_busy', env: 'test'} as const
    const product = (id: string) => ({id, object: 'product', name: id}) as unknown as Documents['product']
    const insert = (id: string) => storage.write((tx) => tx.insert('product', scope, product(id), {created: 0}))
    // Another program on the file (a second gateway, a `sqlite3` shell) in a write transaction.
    const other = openDatabase(file, {timeout: 0})
    try {
      await insert('prod_before')
      other.exec('BEGIN IMMEDIATE')
      let settled = false
      const waiting = insert('prod_waited').finally(() => (settled = true))
      // The process answers reads while its write waits for the lock (SQLite's busy handler would sleep on the event loop).
      for (let i = 0; i < 3; i++) {
        await new Promise((resolve) => setTimeout(resolve, 30))
        expect(await storage.reads.get('product', scope, 'prod_before')).to.include({name: 'prod_before'})
      }
      expect(settled, 'the write waits for the lock').to.equal(false)
      other.exec('COMMIT')
      await waiting
      // Held past the busy timeout: refused as busy, nothing written; sent again once the lock is let go, written.
      other.exec('BEGIN IMMEDIATE')
      expect(await insert('prod_busy').catch((error: unknown) => error)).to.be.instanceOf(StorageBusy)
      other.exec('COMMIT')
      await insert('prod_busy')
      expect((await storage.reads.all('product', scope)).map((p) => p.id).sort()).to.deep.equal(['prod_before', 'prod_busy', 'prod_waited'])
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK')
      other.close()
      storage.close()
    }
  })

  it("a unit's cached reads are not trusted after another process committed since the last request: their generation moves under the unit's write lock", async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'payapp-gen-')), 'gateway.sqlite')
    const [a, b] = [new SqliteStorage(file), new SqliteStorage(file)]
    const scope = {merchant: 'mer_gen', env: 'test'} as const
    const value = (id: string) => ({id, object: 'option_value', name: id, sort_order: 0, updated: 0}) as never
    try {
      await a.write((tx) => tx.insert('option_value', scope, value('val_a'), {parent: 'grp_gen', created: 0}))
      const before = a.generation(['option_value'])
      // Unchanged while nothing else commits: the cache stays usable in the next unit.
      expect(await a.write(async () => a.generation(['option_value']))).to.equal(before)
      // Another process's commit (a value deleted, say) between this process's last request and its next unit.
      await b.write((tx) => tx.insert('option_value', scope, value('val_b'), {parent: 'grp_gen', created: 0}))
      expect(await a.write(async () => a.generation(['option_value']))).to.not.equal(before)
    } finally {
      await Promise.all([a.close(), b.close()])
    }
  })
})

/**
 * A file with no room left (a full disk; here SQLite's `max_page_count`, which fails the same way on demand): SQLite
 * then rolls back the whole transaction, so a batch's units that ran before the one that failed are gone too. None of
 * them may answer as written: every unit that resolved is stored whole, every one that was refused is absent, and the
 * refusal says the database takes no writes (503 database_unavailable, retried with the same key), for any mix of
 * unit sizes, failing units and headroom.
 */
describe('SQLite storage: a file with no room left', function () {
  this.timeout(120_000)

  it('never acknowledges a unit rolled back with the rest of its batch, and refuses each as a database that takes no writes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'payapp-full-'))
    const scope = {merchant: 'acct_full', env: 'test' as const}
    let run = 0
    await fc.assert(
      fc.asyncProperty(
        fc.integer({min: 1, max: 30}),
        fc.array(fc.record({docs: fc.integer({min: 1, max: 4}), size: fc.integer({min: 10, max: 6000}), throws: fc.boolean()}), {minLength: 2, maxLength: 30}),
        async (headroom, units) => {
          const storage = new SqliteStorage(join(dir, `full-${run++}.sqlite`))
          const db = (storage as unknown as {writer: {db: Database.Database}}).writer.db
          const changes: AvailabilityChange[] = []
          storage.onAvailability((change) => changes.push(change))
          try {
            db.pragma(`max_page_count = ${(db.pragma('page_count', {simple: true}) as number) + headroom}`)
            const id = (unit: number, doc: number) => `prod_full${unit}x${doc}`
            // Asked for in one turn: they share batches, as concurrent requests do.
            const outcomes = await Promise.allSettled(
              units.map((unit, u) =>
                storage.write(async (tx) => {
                  for (let d = 0; d < unit.docs; d++) {
                    const doc = {id: id(u, d), object: 'product', name: `Unit ${u}`, description: 'x'.repeat(unit.size)} as unknown as Documents['product']
                    await tx.insert('product', scope, doc, {created: u})
                  }
                  if (unit.throws) throw new Error(`unit ${u} refuses`)
                }),
              ),
            )
            db.pragma('max_page_count = 1073741823')
            const stored = new Set((await storage.reads.all('product', scope)).map((p) => p.id))
            outcomes.forEach((outcome, u) => {
              const ids = Array.from({length: units[u]!.docs}, (_, d) => id(u, d))
              if (outcome.status === 'fulfilled') {
                expect(ids.filter((i) => !stored.has(i)), `unit ${u} answered as written`).to.deep.equal([])
                return
              }
              expect(ids.filter((i) => stored.has(i)), `unit ${u} refused`).to.deep.equal([])
              const error = outcome.reason as Error
              if (error instanceof StorageUnavailable) expect(error.readOnly).to.equal(true)
              else expect(error.message).to.equal(`unit ${u} refuses`)
            })
            const full = outcomes.some((o) => o.status === 'rejected' && o.reason instanceof StorageUnavailable)
            // Told once when writes stopped, and once when the next unit was written.
            await storage.write((tx) => tx.insert('product', scope, {id: 'prod_after', object: 'product', name: 'After'} as unknown as Documents['product'], {created: 0}))
            expect(changes.map((c) => `${c.available}:${c.readOnly}`)).to.deep.equal(full ? ['false:true', 'true:true'] : [])
          } finally {
            storage.close()
          }
        },
      ),
      {numRuns: 40},
    )
  })
})
