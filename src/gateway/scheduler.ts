/**
 * Due work keyed by clock time: trial reminders, renewals, dunning retries, session and subscription
 * expiries. Domain code schedules a job in the transaction of the change that makes it due; the
 * scheduler runs it once the clock reaches it. Two things drive the same `runDue`: a background tick
 * (real time passing) and `advance` (the test clock jumping), so a job behaves the same either way.
 *
 * Each merchant has its own clock (clock.ts), and its jobs and webhook attempts are due on it.
 * `advance` walks a merchant's jump in time order: at each moment something is due (a job or a webhook
 * delivery attempt) it pins that merchant's clock there, runs the jobs (each in its own transaction), then lets
 * every delivery due by then finish and be logged, and only then moves on. It resolves when nothing
 * due up to the target is left, so a caller sees every consequence of the jump when it returns.
 *
 * Nothing here knows about HTTP or about the kinds of work: handlers are registered by kind.
 */
import {setTimeout as sleep} from 'node:timers/promises'

import type {Clock} from './clock.js'
import type {Tx} from './domain/context.js'
import {randomText} from './ids.js'
import type {Job, Storage, Store} from './storage/storage.js'

export type {Job}

/** Runs one job inside its unit of work; it re-reads its object and does nothing if the job went stale. */
export type JobHandler = (tx: Tx, job: Job) => Promise<void>

/** The webhook worker as the scheduler sees it: when a merchant's next attempt is due, and a way to run them. */
export interface DeliveryDriver {
  /** The earliest pending attempt's due time for the merchant's endpoints, or undefined. */
  nextDue(merchant: string): Promise<number | undefined>
  /** The merchants whose endpoints have attempts pending. */
  merchantsPending(): Promise<string[]>
  /** Runs every attempt of the merchant's endpoints due at or before `upTo`, each finished and logged, before resolving; says how many ran. */
  drain(merchant: string, upTo: number): Promise<number>
}

const TICK_MS = 1000
const OFFSET_KEY = 'clock_offset'
/**
 * `clock_walk:<merchant>`: the keyed jumps that stepped the merchant and have not ended (each walks, or its process
 * died before its end), as JSON `{<plan id>: lead}`: the lead on the shared clock the merchant has without that jump's
 * steps (a step stores the merchant's pinned time as its offset), which the jump's end, or its request sent again,
 * moves on from. A merchant's own jump meanwhile adds what it moved to each; a jump's end takes its own out.
 */
const WALK_KEY = 'clock_walk'
/** How often a lease waited for is tried again. */
const LEASE_POLL_MS = 25

/** What the scheduler shares with the other gateway processes on the database. */
export interface SchedulerSharing {
  /** This process, as the owner of the clock leases it takes. */
  owner: string
  /** How long a lease lasts without renewal (its process died): then another process may walk the merchant's clock. */
  leaseMs: number
  /** Marks the clocks changed for the other processes (the shared version), in the unit that stores them. */
  changed: (store: Store) => Promise<void>
  /** Reads what other processes changed (the clocks' offsets among it) before a tick. */
  sync: () => Promise<void>
}

/**
 * The jump a clock advance walks, fixed once its lease is taken: its `id` (which names its walk marks,
 * `WALK_KEY`), `ended` once its end is stored (with the `jobs` the walk that ended it ran); for every clock, from `base` (the shared clock's time, its `offset`
 * on the wall clock then) by `seconds`, walking the merchants of `leads` (their leads then) and any due. A keyed
 * advance keeps it with its key (`AdvancePlans`), so a request sent again after its process died walks the
 * same jump, not another one, and one sent after its end moves nothing.
 */
export type AdvancePlan = {id: string; ended?: true; jobs?: number} & ({merchant: string} | {base: number; offset: number; seconds: number; leads: Record<string, number>})

/**
 * Where a keyed advance keeps its plan: `settle` stores the fresh plan unless one is kept already, and answers
 * the kept one (or throws `AdvanceAnswered`: the key's first request answered while this one waited for the
 * clock); `end` marks it ended, in the unit that stores the jump's end; `answered` waits a while for the answer
 * of the request that ended it (true once stored), for a request that found the jump ended.
 */
export interface AdvancePlans {
  settle(fresh: AdvancePlan, created: number): Promise<AdvancePlan>
  end(store: Store, plan: AdvancePlan, jobs: number): Promise<void>
  answered(): Promise<boolean>
}

/** A keyed advance's first request answered while this one, with its key, waited for the clock: the answer is replayed, nothing moves. */
export class AdvanceAnswered extends Error {
  constructor() {
    super('the clock advance with this key has answered')
  }
}

