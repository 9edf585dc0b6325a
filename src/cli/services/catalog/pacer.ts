/**
 * Pacing writes by the platform's rate limits. `auto` follows the `X-RateLimit-*` headers where the
 * platform sends them (waits for the window's reset once its budget is spent) and otherwise backs off
 * for exactly a 429's `Retry-After` (the SDK transport retries that request with the same key); `off`
 * never waits; a number spaces writes evenly at N a minute.
 */
import {setTimeout as sleep} from 'node:timers/promises'

import type {ResponseEvent} from '@payapp/sdk/transport'

export type RateMode = 'auto' | 'off' | number

export function parseRate(value: string): RateMode {
  if (value === 'auto' || value === 'off') return value
  const n = Number(value)
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--rate must be auto, off or a number of writes per minute, got "${value}"`)
  return n
}

const header = (e: ResponseEvent, name: string): number | undefined => {
  const raw = e.headers?.[name]
  const n = Number(Array.isArray(raw) ? raw[0] : raw)
  return raw === undefined || !Number.isFinite(n) ? undefined : n
}

export class Pacer {
  #next = 0
  #pausedUntil = 0
  /** Writes the current window still allows, as last reported, minus those sent since. */
  #budget: number | undefined
  #waits = 0

  constructor(
    readonly mode: RateMode,
    private readonly now: () => number = Date.now,
  ) {}

  /** Times a write had to wait for the limit. */
  get waits(): number {
    return this.#waits
  }

  /** Call before each write. */
  async beforeWrite(): Promise<void> {
    if (this.mode === 'off') return
    if (typeof this.mode === 'number') {
      const at = Math.max(this.now(), this.#next)
      this.#next = at + 60_000 / this.mode
      return this.#waitUntil(at)
    }
    for (;;) {
      if (this.#budget !== undefined && this.#budget <= 0 && this.#pausedUntil <= this.now()) this.#budget = undefined
      if (this.#pausedUntil > this.now() && (this.#budget === undefined || this.#budget <= 0)) {
        await this.#waitUntil(this.#pausedUntil)
        continue
      }
      if (this.#budget !== undefined) this.#budget--
      return
    }
  }

  /** Pass as the SDK client's `onResponse`: reads the limit headers and 429s of write responses. */
  readonly observe = (e: ResponseEvent): void => {
    if (this.mode !== 'auto' || e.method === 'GET') return
    if (e.status === 429) {
      this.#pausedUntil = Math.max(this.#pausedUntil, this.now() + (e.retry?.delayMs ?? 1000))
      this.#budget = 0
      return
    }
    const remaining = header(e, 'x-ratelimit-remaining')
    const reset = header(e, 'x-ratelimit-reset')
    if (remaining === undefined || reset === undefined) return
    const resetAt = this.now() + reset * 1000
    // Responses overtake each other: within a window, the lowest remaining count is the true one.
    if (resetAt > this.#pausedUntil + 1000 || this.#budget === undefined) this.#budget = remaining
    else this.#budget = Math.min(this.#budget, remaining)
    this.#pausedUntil = resetAt
  }

  async #waitUntil(at: number): Promise<void> {
    const ms = at - this.now()
    if (ms <= 0) return
    this.#waits++
    await sleep(ms)
  }
}
