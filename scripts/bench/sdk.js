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
import {dirname, join} from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'

import {timeProcesses} from './processes.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
// Run from the SDK's folder, so '@payapp/sdk' resolves as in an app that depends on it (its built files, not the sources).
const CWD = join(ROOT, 'packages', 'sdk')

const FIRST_USE = `const app = new sdk.AppClient({token: 'app_test_x', baseUrl: 'http://127.0.0.1:9'}); sdk.schemas.product.safeParse({})`
const esm = (code) => ['--input-type=module', '-e', code]

export async function run({runs = Number(process.env.BENCH_RUNS ?? 21)} = {}) {
  return timeProcesses(
    "The SDK's load cost",
    {
      node: {args: ['-e', '0'], label: 'node -e 0'},
      // The floor under any ES module import of the SDK: zod's own modules (its classic API loads ~110 files, 64 of them locales).
      zod_esm: {args: esm("await import('zod')"), label: "await import('zod')  (the SDK's one dependency)"},
      esm: {args: esm("await import('@payapp/sdk')"), label: "await import('@payapp/sdk')  (ESM; zod's own import is the floor)"},
      cjs: {args: ['-e', "require('@payapp/sdk')"], label: "require('@payapp/sdk')  (CommonJS)"},
      esm_first_use: {args: esm(`const sdk = await import('@payapp/sdk'); ${FIRST_USE}`), label: 'ESM import + new AppClient + parse a product'},
    },
    {runs, cwd: CWD},
  )
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) console.log(JSON.stringify(await run()))
