#!/usr/bin/env node
/**
 * `npm run bench`, the SDK's load cost for an app: `import('@payapp/sdk')` (the ESM build) and
 * `require('@payapp/sdk')` (the CommonJS build) each as a whole process, beside a bare `node -e 0`,
 * interleaved round by round so machine load hits all alike; medians, as ratios to `node -e 0`.
 * `import('zod')` alone is printed beside them: the floor of the ESM import, which loads zod's ES modules.
 * Then, to see that a first use pays only for what it uses, the ESM import plus constructing an AppClient and
 * parsing a product with its schema.
 *
 * Runs alone (`node scripts/bench/sdk.js`, after `npm run build`) or from scripts/bench.js. Env: BENCH_RUNS (21).
 */
import {spawnSync} from 'node:child_process'
import {dirname, join} from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
// Run from the SDK's folder, so '@payapp/sdk' resolves as in an app that depends on it (its built files, not the sources).
const CWD = join(ROOT, 'packages', 'sdk')
const TARGET_ESM = 1.6

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

const FIRST_USE = `const app = new sdk.AppClient({token: 'app_test_x', baseUrl: 'http://127.0.0.1:9'}); sdk.schemas.product.safeParse({})`
const CASES = {
  node: ['-e', '0'],
  // The floor under any ESM import of the SDK: zod's own ES modules (its classic API loads ~110 files, 64 of them locales).
  zod_esm: ['--input-type=module', '-e', "await import('zod')"],
  esm: ['--input-type=module', '-e', "await import('@payapp/sdk')"],
  cjs: ['-e', "require('@payapp/sdk')"],
  esm_first_use: ['--input-type=module', '-e', `const sdk = await import('@payapp/sdk'); ${FIRST_USE}`],
}

function timeOnce(args) {
  const t0 = process.hrtime.bigint()
  const r = spawnSync(process.execPath, args, {cwd: CWD, stdio: ['ignore', 'pipe', 'pipe']})
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr}`)
  return ms
}

export async function run({runs = Number(process.env.BENCH_RUNS ?? 21)} = {}) {
  const times = Object.fromEntries(Object.keys(CASES).map((name) => [name, []]))
  for (const args of Object.values(CASES)) timeOnce(args) // warm the page cache
  for (let i = 0; i < runs; i++) for (const [name, args] of Object.entries(CASES)) times[name].push(timeOnce(args))
  const ms = Object.fromEntries(Object.entries(times).map(([name, xs]) => [name, median(xs)]))
  const ratio = (name) => ms[name] / ms.node
  const line = (label, name, target) =>
    `  ${label.padEnd(44)} ${ms[name].toFixed(0).padStart(6)} ms   ${ratio(name).toFixed(2)}×${target ? ` (target ≤ ${target.toFixed(1)}×)` : ''}`
  console.log(`\nThe SDK's load cost (median of ${runs} interleaved runs each)`)
  console.log(line('node -e 0', 'node'))
  console.log(line("await import('zod')  (the SDK's one dependency)", 'zod_esm'))
  console.log(line("await import('@payapp/sdk')  (ESM)", 'esm', TARGET_ESM))
  console.log(line("require('@payapp/sdk')  (CommonJS)", 'cjs'))
  console.log(line('ESM import + new AppClient + parse a product', 'esm_first_use'))
  return {
    runs,
    node_ms: ms.node,
    zod_esm_ms: ms.zod_esm,
    zod_esm_ratio: ratio('zod_esm'),
    esm_ms: ms.esm,
    esm_ratio: ratio('esm'),
    cjs_ms: ms.cjs,
    cjs_ratio: ratio('cjs'),
    esm_first_use_ms: ms.esm_first_use,
    esm_first_use_ratio: ratio('esm_first_use'),
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  run().then(
    (results) => console.log(JSON.stringify(results)),
    (error) => {
      console.error(error)
      process.exitCode = 1
    },
  )
}