/** A merchant a jump here steps: the jump's plan id ('' unkeyed: no mark of its own), the lead it restores (`WALK_KEY`), the merchant's marks as stored, its offset as last stored. */
interface Walked {
  plan: string
  lead: number
  marks: Record<string, number>
  offset: number
  /** A jump of the merchant alone: what it moves, the other jumps' marks move too. */
  alone: boolean
}

/**
 * A keyed jump found ended (its end stored, not yet its answer: the request that walked it answers right after, or
 * died): that request's answer, once stored in time, is the one to give (`AdvanceAnswered`), not the clock as it
 * reads now. Awaited outside the clock's lanes and leases, which the jump no longer needs.
 */
async function answered(run: Promise<AdvanceResult>, plans: AdvancePlans | undefined): Promise<AdvanceResult> {
  const result = await run
  if (result.ended && plans && (await plans.answered())) throw new AdvanceAnswered()
  return result
}

const sameMarks = (a: Record<string, number>, b: Record<string, number>) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([id, lead]) => b[id] === lead)
const parseMarks = (text: string | undefined): Record<string, number> => (text ? (JSON.parse(text) as Record<string, number>) : {})

export interface AdvanceResult {
  /** The clock moved (the merchant's, else the shared one), after the jump. */
  now: number
  /** Jobs run during the jump. */
  jobs: number
  /** The keyed jump had ended before this request walked it: `jobs` are those the walk that ended it ran. */
  ended?: true
}

/** The stored offsets (the shared one under `''`), as `Clock.load` takes them. */
export async function readOffsets(storage: Storage): Promise<Map<string, number>> {
  const offsets = new Map<string, number>([['', Number((await storage.reads.meta(OFFSET_KEY)) ?? 0)]])
  for (const [key, value] of await storage.reads.metaWithPrefix(`${OFFSET_KEY}:`)) offsets.set(key.slice(OFFSET_KEY.length + 1), Number(value))
  return offsets
}

