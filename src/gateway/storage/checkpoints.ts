/**
 * WAL checkpoints off the request path. SQLite's automatic checkpoint runs inside the COMMIT that
 * crosses 1,000 WAL pages: it copies the WAL into the database file and syncs both, on the event loop,
 * while every request waits (two thirds of a keyed write's COMMIT time under load). Here the writer's
 * automatic checkpoint is off and a worker thread, with its own connection, runs PASSIVE checkpoints
 * after commits: the copy and the syncs happen beside the event loop, and never block the writer.
 *
 * A PASSIVE checkpoint beside a writer that never pauses never finishes the whole WAL, and SQLite only
 * starts the WAL over once it is finished; so when a passive checkpoint ends with the WAL past `HOLD_BYTES`,
 * the storage holds new write units (asynchronously: the event loop keeps serving) until a checkpoint with no
 * writer has copied the rest, what was committed during that passive one; the next commit starts the WAL over,
 * writing from the start of its file again, which keeps (up to `LIMIT_BYTES`) the blocks it has.
 * A database whose WAL never reaches `START_BYTES` never starts the worker: it checkpoints as SQLite does.
 * Committed data does not depend on any of this: a commit is in the WAL, which is the database.
 */
import {statSync} from 'node:fs'
import {createRequire} from 'node:module'
import {Worker} from 'node:worker_threads'

import type Database from 'better-sqlite3'

import {sqliteDriver} from './sqlite-driver.js'

/** The WAL size (bytes) at which the worker takes over from SQLite's checkpoint (its default: 1,000 pages). */
const START_BYTES = 1000 * 4096
/** At most one passive checkpoint per this many ms (each syncs two files): about SQLite's 1,000 pages at full write speed. */
const INTERVAL_MS = 100
/**
 * The WAL size (bytes) after which writes wait for a whole checkpoint. Each such hold (a short copy and two
 * fsyncs: 5–10 ms on the VM once it follows a passive checkpoint) stalls every request in flight, and under the
 * keyed-write bench (about 9 KB of WAL a create) 32 MiB came more than once a second: some 60 of every 4,600
 * requests waited, more than 1% of them, a floor under the p99. 64 MiB halves them, for a larger file (which
 * keeps up to `LIMIT_BYTES` when the WAL starts over, and goes when the last connection closes).
 */
const HOLD_BYTES = 64 * 1024 * 1024
/**
 * The WAL size (bytes) at which writes wait at once, behind a passive checkpoint still running: the bound when
 * one takes long (a loaded machine) while writers commit fast.
 */
const LIMIT_BYTES = 80 * 1024 * 1024

/** The worker: one connection that checkpoints when asked and answers SQLite's counts. CommonJS, evaluated. */
const WORKER = `
const {parentPort, workerData} = require('node:worker_threads')
// The writer's driver (sqlite-driver.ts): better-sqlite3 from the path the storage resolved, or node:sqlite.
const db = workerData.driver === 'node:sqlite'
  ? new (process.getBuiltinModule('node:sqlite').DatabaseSync)(workerData.file, {timeout: 5000})
  : new (require(workerData.driver))(workerData.file, {fileMustExist: true})
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)')
parentPort.on('message', (message) => {
  if (message === 'close') {
    // Checkpoints asked for before are answered first: messages are handled in order.
    db.close()
    Atomics.store(workerData.closed, 0, 1)
    Atomics.notify(workerData.closed, 0)
    parentPort.close()
    return
  }
  try {
    const row = checkpoint.get()
    parentPort.postMessage({log: row.log, checkpointed: row.checkpointed})
  } catch (error) {
    parentPort.postMessage({error: String(error && error.message), full: /disk is full/.test(String(error && error.message))})
  }
})
`

type CheckpointResult = {log: number; checkpointed: number; error?: string; full?: boolean}

export interface CheckpointHost {
  /** Runs `checkpoint` once no write unit runs and no batch is open, holding new units until it is done. */
  holdWrites(checkpoint: () => Promise<void>): void
}

export class Checkpoints {
  private worker?: Worker
  private running = false
  private again = false
  private holding = false
  /** A WAL frame's bytes: its header and a page. */
  private frameBytes = 24 + 4096
  /** The WAL is past the hold size and the passive checkpoint running is the last before the hold. */
  private closing = false
  /** Set by a hold, cleared by the next commit. */
  private restarting = false
  private failed = false
  /** The worker answers its checkpoints in the order asked. */
  private readonly replies: ((result: CheckpointResult) => void)[] = []
  /** Set to 1 by the worker once its connection is closed. */
  private readonly closed = new Int32Array(new SharedArrayBuffer(4))

  constructor(
    private readonly writer: Database.Database,
    private readonly file: string,
    private readonly host: CheckpointHost,
  ) {}

  /** Whether the worker runs the checkpoints now (it started, and neither failed nor was closed). */
  get active(): boolean {
    return this.worker !== undefined && !this.failed
  }

