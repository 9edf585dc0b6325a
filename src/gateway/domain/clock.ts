/**
 * The test clocks (spec: a deterministic clock for renewals, expiries and deliveries): one per merchant,
 * an offset on the wall clock kept in storage. Moving one forward walks everything of that merchant due
 * on the way in time order (scheduler.ts) and answers once it all happened; without a merchant, every
 * clock moves together. A clock never goes back.
 */
import {MAX_CLOCK_ADVANCE_SECONDS} from '@payapp/sdk/schemas/admin'
import {invalid} from '../errors.js'

/** One merchant's test clock (the shared one when `merchant` is null) as its rules see it; the platform's scheduler walks a jump (it is not a unit of work). */
export interface TestClock {
  readonly merchant: string | null
  now(): number
  readonly offset: number
  advance(by: {seconds: number} | {to: number}): Promise<{jobs: number}>
}

export const clockView = (clock: TestClock) => ({object: 'clock' as const, merchant: clock.merchant, now: clock.now(), offset_seconds: clock.offset})

/**
 * By `advance_seconds`, or to `advance_to` (400 `clock_in_past` once the clock passed it), unless `joined`: a
 * request sent again with its Idempotency-Key walks the jump its first request began, which may have passed it.
 */
export async function advanceClock(clock: TestClock, body: {advance_seconds?: number; advance_to?: number}, {joined = false}: {joined?: boolean} = {}) {
  if (body.advance_to !== undefined) {
    if (body.advance_to < clock.now() && !joined) throw invalid('clock_in_past', `The clock already reads ${clock.now()}; it only moves forward`, 'advance_to')
    if (body.advance_to - clock.now() > MAX_CLOCK_ADVANCE_SECONDS) throw invalid('number_too_large', 'advance_to is more than a century ahead', 'advance_to')
  }
  const {jobs} = await clock.advance(body.advance_to !== undefined ? {to: body.advance_to} : {seconds: body.advance_seconds!})
  return {...clockView(clock), jobs_run: jobs}
}
