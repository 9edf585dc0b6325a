/**
 * docs/shared-gateway.md's balancer for a machine with fewer cores than gateway processes: its lines (read from
 * the doc, as the benchmark reads them) in the doc's haproxy.cfg, in front of three real gateway processes. The
 * first process takes the requests up to its `maxconn`, the second what the first cannot, the last the rest
 * (no request waits in HAProxy's queue); a dead first process's requests go to the next one.
 */
import {execFileSync} from 'node:child_process'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {expect} from 'chai'

import {HAPROXY} from '../../scripts/cluster.js'
import {clusterForSuite, haproxyConfig, servedBy, servedCounts, smallMachineVariant} from '../helpers/cluster.js'

describe('shared gateway on a small machine: the doc’s `balance first` config', function () {
  this.timeout(90_000)
  const variant = smallMachineVariant()
  const suite = clusterForSuite({processes: 3, balancer: variant})
  /** Each server line's maxconn, NaN where it has none. */
  const limits = variant.servers.map((options) => Number(/\bmaxconn (\d+)\b/.exec(options)?.[1] ?? Number.NaN))

  it('is `balance first` with a maxconn on every server but the last, and a config `haproxy -c` accepts', () => {
    expect(variant.balance).to.equal('first')
    expect(limits.slice(0, -1).every((n) => n > 0), variant.servers.join(' | ')).to.equal(true)
    expect(limits.at(-1), 'the last server takes what the others cannot: no maxconn, so nothing waits in the queue').to.be.NaN
    const file = join(mkdtempSync(join(tmpdir(), 'payapp-haproxy-')), 'haproxy.cfg')
    writeFileSync(file, haproxyConfig(14300, [14301, 14302, 14303], variant))
    execFileSync(HAPROXY, ['-c', '-q', '-f', file])
  })

  it('one request at a time: the first process answers every one', async () => {
    const acct = await suite.gw.account()
    const answers = []
    for (let i = 0; i < 12; i++) answers.push(await acct.store('GET', '/products'))
    for (const r of answers) expect(r.status, r.text).to.equal(200)
    expect(servedBy(answers)).to.deep.equal(['gw1'])
  })

  it('more requests in flight than the first processes’ maxconn: each takes its maxconn, the last the rest, none refused', async () => {
    const acct = await suite.gw.account()
    // Each read held 3 s in the gateway (a latency rule, shared by the processes), so all are in flight at once.
    const rule = await suite.gw.admin('POST', '/faults', {merchant: acct.merchant.id, route: 'GET /products', latency_ms: 3000})
    expect(rule.status, rule.text).to.equal(201)
    const extra = 10
    const total = limits[0]! + limits[1]! + extra
    const answers = await Promise.all(Array.from({length: total}, () => acct.store('GET', '/products')))
    for (const r of answers) expect(r.status, r.text).to.equal(200)
    expect(servedCounts(answers)).to.deep.equal({gw1: limits[0], gw2: limits[1], gw3: extra})
  })

  it('the first process killed: its requests go to the next, none fails', async () => {
    const acct = await suite.gw.account()
    await suite.cluster.processes[0]!.kill('SIGKILL')
    const answers = []
    for (let i = 0; i < 12; i++) answers.push(await acct.store('GET', '/products'))
    for (const r of answers) expect(r.status, r.text).to.equal(200)
    expect(servedBy(answers)).to.deep.equal(['gw2'])
  })
})