export class Scheduler {
  private readonly handlers = new Map<string, JobHandler>()
  private timer?: NodeJS.Timeout
  /** A merchant's advances run one at a time, in the order asked for; an all-clocks advance waits for every one and they for it. */
  private readonly lanes = new Map<string, Promise<unknown>>()
  private allLane: Promise<unknown> = Promise.resolve()
  /** Merchants whose jump is being walked (the tick leaves them alone), and whether every clock is. */
  private readonly walking = new Set<string>()
  private walkingAll = false
  /** The clock leases this process holds (`*`: every clock's), each taken by one walk or tick here at a time. */
  private readonly held = new Set<string>()
  /** The merchants a jump here steps that has walk marks to keep (its own, keyed; or others' on a merchant it walks alone), and them (`persist` stores them with the steps). */
  private readonly walked = new Map<string, Walked>()
  /**
   * Bumped on every local clock change, and again once a walk's offsets are stored, so a tick's read of the
   * stored offsets is not applied when it may predate them: a read sent between the walk's end and its persist's
   * commit (with the walk's flags still up when it was sent, and down when it came back) saw the offsets before.
   */
  private version = 0

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly deliveries: DeliveryDriver,
    /** The platform's unit of work (platform.write): jobs run with the domain's context. */
    private readonly write: <T>(fn: (tx: Tx) => Promise<T>) => Promise<T>,
    private readonly sharing: SchedulerSharing = {owner: 'local', leaseMs: 30_000, changed: async () => {}, sync: async () => {}},
  ) {}

  /**
   * Takes the merchant's clock lease (`clock:<merchant>`, in storage), so that no other process's tick
   * runs its jobs and no other advance walks its clock meanwhile; with `wait`, tries until it is free
   * (or its holder died and its lease ran out). Answers a release function, or undefined when not taken.
   */
  private async lease(merchant: string, wait: boolean): Promise<(() => Promise<void>) | undefined> {
    const {owner, leaseMs} = this.sharing
    const name = `clock:${merchant}`
    const take = () => this.storage.write((tx) => tx.leases.acquire(name, owner, Date.now() + leaseMs, Date.now()))
    // Held here first: the stored lease is this process's whoever in it takes it (the owner is the process), so
    // without this a tick would take a lease a walk here holds, run the merchant's jobs beside it, and release it.
    for (;;) {
      if (!this.held.has(merchant)) {
        this.held.add(merchant)
        let taken = false
        try {
          taken = await take()
        } finally {
          if (!taken) this.held.delete(merchant)
        }
        if (taken) break
      }
      if (!wait) return undefined
      await sleep(LEASE_POLL_MS)
    }
    // Renewed while held, so a long walk keeps it.
    const renew = setInterval(() => void take().catch(() => {}), Math.max(50, leaseMs / 3))
    renew.unref()
    return async () => {
      clearInterval(renew)
      try {
        if (this.storage.open) await this.storage.write((tx) => tx.leases.release(name, owner))
      } finally {
        this.held.delete(merchant)
      }
    }
  }

  /** Registers what a kind of job does. */
  handle(kind: string, handler: JobHandler): void {
    this.handlers.set(kind, handler)
  }

  /**
   * Runs every job of the merchant due at or before `now` on its clock, soonest first, each in its own
   * transaction; a job that schedules another one already due runs it in the same call. A job whose
   * handler throws is dropped (its transaction rolled back) so one bad job cannot stall the clock.
   */
  async runDue(merchant: string, now: number): Promise<number> {
    let ran = 0
    for (;;) {
      const job = await this.storage.reads.jobs.next(merchant, now)
      if (!job) return ran
      try {
        // Claimed by its removal, in the unit of its effects: a job another runner took first is not
        // run twice, and a process killed mid-job leaves it (and nothing of it) for another to run.
        const claimed = await this.write(async (tx) => {
          if (!(await tx.jobs.remove(job.id))) return false
          await this.handlers.get(job.kind)?.(tx, job)
          return true
        })
        if (claimed) ran += 1
      } catch (error) {
        // A bug in a handler must not stall the clock: the job is dropped and the failure reported.
        await this.storage.write((tx) => tx.jobs.remove(job.id))
        process.emitWarning(`scheduled job ${job.kind} for ${job.ref} failed and was dropped: ${(error as Error)?.message ?? String(error)}`, 'PayappSchedulerWarning')
        ran += 1
      }
    }
  }

  /**
   * Moves the merchant's clock (every clock without one) forward by `seconds` or to `to` (no move when
   * it already reads `to` or later), doing everything due on the way in time order.
   */
  advance(by: {seconds: number} | {to: number}, merchant?: string, plans?: AdvancePlans): Promise<AdvanceResult> {
    const target = (now: number) => ('to' in by ? Math.max(now, by.to) : now + by.seconds)
    if (merchant !== undefined) {
      const run = Promise.all([this.allLane, this.lanes.get(merchant)]).then(() => this.walkOne(merchant, by, plans))
      const lane = run.catch(() => {})
      this.lanes.set(merchant, lane)
      void lane.then(() => this.lanes.get(merchant) === lane && this.lanes.delete(merchant))
      return answered(run, plans)
    }
    const run = Promise.all([this.allLane, ...this.lanes.values()]).then(() => this.walkAll(target, plans))
    this.allLane = run.catch(() => {})
    return answered(run, plans)
  }

  /**
   * Walks one merchant's jump while holding its clock lease, from the clock as stored when the lease is taken;
   * with `plans`, the jump kept there (an earlier request's with the key, or this one's): by seconds from where
   * that request began (its mark, with the merchant's other jumps since), to its end once.
   */
  private async walkOne(merchant: string, by: {seconds: number} | {to: number}, plans?: AdvancePlans): Promise<AdvanceResult> {
    const release = (await this.lease(merchant, true))!
    // Another process may have moved the clock before the lease was ours (read unless a walk here owns the clocks).
    await this.loadOffsets()
    this.walking.add(merchant)
    let plan: AdvancePlan | undefined
    let jobs = 0
    try {
      const now = this.clock.now(merchant)
      const offset = this.clock.lead(merchant)
      plan = plans ? await plans.settle({id: randomText(16), merchant}, 'to' in by ? Math.max(now, by.to) : now + by.seconds) : undefined
      // Its end stored (its answer not yet, or its process died before it): nothing moves again.
      if (plan?.ended) return {now, jobs: plan.jobs ?? 0, ended: true}
      // The merchant's marks: unended jumps that stepped it (this request's among them when its process died mid-walk).
      const marks = parseMarks(await this.storage.reads.meta(`${WALK_KEY}:${merchant}`))
      const from = plan && marks[plan.id] !== undefined ? marks[plan.id]! : offset
      if (plan || Object.keys(marks).length > 0) this.walked.set(merchant, {plan: plan?.id ?? '', lead: from, marks, offset, alone: true})
      // A kept target the clock already passed (the first request got there): nothing moves, what is due runs.
      const to = Math.max(now, 'to' in by ? by.to : now - offset + from + by.seconds)
      jobs = await this.walk(merchant, to)
      return {now: to, jobs}
    } finally {
      this.clock.release(merchant)
      this.version += 1
      await this.persist([merchant], plan && plans && !plan.ended ? {plans, plan, jobs} : true).finally(() => {
        this.version += 1
        this.walking.delete(merchant)
        this.walked.delete(merchant)
        return release()
      })
    }
  }

  /**
   * Every clock moves by `seconds`: each merchant with work due on the way walks its own jump (holding
   * its clock lease), then the shared offset moves. With `plans`, the jump kept there (an earlier request's
   * with the key, which may have died part way: a merchant it stepped goes on from its mark, the shared clock
   * from where it stands, so advances between that request and this one count too; once ended, nothing moves).
   */
  private async walkAll(target: (now: number) => number, plans?: AdvancePlans): Promise<AdvanceResult> {
    const release = (await this.lease('*', true))!
    // Each merchant to walk is leased before its lead is read, and until the shared offset has moved: another
    // process's advance of its clock meanwhile waits for this jump (as one here waits in its lane), so neither
    // overwrites the other's offset.
    const held = new Map<string, () => Promise<void>>()
    const hold = async (merchant: string) => {
      if (!held.has(merchant)) held.set(merchant, (await this.lease(merchant, true))!)
    }
    try {
      const due = [...new Set([...(await this.storage.reads.jobs.merchants()), ...(await this.deliveries.merchantsPending())])]
      for (const merchant of due) await hold(merchant)
      await this.loadOffsets()
      // One instant for the whole jump: every clock's target is where it stood at `now`, moved by `seconds`. Read
      // again per merchant, a walk of many merchants that took longer than a second walked the later ones past the
      // target (`advance_to: t` ran a job due at t + 1), and two reads of the wall clock could straddle a second.
      const now = this.clock.now()
      const fresh = {id: randomText(16), base: now, offset: this.clock.sharedOffset(), seconds: target(now) - now, leads: Object.fromEntries(due.map((m) => [m, this.clock.lead(m)]))}
      const kept = plans ? await plans.settle(fresh, fresh.base + fresh.seconds) : fresh
      const plan: Extract<AdvancePlan, {leads: unknown}> = 'leads' in kept ? kept : fresh
      if (plan.ended) return {now, jobs: plan.jobs ?? 0, ended: true}
      // What every clock moved since the plan (advances of every clock between its first request's death and this
      // one): the jump goes on from there and adds its seconds to it, so neither is lost.
      const shared = this.clock.sharedOffset()
      const since = shared - plan.offset
      const merchants = [...new Set([...Object.keys(plan.leads), ...due])]
      for (const merchant of merchants) await hold(merchant)
      // Each merchant keeps its lead: one the first request stepped as its mark says (its stored offset is that walk's
      // pinned time), with its own advances since; any other as it stands, its own advances since included.
      const stored = new Map((await this.storage.reads.metaWithPrefix(`${WALK_KEY}:`)).map(([k, v]) => [k.slice(WALK_KEY.length + 1), parseMarks(v)]))
      const leads: Record<string, number> = {}
      for (const merchant of merchants) {
        const marks = stored.get(merchant) ?? {}
        leads[merchant] = marks[plan.id] ?? this.clock.lead(merchant)
        if (plans) this.walked.set(merchant, {plan: plan.id, lead: leads[merchant], marks, offset: this.clock.lead(merchant), alone: false})
      }
      let jobs = 0
      this.walkingAll = true
      try {
        // One merchant after another: their work never meets, and each keeps its own time order.
        for (const merchant of merchants) jobs += await this.walk(merchant, plan.base + since + leads[merchant]! + plan.seconds, true)
        return {now: plan.base + since + plan.seconds, jobs}
      } finally {
        // Walked clocks stay pinned at their target while the shared offset moves under them; each keeps its own
        // offset: it moved by `seconds` like every other, not by the walk's wall time less.
        this.clock.moveAll(shared + plan.seconds, leads, merchants)
        this.version += 1
        await this.persist(['', ...merchants], plans ? {plans, plan, jobs} : true).finally(() => {
          this.version += 1
          this.walkingAll = false
          for (const merchant of merchants) this.walked.delete(merchant)
        })
      }
    } finally {
      // Each released whatever the others do: a lease whose release failed stops being renewed and runs out.
      await Promise.allSettled([...held.values()].map((releaseOne) => releaseOne()))
      await release()
    }
  }

  /**
   * Walks the merchant's jump to `target` in time order, leaving its clock pinned there (`all`: pinned at its
   * last due moment, as every clock moves together at the end of the walk); answers how many jobs ran.
   */
  private async walk(merchant: string, target: number, all = false): Promise<number> {
    const {clock, deliveries} = this
    let jobs = 0
    // Deliveries the worker cannot make (it is stopped) must not hold the clock in place.
    let deliveriesStuck = false
    for (;;) {
      const nextJob = await this.storage.reads.jobs.earliest(merchant)
      const nextDelivery = deliveriesStuck ? undefined : await deliveries.nextDue(merchant)
      const candidates = [nextJob, nextDelivery].filter((t): t is number => t !== undefined && t <= target)
      // Nothing (more) due on the way: every clock moves at the end of the walk, so no step is stored for it (a write, and each process's re-read).
      if (all && candidates.length === 0) return jobs
      const at = candidates.length === 0 ? target : Math.min(...candidates)
      const t = clock.pin(merchant, at)
      await this.persist([merchant])
      const ran = await this.runDue(merchant, t)
      jobs += ran
      const attempts = await deliveries.drain(merchant, t)
      if (candidates.length === 0) return jobs
      // Stuck only when nothing ran and the delivery that was due is due still: the worker's own poll
      // may have made the attempt while this step awaited its units, which is progress too.
      if (ran === 0 && attempts === 0 && (await deliveries.nextDue(merchant)) === nextDelivery) deliveriesStuck = true
    }
  }

  /**
   * Keeps the clocks' offsets (`''`: the shared one) across restarts and for other processes on the database,
   * with the walk marks of the merchants a keyed jump here steps (`WALK_KEY`): its first step stores its own, a
   * merchant's own jump moves the others' by what it moved, and the jump's `end` takes its own out (and marks its
   * plan ended, so a request sent again moves nothing).
   */
  private async persist(merchants: readonly string[], end?: true | {plans: AdvancePlans; plan: AdvancePlan; jobs: number}): Promise<void> {
    const offsets = this.clock.offsets()
    const next = new Map<string, Record<string, number>>()
    await this.storage.write(async (tx) => {
      for (const m of merchants) {
        const offset = offsets.get(m) ?? 0
        await tx.setMeta(m === '' ? OFFSET_KEY : `${OFFSET_KEY}:${m}`, String(offset))
        const walked = m === '' ? undefined : this.walked.get(m)
        if (!walked) continue
        const marks = {...walked.marks}
        if (walked.alone) for (const id of Object.keys(marks)) if (id !== walked.plan) marks[id]! += offset - walked.offset
        if (end) delete marks[walked.plan]
        else if (walked.plan !== '') marks[walked.plan] = walked.lead
        if (!sameMarks(marks, walked.marks)) await tx.setMeta(`${WALK_KEY}:${m}`, Object.keys(marks).length > 0 ? JSON.stringify(marks) : '')
        next.set(m, marks)
      }
      if (end && end !== true) await end.plans.end(tx, end.plan, end.jobs)
      await this.sharing.changed(tx)
    })
    // Committed: the marks as stored, and the offsets a later step moves them from.
    for (const [m, marks] of next) {
      const walked = this.walked.get(m)!
      walked.marks = marks
      walked.offset = offsets.get(m) ?? 0
    }
  }

  /** Takes the offsets another process stored, unless a walk here owns the clock (then its own stand). */
  async loadOffsets(): Promise<void> {
    const version = this.version
    const offsets = await readOffsets(this.storage)
    if (!this.walkingAll && this.walking.size === 0 && version === this.version) this.clock.load(offsets)
  }

  /**
   * One tick: what other processes changed (clock offsets among it), then every merchant's due jobs on
   * its own clock, each merchant's under its clock lease: a merchant whose clock another process is
   * walking (or whose jobs another tick is running) is left alone.
   */
  private async tick(): Promise<void> {
    await this.sharing.sync()
    await this.loadOffsets()
    if (this.walkingAll) return
    for (const merchant of await this.storage.reads.jobs.merchants()) {
      if (this.walkingAll) return
      if (this.walking.has(merchant) || !(await this.storage.reads.jobs.next(merchant, this.clock.now(merchant)))) continue
      const release = await this.lease(merchant, false)
      if (!release) continue
      try {
        if (!this.walking.has(merchant)) await this.runDue(merchant, this.clock.now(merchant))
      } finally {
        await release()
      }
    }
  }

  /** Runs due jobs as real time passes. */
  start(): void {
    if (this.timer) return
    let ticking = false
    this.timer = setInterval(() => {
      if (this.walkingAll || ticking || !this.storage.open) return
      ticking = true
      this.tick()
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
