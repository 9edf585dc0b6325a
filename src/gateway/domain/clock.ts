/**
 * The test clock (spec: a deterministic clock for renewals, expiries and deliveries): one offset on the
 * wall clock, kept across restarts. Moving it forward walks everything due on the way in time order
 * (scheduler.ts) and answers once it all happened; it never goes back.
 */
import {MAX_CLOCK_ADVANCE_SECONDS} from '@payapp/sdk/schemas/admin'
import {invalid} from '../errors.js'
import type {Platform} from '../platform.js'

export const clockView = (gw: Platform) => ({object: 'clock' as const, now: gw.now(), offset_seconds: gw.clock.offset})

/** By `advance_seconds`, or to `advance_to` (400 `clock_in_past` once the clock passed it). */
export async function advanceClock(gw: Platform, body: {advance_seconds?: number; advance_to?: number}) {
  if (body.advance_to !== undefined) {
    if (body.advance_to < gw.now()) throw invalid('clock_in_past', `The clock already reads ${gw.now()}; it only moves forward`, 'advance_to')
    if (body.advance_to - gw.now() > MAX_CLOCK_ADVANCE_SECONDS) throw invalid('number_too_large', 'advance_to is more than a century ahead', 'advance_to')
  }
  const {jobs} = await gw.advanceClock(body.advance_to !== undefined ? {to: body.advance_to} : {seconds: body.advance_seconds!})
  return {...clockView(gw), jobs_run: jobs}
}