  /** After each COMMIT of the writer. */
  committed(): void {
    if (this.failed) return
    this.restarting = false
    const bytes = walBytes(this.file)
    if (!this.worker) {
      if (bytes < START_BYTES) return
      try {
        this.start()
      } catch {
        // No worker (a runtime without worker threads, a driver it cannot load): SQLite checkpoints as before.
        return this.fail()
      }
    }
    // The file grows past its kept size only when the WAL itself does.
    if (bytes > LIMIT_BYTES && !this.holding) void this.hold()
    if (this.running) {
      this.again = true
      return
    }
    void this.run()
  }

  private start(): void {
    const driver = sqliteDriver() === 'node:sqlite' ? 'node:sqlite' : createRequire(import.meta.url).resolve('better-sqlite3')
    const worker = new Worker(WORKER, {eval: true, workerData: {driver, file: this.file, closed: this.closed}})
    // Never what keeps a process alive; a failed worker hands checkpoints back to SQLite.
    worker.unref()
    worker.on('message', (result: CheckpointResult) => this.replies.shift()?.(result))
    worker.on('error', () => this.fail())
    worker.on('exit', () => this.fail())
    this.worker = worker
    this.writer.pragma('wal_autocheckpoint = 0')
    // When SQLite starts the WAL over, its file keeps up to `LIMIT_BYTES` (cut back to that, not below): the
    // next WAL's commits overwrite blocks the file has. Cut back to 1,000 pages, each WAL grew the file again,
    // and a write that allocates blocks waits on ext4 for a journal commit in progress, such as the one of the
    // worker's fsync: COMMITs of 10–30 ms on the event loop, some ten in 16 s of the keyed-write bench.
    this.writer.pragma(`journal_size_limit = ${LIMIT_BYTES}`)
    this.frameBytes = 24 + (this.writer.pragma('page_size', {simple: true}) as number)
  }

  private checkpoint(): Promise<CheckpointResult> {
    return new Promise((resolve) => {
      this.replies.push(resolve)
      this.worker!.postMessage('checkpoint')
    })
  }

  /**
   * Passive checkpoints, one every `INTERVAL_MS` at most while commits keep coming. Once the WAL has grown past
   * `HOLD_BYTES`, writes are held right after a second passive checkpoint that follows the first at once, never
   * while one runs: what the held checkpoint still copies is only what was committed during that short second
   * one, so the hold (which every request in flight waits for) is a short copy and two syncs, not a whole WAL's
   * copy behind a running one. Holds under the keyed-write bench, side by side on a loaded machine (fsyncs vary
   * with it): begun right after a checkpoint of 100 ms of commits, 6–21 ms (median 8.5) in one run and 13–32
   * (median 17) in another; after the second passive one, 3–10 ms (median 7.5); with passive checkpoints back to
   * back (every 10 ms), 4–13 ms (median 5.5), for 10–15% more CPU a create on the worker.
   */
  private async run(): Promise<void> {
    this.running = true
    try {
      do {
        this.again = false
        const started = Date.now()
        const {error, full, log} = await this.checkpoint()
        // A full disk (the file could not grow for the pages copied): commits fail too until there is room, and
        // the first commit after asks for the next checkpoint. Any other failure hands checkpoints back to SQLite.
        if (full) return
        if (error) return this.fail()
        // The WAL's frames, not its file (which keeps its size when the WAL starts over); after a hold, the old
        // WAL's count until the next commit (the first of the new WAL).
        if (!this.restarting && !this.holding && log * this.frameBytes >= HOLD_BYTES) {
          // Past the hold size: one more passive checkpoint at once, which copies only what came during this one
          // (up to `INTERVAL_MS` of commits), then the hold, which copies only what came during that short one.
          if (this.closing) await this.hold()
          else this.closing = true
          continue
        }
        const wait = INTERVAL_MS - (Date.now() - started)
        if (this.again && wait > 0) await new Promise((resolve) => setTimeout(resolve, wait).unref())
      } while (this.again && !this.failed)
    } finally {
      this.running = false
    }
  }

  /** Holds new write units until a checkpoint with no writer has copied the whole WAL: the next commit starts it over. */
  private hold(): Promise<void> {
    this.holding = true
    this.closing = false
    return new Promise((resolve) =>
      this.host.holdWrites(async () => {
        try {
          if (!this.failed) await this.checkpoint()
        } finally {
          this.holding = false
          this.restarting = true
          resolve()
        }
      }),
    )
  }

  /** Answers every checkpoint asked for; from now on SQLite checkpoints on the writer again. */
  private fail(): void {
    this.failed = true
    for (const reply of this.replies.splice(0)) reply({log: 0, checkpointed: 0, error: 'stopped'})
    if (this.writer.open) this.writer.pragma('wal_autocheckpoint = 1000')
    // A worker left running (its message port open) would keep the process from exiting once the server closed.
    void this.worker?.terminate()
  }

  /**
   * Closes the worker's connection, waiting (at most a checkpoint's time) for it: the writer's close is
   * then the last one, which copies what is left of the WAL into the database file, as before.
   */
  close(): void {
    const running = this.worker !== undefined && !this.failed
    this.failed = true
    for (const reply of this.replies.splice(0)) reply({log: 0, checkpointed: 0, error: 'closed'})
    if (!running) return
    this.worker!.postMessage('close')
    Atomics.wait(this.closed, 0, 0, 5000)
  }
}

function walBytes(file: string): number {
  try {
    return statSync(`${file}-wal`).size
  } catch {
    return 0
  }
}
