/**
 * The gateway's time: one test clock per merchant. Every time rule (expiries, renewals, webhook
 * attempts, the timestamps of objects and events) reads its merchant's clock, so `POST /_admin/clock`
 * with a merchant moves that merchant's work alone; without one, every clock moves together.
 *
 * A merchant's clock is the wall clock plus the shared offset plus the merchant's own offset. Both live
 * in storage (another process on the database reads them on its next tick); here they are cached, so
 * reading the time costs no query. While the scheduler walks a merchant's jump, that merchant's clock is
 * pinned to the moment of the work being done, so everything the work writes carries that moment.
 */
const wall = () => Math.floor(Date.now() / 1000)

export class Clock {
  /** The merchants' own offsets, on top of the shared one. */
  private readonly own = new Map<string, number>()
  private readonly pinned = new Map<string, number>()

  constructor(private shared = 0) {}

  /** Unix seconds on the merchant's clock (the shared clock without one). */
  now(merchant?: string): number {
    const pinned = merchant === undefined ? undefined : this.pinned.get(merchant)
    return pinned ?? wall() + this.shared + (merchant === undefined ? 0 : (this.own.get(merchant) ?? 0))
  }

  /** Seconds the merchant's clock (the shared one without a merchant) runs ahead of the wall clock. */
  offset(merchant?: string): number {
    return this.now(merchant) - wall()
  }

  /** Seconds the shared clock runs ahead of the wall clock (one read of it: `offset()` reads the wall clock twice). */
  sharedOffset(): number {
    return this.shared
  }

  /** Seconds the merchant's clock runs ahead of the shared one (its own offset), whatever the wall clock says. */
  lead(merchant: string): number {
    return this.own.get(merchant) ?? 0
  }

  /** The offsets to store: `''` for the shared one, else per merchant (pinned merchants as they will be released). */
  offsets(): Map<string, number> {
    const out = new Map<string, number>([['', this.shared]])
    for (const [m, o] of this.own) out.set(m, o)
    for (const [m, t] of this.pinned) out.set(m, t - wall() - this.shared)
    return out
  }

  /** Takes offsets read from storage (another process may have moved a clock); pinned merchants keep theirs. */
  load(offsets: ReadonlyMap<string, number>): void {
    this.shared = offsets.get('') ?? 0
    this.own.clear()
    for (const [m, o] of offsets) if (m !== '' && o !== 0) this.own.set(m, o)
  }

  /** Holds the merchant's clock at `t` (never earlier than it reads now) until `release`. */
  pin(merchant: string, t: number): number {
    const at = Math.max(t, this.now(merchant))
    this.pinned.set(merchant, at)
    return at
  }

  /** Lets the merchant's clock run again from where it was pinned. */
  release(merchant: string): void {
    const at = this.pinned.get(merchant)
    if (at === undefined) return
    this.pinned.delete(merchant)
    const own = at - wall() - this.shared
    if (own === 0) this.own.delete(merchant)
    else this.own.set(merchant, own)
  }

  /**
   * Ends a walk of every clock (the scheduler's `walkAll`): the shared offset becomes `offset` and the walked
   * merchants' clocks, pinned at their targets until now, run again at their `leads` on it.
   */
  moveAll(offset: number, leads: Readonly<Record<string, number>>, walked: readonly string[]): void {
    for (const merchant of walked) this.pinned.delete(merchant)
    this.shared = offset
    for (const [merchant, lead] of Object.entries(leads)) {
      if (lead === 0) this.own.delete(merchant)
      else this.own.set(merchant, lead)
    }
  }
}
