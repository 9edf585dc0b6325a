/**
 * Whole-process timings beside `node -e 0`, shared by the start-up benchmarks (startup.js, sdk.js): each command
 * runs once to warm the page cache, then all are interleaved round by round so machine load hits them alike;
 * each result is the median of its runs, reported as a ratio to the first command (the bare node).
 */
import {spawnSync} from 'node:child_process'

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

function timeOnce(args, opts) {
  const t0 = process.hrtime.bigint()
  const r = spawnSync(process.execPath, args, {...opts, stdio: ['ignore', 'pipe', 'pipe']})
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr}`)
  return ms
}

/**
 * `commands`: name → {args, label, target?}, the bare node first. Prints one line per command under `title` and
 * returns `{runs, <name>_ms, <name>_ratio…}` (`node_ms` for the first).
 */
export function timeProcesses(title, commands, {runs, cwd, env}) {
  const entries = Object.entries(commands)
  const times = Object.fromEntries(entries.map(([name]) => [name, []]))
  for (const [, {args}] of entries) timeOnce(args, {cwd, env})
  for (let i = 0; i < runs; i++) for (const [name, {args}] of entries) times[name].push(timeOnce(args, {cwd, env}))
  const ms = Object.fromEntries(entries.map(([name]) => [name, median(times[name])]))
  const base = ms[entries[0][0]]
  console.log(`\n${title} (median of ${runs} interleaved runs each)`)
  const results = {runs}
  for (const [name, {label, target}] of entries) {
    const ratio = ms[name] / base
    console.log(`  ${label.padEnd(48)} ${ms[name].toFixed(0).padStart(6)} ms   ${ratio.toFixed(2)}×${target ? ` (target ≤ ${target.toFixed(1)}×)` : ''}`)
    results[`${name}_ms`] = ms[name]
    if (name !== entries[0][0]) results[`${name}_ratio`] = ratio
  }
  return results
}
