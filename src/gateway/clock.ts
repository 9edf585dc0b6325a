/**
 * The gateway's one source of time. Every time rule (expiries, idempotency retention, rate-limit
 * windows) reads it, so `POST /_admin/clock` moves them all together.
 */
export class Clock {
  constructor(private offsetSeconds = 0) {}

  /** Unix seconds, test clock applied. */
  now(): number {
    return Math.floor(Date.now() / 1000) + this.offsetSeconds
  }

  get offset(): number {
    return this.offsetSeconds
  }

  advance(seconds: number): number {
    this.offsetSeconds += seconds
    return this.now()
  }
}
