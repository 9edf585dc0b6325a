/**
 * The gateway's per-process state, each piece behind an interface: the credential cache, the read
 * cache, the rate limiter's counters and the fault rules. What must be one for every gateway process
 * on a database is in storage (docs/architecture.md, "Per-process state"): the fault rules always
 * (`StoredFaults`), the rate-limit counts on a file or server database as soon as a second process runs
 * on it (`HandoverRateCounters`: in memory while one process is alone, then `StoredRateCounters`; a
 * `:memory:` database keeps `MemoryRateCounters`). The caches stay in memory and are
 * invalidated across processes by the shared version each request compares (`Platform.sync`).
 */
import type {DeliveryTarget, FaultInput, FaultRule} from './domain/faults.js'
import {Faults} from './domain/faults.js'
import {type Storage, StorageUnavailable, type Store} from './storage/storage.js'

/** token → what it authenticates as (null: no valid credential), so a request never reads storage twice. */
export interface CredentialCache<C> {
  get(token: string): C | null | undefined
  set(token: string, credential: C | null): void
  /** Forgets every answer: a revoked credential must fail on its very next request, in every process. */
  invalidate(): void
}

/** Computed reads, each valid while the storage generation it was computed at is current. */
export interface ReadCache {
  get(key: string, generation: string): unknown
  set(key: string, generation: string, value: unknown): void
}

/** Request counts per key in fixed windows (`window` numbers the window). */
export interface RateCounters {
  /**
   * Counts one request of `key` in `window` and says how many there were in it so far. `writes`: the
   * request goes on to a unit of work of its own (whose commit its answer waits for).
   */
  hit(key: string, window: number, writes?: boolean): number | Promise<number>
}

/**
 * Fault-injection rules (domain/faults.ts), as the routes and the admin API use them. The admin API's
 * calls take the request's unit (`store`); `forDelivery` the unit queueing the delivery.
 */
export interface FaultRules {
  /** Whether some rule applies to API requests (webhook rules do not), as last read. */
  readonly forApi: boolean
  readonly byMerchant: boolean
  add(store: Store, input: FaultInput): Promise<FaultRule>
  list(store: Store): Promise<FaultRule[]>
  get(store: Store, id: string): Promise<FaultRule | undefined>
  remove(store: Store, id: string): Promise<boolean>
  clear(store: Store): Promise<number>
  /** The first API rule that strikes this request, if any (consuming its draw and count, in storage). */
  strike(req: {method: string; pattern: string; path: string; endpoint?: string; merchant?: string}): Promise<FaultRule | undefined>
  /** The webhook rule that strikes a delivery being queued in `store`'s unit, if any. */
  forDelivery(store: Store, target: DeliveryTarget): Promise<FaultRule | undefined>
  /** Re-reads which kinds of rules exist (another process may have changed them). */
  refresh(): Promise<void>
}

export class MemoryCredentialCache<C> implements CredentialCache<C> {
  private readonly entries = new Map<string, C | null>()

  get(token: string): C | null | undefined {
    return this.entries.get(token)
  }

  set(token: string, credential: C | null): void {
    // Unbounded tokens (a scan of guesses) must not grow the process: start over past 10,000.
    if (this.entries.size > 10_000) this.entries.clear()
    this.entries.set(token, credential)
  }

  invalidate(): void {
    this.entries.clear()
  }
}

export class MemoryReadCache implements ReadCache {
  private readonly entries = new Map<string, {generation: string; value: unknown}>()

  get(key: string, generation: string): unknown {
    const hit = this.entries.get(key)
    return hit && hit.generation === generation ? hit.value : undefined
  }

  set(key: string, generation: string, value: unknown): void {
    if (this.entries.size >= 5000) this.entries.clear()
    this.entries.set(key, {generation, value})
  }
}

export class MemoryRateCounters implements RateCounters {
  private window = -1
  private readonly counts = new Map<string, number>()

  /** The counts of the current window, by key. */
  current(): {window: number; counts: [key: string, count: number][]} {
    return {window: this.window, counts: [...this.counts]}
  }

  hit(key: string, window: number): number {
    if (window !== this.window) {
      this.window = window
      this.counts.clear()
    }
    const count = (this.counts.get(key) ?? 0) + 1
    this.counts.set(key, count)
    return count
  }
}

/** Rate-limit counts in storage (`rates`): one count per key and window for every process on the database. */
export class StoredRateCounters implements RateCounters {
  private window = -1

  constructor(private readonly storage: Storage) {}

  hit(key: string, window: number, writes = false): Promise<number> {
    const counted = this.storage.write(
      async (tx) => {
        // Counts of past windows go once per window and process.
        if (window !== this.window) {
          this.window = window
          await tx.rates.prune(window - 1)
        }
        return tx.rates.hit(key, window)
      },
      // A write's count is answered as soon as it is made (its own unit's commit follows; a crash may lose
      // the count, harmlessly): waiting for two commits cost writes 0.56x of their rate. A read's waits
      // for the batch's commit, which groups more reads per commit (measured: 1.8x the reads per second).
      {durable: !writes},
    )
    // A database that takes no writes for now (a switchover: StorageUnavailable.readOnly) still serves reads: the
    // request goes on uncounted, rather than every read answering 503 for a count. A write fails on its own unit.
    return counted.catch((error: unknown) => {
      if (error instanceof StorageUnavailable && error.readOnly) return 0
      throw error
    })
  }
}

