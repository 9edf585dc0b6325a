#!/usr/bin/env node
/**
 * Only the read workload of `npm run bench` (25 full products, GET /v1/app/products?limit=25, a cached read)
 * beside the bare node:http server answering the captured bytes: each server warmed up for 3 s, then
 * measured in BENCH_ROUNDS (3) rounds of BENCH_SECONDS (6) at 50 connections, every server in turn, with each
 * process's CPU per request (/proc). For work on the read path without the whole bench.
 * Env: GATEWAYS=dirA,dirB compares checkouts (each with bin/ and a built dist/) side by side, one process
 * each on its own SQLite file; GATEWAY_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=DIR" profiles them.
 */
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

import autocannon from 'autocannon'

import {LIST_PATH, call, cpuMs, seedReads, startJsonServer} from './gateway-workloads.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const work = mkdtempSync(join(tmpdir(), 'payapp-bench-reads-'))
const children = []
const load = (opts) =>
  new Promise((resolve, reject) => autocannon({connections: 50, duration: SECONDS, pipelining: 1, ...opts}, (e, r) => (e ? reject(e) : resolve(r))))
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

async function main() {
  const targets = []
  for (const [i, root] of (process.env.GATEWAYS ?? ROOT).split(',').entries()) {
    const args = [...(process.env.GATEWAY_NODE_OPTIONS ?? '').split(' ').filter(Boolean), join(root, 'bin', 'run.js'), 'gateway', 'start']
    args.push('--port', '0', '--db', join(work, `gateway-${i}.sqlite`), '--rate-limit', 'off', '--json', '--no-save-profile')
    const {child, info} = await startJsonServer(children, args, {cwd: ROOT, env: {XDG_CONFIG_HOME: join(work, 'config'), PAYAPP_KEYCHAIN: 'off'}})
    const {token} = await seedReads(info.url, info.admin_key)
    targets.push({label: root, child, url: info.url, headers: {authorization: `Bearer ${token}`}})
  }
  const captured = await call(targets[0].url, 'GET', LIST_PATH, targets[0].headers.authorization.slice(7))
  writeFileSync(join(work, 'list.json'), captured.text)
  const bareArgs = [join(ROOT, 'scripts', 'bare-server.js'), join(work, 'list.json'), '200', captured.contentType]
  const {child, info} = await startJsonServer(children, bareArgs, {cwd: ROOT})
  targets.unshift({label: 'bare node:http', child, url: info.url, headers: {}})
  for (const t of targets) await load({url: t.url + LIST_PATH, headers: t.headers, duration: 3})
  const runs = new Map(targets.map((t) => [t, []]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const t of targets) {
      const cpu0 = cpuMs(t.child.pid)
      const r = await load({url: t.url + LIST_PATH, headers: t.headers})
      const run = {rps: r.requests.average, p99: r.latency.p99, cpu: ((cpuMs(t.child.pid) - cpu0) * 1000) / r.requests.total, errors: r.non2xx + r.errors + r.timeouts}
      runs.get(t).push(run)
      console.log(`round ${round + 1} ${t.label}: ${run.rps.toFixed(0)} req/s, p99 ${run.p99} ms, CPU ${run.cpu.toFixed(0)} µs/req, errors ${run.errors}`)
    }
  }
  const bare = median(runs.get(targets[0]).map((x) => x.rps))
  for (const t of targets.slice(1)) {
    const r = runs.get(t)
    console.log(`median ${t.label}: ${median(r.map((x) => x.rps)).toFixed(0)} req/s, ${(median(r.map((x) => x.rps)) / bare).toFixed(2)} of bare, CPU ${median(r.map((x) => x.cpu)).toFixed(0)} µs/req (bare ${median(runs.get(targets[0]).map((x) => x.cpu)).toFixed(0)})`)
  }
}

try {
  await main()
} finally {
  // SIGINT: a gateway closes its database (and writes a --cpu-prof profile).
  await Promise.all(children.map((c) => new Promise((resolve) => {
    c.removeAllListeners('exit')
    if (c.exitCode !== null) return resolve()
    c.once('exit', resolve)
    c.kill('SIGINT')
  })))
  rmSync(work, {recursive: true, force: true})
}
