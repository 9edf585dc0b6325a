/**
 * The gateway's one source of time. Every time rule (expiries, renewals, idempotency retention,
 * rate-limit windows) reads it, so `POST /_admin/clock` moves them all together.
 *
 * Normally the clock runs with the wall clock plus an offset. While the scheduler advances it, the
 * clock is pinned to the moment of the work being done, so every object and event that work writes
 * carries that moment, never the wall time at which the gateway happened to compute it.
 */
export class Clock {
  private pinned: number | undefined

  constructor(private offsetSeconds = 0) {}

  /** Unix seconds, test clock applied. */
  now(): number {
    return this.pinned ?? Math.floor(Date.now() / 1000) + this.offsetSeconds
  }

  get offset(): number {
    return this.pinned === undefined ? this.offsetSeconds : this.pinned - Math.floor(Date.now() / 1000)
  }

  /** Holds the clock at `t` (never earlier than it reads now) until `release`. */
  pin(t: number): number {
    this.pinned = Math.max(t, this.now())
    return this.pinned
  }

  /** Lets the clock run again from where it was pinned. */
  release(): void {
    if (this.pinned === undefined) return
    this.offsetSeconds = this.pinned - Math.floor(Date.now() / 1000)
    this.pinned = undefined
  }

  advance(seconds: number): number {
    if (this.pinned !== undefined) this.pinned += seconds
    else this.offsetSeconds += seconds
    return this.now()
  }
}
