/**
 * The gateway's per-process state, each piece behind an interface with its in-process implementation:
 * the credential cache, the read cache, the rate limiter's counters and the fault rules. One process
 * keeps them in memory; several processes sharing one database (the PostgreSQL issue) give each a
 * shared implementation (a table, a LISTEN/NOTIFY invalidation) without touching the code that uses them.
 */
import type {Faults, FaultInput, FaultRule} from './domain/faults.js'

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
  /** Counts one request of `key` in `window` and says how many there were in it so far. */
  hit(key: string, window: number): number
}

/** Fault-injection rules (domain/faults.ts), as the routes and the admin API use them. */
export interface FaultRules {
  readonly size: number
  /** Whether some rule applies to API requests (webhook rules do not). */
  readonly forApi: boolean
  readonly byMerchant: boolean
  add(input: FaultInput): FaultRule
  list(): FaultRule[]
  get(id: string): FaultRule | undefined
  remove(id: string): boolean
  clear(): number
  strike(req: {method: string; pattern: string; path: string; endpoint?: string; merchant?: string}): FaultRule | undefined
  /** The webhook rule that strikes a delivery being queued, if any. */
  forDelivery: Faults['forDelivery']
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