/**
 * The rate-limit counts of a file or server database, which other processes may join: kept in memory
 * while this process is alone on it (no storage write per request), in storage from the moment another
 * process joins. `share()` switches at once and hands back what memory counted in the current window,
 * for the caller to add to storage before the joining process counts (Platform: `start`, `leaveAlone`).
 */
export class HandoverRateCounters implements RateCounters {
  private memory: MemoryRateCounters | undefined

  constructor(private readonly stored: StoredRateCounters) {}

  /** Counts in memory from now on (this process is alone on the database). */
  alone(): void {
    this.memory ??= new MemoryRateCounters()
  }

  /** Counts in storage from now on; the counts memory made in the current window (undefined: none kept). */
  share(): ReturnType<MemoryRateCounters['current']> | undefined {
    const carried = this.memory?.current()
    this.memory = undefined
    return carried
  }

  hit(key: string, window: number, writes = false): number | Promise<number> {
    return this.memory ? this.memory.hit(key, window) : this.stored.hit(key, window, writes)
  }
}

/**
 * The fault rules in storage (`faults`): a rule added through one process strikes on every process's
 * next request, and a rule's count, hits and seeded draws are one sequence for the whole gateway (a
 * strike reads and updates the rules in one unit). Which kinds of rules exist is kept here, so a
 * request costs nothing while there are none; `refresh` re-reads it when they changed (through another
 * process, or in a unit of this one once it settled).
 */
export class StoredFaults implements FaultRules {
  private kinds = {api: false, merchant: false, webhooks: false}
  /**
   * Numbers the reads of the rules in the order they began (`began`), and the one the kinds come from
   * (`kindsFrom`). A read that answers after a later one was taken leaves the kinds alone: it may have
   * missed a change the later one saw (a re-read running in the background while a rule is added must not
   * hide the rule from the next request). A read sees every commit made before it began, so the kinds
   * always hold all of those of the read they come from.
   */
  private began = 0
  private kindsFrom = 0

  constructor(
    private readonly storage: Storage,
    private readonly now: () => number,
    /**
     * Marks the rules changed, in the changing unit: for the other processes (the shared version) and for this
     * one, which re-reads their kinds once the unit settled (`Platform.write`).
     */
    private readonly changed: (store: Store) => Promise<void>,
  ) {}

  get forApi(): boolean {
    return this.kinds.api
  }

  get byMerchant(): boolean {
    return this.kinds.merchant
  }

  private async load(store: Store): Promise<Faults> {
    return (await this.rows(store)).faults
  }

  private async rows(store: Store): Promise<{faults: Faults; draws: Map<string, number>}> {
    const read = ++this.began
    const rows = await store.faults.all()
    const faults = Faults.from(rows, this.now)
    if (read > this.kindsFrom) {
      this.kindsFrom = read
      this.kinds = {api: faults.forApi, merchant: faults.byMerchant, webhooks: faults.forWebhooks}
    }
    return {faults, draws: new Map(rows.map((r) => [r.id, r.draws]))}
  }

  /** Stores the rules a strike changed: the one that struck (hits, count) and every one that drew. */
  private async save(store: Store, faults: Faults, draws: ReadonlyMap<string, number>, struck: FaultRule | undefined): Promise<void> {
    for (const [id, before] of draws) {
      const row = faults.stored(id)
      if (id === struck?.id || row.draws !== before) await store.faults.update(row)
    }
  }

  async refresh(): Promise<void> {
    await this.load(this.storage.reads)
  }

  async add(store: Store, input: FaultInput): Promise<FaultRule> {
    const faults = new Faults(this.now)
    const rule = faults.add(input)
    await store.faults.insert(faults.stored(rule.id))
    await this.changed(store)
    return rule
  }

  async list(store: Store): Promise<FaultRule[]> {
    return (await this.load(store)).list()
  }

  async get(store: Store, id: string): Promise<FaultRule | undefined> {
    return (await this.load(store)).get(id)
  }

  async remove(store: Store, id: string): Promise<boolean> {
    const removed = await store.faults.remove(id)
    await this.changed(store)
    return removed
  }

  async clear(store: Store): Promise<number> {
    const n = await store.faults.clear()
    await this.changed(store)
    return n
  }

  async strike(req: {method: string; pattern: string; path: string; endpoint?: string; merchant?: string}): Promise<FaultRule | undefined> {
    if (!this.kinds.api) return undefined
    return this.storage.write(async (tx) => {
      const {faults, draws} = await this.rows(tx)
      const rule = faults.strike(req)
      await this.save(tx, faults, draws, rule)
      return rule
    })
  }

  async forDelivery(store: Store, target: DeliveryTarget): Promise<FaultRule | undefined> {
    if (!this.kinds.webhooks) return undefined
    const {faults, draws} = await this.rows(store)
    const rule = faults.forDelivery(target)
    await this.save(store, faults, draws, rule)
    return rule
  }
}
