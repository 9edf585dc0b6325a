/**
 * Due work keyed by clock time: trial reminders, renewals, dunning retries, session and subscription
 * expiries. Domain code schedules a job in the transaction of the change that makes it due; the
 * scheduler runs it once the clock reaches it. Two things drive the same `runDue`: a background tick
 * (real time passing) and `advance` (the test clock jumping), so a job behaves the same either way.
 *
 * `advance` walks the jump in time order: at each moment something is due (a job or a webhook
 * delivery attempt) it pins the clock there, runs the jobs (each in its own transaction), then lets
 * every delivery due by then finish and be logged, and only then moves on. It resolves when nothing
 * due up to the target is left, so a caller sees every consequence of the jump when it returns.
 *
 * Nothing here knows about HTTP or about the kinds of work: handlers are registered by kind.
 */
import type {Clock} from './clock.js'
import type {Job, Storage} from './storage/storage.js'

export type {Job}

/** Runs one job inside its transaction; it re-reads its object and does nothing if the job went stale. */
export type JobHandler = (job: Job) => void

/** The webhook worker as the scheduler sees it: when its next attempt is due, and a way to run them. */
export interface DeliveryDriver {
  /** The earliest pending attempt's due time, or undefined. */
  nextDue(): number | undefined
  /** Runs every attempt due at or before `upTo`, each finished and logged, before resolving; says how many ran. */
  drain(upTo: number): Promise<number>
}

const TICK_MS = 1000

export interface AdvanceResult {
  now: number
  /** Jobs run during the jump. */
  jobs: number
}

export class Scheduler {
  private readonly handlers = new Map<string, JobHandler>()
  private timer?: NodeJS.Timeout
  /** Advances run one at a time, in the order they were asked for. */
  private queue: Promise<unknown> = Promise.resolve()
  private advancing = false

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly deliveries: DeliveryDriver,
  ) {}

  /** Registers what a kind of job does. */
  handle(kind: string, handler: JobHandler): void {
    this.handlers.set(kind, handler)
  }

  /** Makes `kind` due for `ref` at `due`; call it in the transaction of the change that causes it. */
  schedule(scope: {merchant: string; env: Job['env']}, kind: string, ref: string, due: number): void {
    this.storage.jobs.insert({due, kind, merchant: scope.merchant, env: scope.env, ref})
  }

  /** Drops pending jobs of `ref` (of one kind, or all). */
  cancel(ref: string, kind?: string): void {
    this.storage.jobs.cancel(ref, kind)
  }

  /** Pending jobs of these objects, soonest first (for admin views and tests). */
  pending(refs: readonly string[]): Job[] {
    return this.storage.jobs.pending(refs)
  }

  /**
   * Runs every job due at or before `now`, soonest first, each in its own transaction; a job that
   * schedules another one already due runs it in the same call. A job whose handler throws is dropped
   * (its transaction rolled back) so one bad job cannot stall the clock.
   */
  runDue(now: number): number {
    let ran = 0
    for (;;) {
      const job = this.storage.jobs.next(now)
      if (!job) return ran
      try {
        this.storage.transaction(() => {
          this.storage.jobs.remove(job.id)
          this.handlers.get(job.kind)?.(job)
        })
      } catch (error) {
        // A bug in a handler must not stall the clock: the job is dropped and the failure reported.
        this.storage.transaction(() => this.storage.jobs.remove(job.id))
        process.emitWarning(`scheduled job ${job.kind} for ${job.ref} failed and was dropped: ${(error as Error)?.message ?? String(error)}`, 'PayappSchedulerWarning')
      }
      ran += 1
    }
  }

  /** Moves the clock forward by `seconds`, doing everything due on the way in time order. */
  advance(seconds: number): Promise<AdvanceResult> {
    return this.enqueue((now) => now + seconds)
  }

  /** Moves the clock forward to `t` (no move when it already reads `t` or later). */
  advanceTo(t: number): Promise<AdvanceResult> {
    return this.enqueue((now) => Math.max(now, t))
  }

  private enqueue(target: (now: number) => number): Promise<AdvanceResult> {
    const run = this.queue.then(() => this.walk(target(this.clock.now())))
    this.queue = run.catch(() => {})
    return run
  }

  private async walk(target: number): Promise<AdvanceResult> {
    const {clock, deliveries} = this
    let jobs = 0
    // Deliveries the worker cannot make (it is stopped) must not hold the clock in place.
    let deliveriesStuck = false
    this.advancing = true
    try {
      for (;;) {
        const nextJob = this.storage.jobs.earliest()
        const nextDelivery = deliveriesStuck ? undefined : deliveries.nextDue()
        const candidates = [nextJob, nextDelivery].filter((t): t is number => t !== undefined && t <= target)
        const at = candidates.length === 0 ? target : Math.min(...candidates)
        const t = clock.pin(at)
        this.persistOffset()
        const ran = this.runDue(t)
        jobs += ran
        const attempts = await deliveries.drain(t)
        if (candidates.length === 0) break
        if (ran === 0 && attempts === 0) deliveriesStuck = true
      }
      return {now: clock.now(), jobs}
    } finally {
      clock.release()
      this.persistOffset()
      this.advancing = false
    }
  }

  /** Keeps the clock's offset across restarts. */
  private persistOffset(): void {
    this.storage.setMeta('clock_offset', String(this.clock.offset))
  }

  /** Runs due jobs as real time passes. */
  start(): void {
    if (this.timer) return
    this.timer = setInterval(() => {
      if (this.advancing) return
      try {
        if (this.storage.open) this.runDue(this.clock.now())
      } catch {
        // The database closed under the tick (shutdown): nothing to do.
      }
    }, TICK_MS)
    this.timer.unref()
  }

  stop(): void {
    clearInterval(this.timer)
    this.timer = undefined
  }
}
