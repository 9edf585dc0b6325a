import {closeSync, existsSync, mkdtempSync, openSync, readSync, statSync} from 'node:fs'
import {spawn} from 'node:child_process'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

import {expect} from 'chai'

import type {Documents} from '../../src/gateway/storage/documents.js'
import {SqliteStorage} from '../../src/gateway/storage/sqlite.js'
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

describe('SQLite storage: two processes on one file', () => {
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
