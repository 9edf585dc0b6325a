/**
 * The test clock (spec: a deterministic clock for renewals, expiries and deliveries): one offset on the
 * wall clock, kept across restarts. Moving it forward moves every time rule together; it never goes back.
 */
import type {Platform} from '../platform.js'

export const clockView = (gw: Platform) => ({object: 'clock' as const, now: gw.now(), offset_seconds: gw.clock.offset})

export function advanceClock(gw: Platform, seconds: number) {
  gw.advanceClock(seconds)
  return clockView(gw)
}
