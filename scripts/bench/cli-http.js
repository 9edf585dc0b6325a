/**
 * `node scripts/bench/cli-http.js`: the CLI's `catalog apply` with its node:http sender (src/cli/http-sender.ts,
 * the default) and with the runtime's fetch (PAYAPP_HTTP_CLIENT=fetch), side by side in one run, alternating,
 * each into a fresh merchant of one gateway: writes per second and the CLI process's CPU (user + system) per write.
 * Env: BENCH_CLI_HTTP_PRODUCTS (300, 5 writes each), BENCH_CLI_HTTP_ROUNDS (3).
 */
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {account, catalogue, cliApply, startGateway} from './catalog.js'

const PRODUCTS = Number(process.env.BENCH_CLI_HTTP_PRODUCTS ?? 300)
const ROUNDS = Number(process.env.BENCH_CLI_HTTP_ROUNDS ?? 3)

const work = mkdtempSync(join(tmpdir(), 'payapp-bench-cli-http-'))
// Each CLI process writes its CPU time at exit (the children's rusage is not readable from here).
const probe = join(work, 'cpu.cjs')
writeFileSync(probe, "process.on('exit', () => require('fs').appendFileSync(process.env.BENCH_CPU_FILE, JSON.stringify(process.cpuUsage()) + '\\n'))\n")
const gw = await startGateway(work, 'off')
const totals = {node: {writes: 0, seconds: 0, cpuUs: 0}, fetch: {writes: 0, seconds: 0, cpuUs: 0}}
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const client of round % 2 === 0 ? ['node', 'fetch'] : ['fetch', 'node']) {
      const path = join(work, `catalog-${client}-${round}.json`)
      writeFileSync(path, JSON.stringify(catalogue(PRODUCTS, `${client}${round}-`)))
      const cpuFile = join(work, `cpu-${client}-${round}.jsonl`)
      const env = {PAYAPP_HTTP_CLIENT: client, NODE_OPTIONS: `--require ${probe}`, BENCH_CPU_FILE: cpuFile}
      const token = await account(gw)
      const started = performance.now()
      const {summary} = await cliApply(gw, token, path, work, [], env)
      const seconds = (performance.now() - started) / 1000
      const cpu = readFileSync(cpuFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).reduce((s, c) => s + c.user + c.system, 0)
      totals[client].writes += summary.done
      totals[client].seconds += seconds
      totals[client].cpuUs += cpu
      console.log(`round ${round + 1} ${client.padEnd(5)}: ${summary.done} writes in ${seconds.toFixed(1)} s (${(summary.done / seconds).toFixed(0)}/s), CLI CPU ${(cpu / summary.done).toFixed(0)} µs/write, ${summary.failed} failed`)
    }
  }
  const rate = (t) => t.writes / t.seconds
  const cpu = (t) => t.cpuUs / t.writes
  console.log(`node:http sender: ${rate(totals.node).toFixed(0)} writes/s, ${cpu(totals.node).toFixed(0)} µs CLI CPU per write`)
  console.log(`fetch (undici):   ${rate(totals.fetch).toFixed(0)} writes/s, ${cpu(totals.fetch).toFixed(0)} µs CLI CPU per write`)
  console.log(`fetch/node: throughput ${(rate(totals.fetch) / rate(totals.node)).toFixed(2)}, CPU per write ${(cpu(totals.fetch) / cpu(totals.node)).toFixed(2)}`)
} finally {
  gw.child.kill()
}
