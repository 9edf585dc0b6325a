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
import type {Tx} from './domain/context.js'
import type {Job, Storage} from './storage/storage.js'

export type {Job}

/** Runs one job inside its unit of work; it re-reads its object and does nothing if the job went stale. */
export type JobHandler = (tx: Tx, job: Job) => Promise<void>

/** The webhook worker as the scheduler sees it: when its next attempt is due, and a way to run them. */
export interface DeliveryDriver {
  /** The earliest pending attempt's due time, or undefined. */
  nextDue(): Promise<number | undefined>
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
    /** The platform's unit of work (platform.write): jobs run with the domain's context. */
    private readonly write: <T>(fn: (tx: Tx) => Promise<T>) => Promise<T>,
  ) {}

  /** Registers what a kind of job does. */
  handle(kind: string, handler: JobHandler): void {
    this.handlers.set(kind, handler)
  }


  /**
   * Runs every job due at or before `now`, soonest first, each in its own transaction; a job that
   * schedules another one already due runs it in the same call. A job whose handler throws is dropped
   * (its transaction rolled back) so one bad job cannot stall the clock.
   */
  async runDue(now: number): Promise<number> {
    let ran = 0
    for (;;) {
      const job = await this.storage.reads.jobs.next(now)
      if (!job) return ran
      try {
        await this.write(async (tx) => {
          // Claimed by its removal: a job another runner took first is not run twice.
          if (await tx.jobs.remove(job.id)) await this.handlers.get(job.kind)?.(tx, job)
        })
      } catch (error) {
        // A bug in a handler must not stall the clock: the job is dropped and the failure reported.
        await this.storage.write((tx) => tx.jobs.remove(job.id))
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
        const nextJob = await this.storage.reads.jobs.earliest()
        const nextDelivery = deliveriesStuck ? undefined : await deliveries.nextDue()
        const candidates = [nextJob, nextDelivery].filter((t): t is number => t !== undefined && t <= target)
        const at = candidates.length === 0 ? target : Math.min(...candidates)
        const t = clock.pin(at)
        await this.persistOffset()
        const ran = await this.runDue(t)
        jobs += ran
        const attempts = await deliveries.drain(t)
        if (candidates.length === 0) break
        // Stuck only when nothing ran and the delivery that was due is due still: the worker's own poll
        // may have made the attempt while this step awaited its units, which is progress too.
        if (ran === 0 && attempts === 0 && (await deliveries.nextDue()) === nextDelivery) deliveriesStuck = true
      }
      return {now: clock.now(), jobs}
    } finally {
      clock.release()
      await this.persistOffset()
      this.advancing = false
    }
  }

  /** Keeps the clock's offset across restarts. */
  private persistOffset(): Promise<void> {
    const offset = String(this.clock.offset)
    return this.storage.write((tx) => tx.setMeta('clock_offset', offset))
  }

  /** Runs due jobs as real time passes. */
  start(): void {
    if (this.timer) return
    let ticking = false
    this.timer = setInterval(() => {
      if (this.advancing || ticking || !this.storage.open) return
      ticking = true
      this.runDue(this.clock.now())
        // The database closed under the tick (shutdown): nothing to do.
        .catch(() => {})
        .finally(() => (ticking = false))
    }, TICK_MS)
    this.timer.unref()
  }

  stop(): void {
    clearInterval(this.timer)
    this.timer = undefined
  }
}
