/**
 * The cluster harness itself (test/helpers/cluster.ts, scripts/cluster.js): the doc's HAProxy config with its
 * ports replaced is a valid config, and nothing it started is left running after `stop()`, nor after a start
 * that failed half-way.
 */
import {execFileSync, spawnSync} from 'node:child_process'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {expect} from 'chai'

import {HAPROXY} from '../../scripts/cluster.js'
import {haproxyConfig, startCluster} from '../helpers/cluster.js'

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** This process's children now (pgrep -P). */
const children = () => spawnSync('pgrep', ['-P', String(process.pid)], {encoding: 'utf8'}).stdout.split('\n').filter(Boolean).map(Number)

describe('cluster harness', function () {
  this.timeout(60_000)

  it('the doc’s haproxy.cfg with other ports and five servers passes `haproxy -c`', () => {
    const config = haproxyConfig(14300, [14301, 14302, 14303, 14304, 14305])
    expect(config.match(/^\s*server gw\d 127\.0\.0\.1:1430\d check inter 1s fall 2 rise 1$/gm) ?? [], config).to.have.length(0)
    expect(config.match(/^\s*server gw\d 127\.0\.0\.1:1430\d$/gm) ?? [], config).to.have.length(5)
    expect(config).to.include('bind 127.0.0.1:14300')
    const file = join(mkdtempSync(join(tmpdir(), 'payapp-haproxy-')), 'haproxy.cfg')
    writeFileSync(file, config)
    execFileSync(HAPROXY, ['-c', '-q', '-f', file])
  })

  it('stop() leaves no gateway process and no balancer running', async () => {
    const cluster = await startCluster({processes: 2})
    const pids = [cluster.balancerPid, ...cluster.processes.map((p) => p.pid)]
    expect(pids.every(alive)).to.equal(true)
    await cluster.stop()
    expect(pids.filter(alive)).to.deep.equal([])
    expect(children().filter((pid) => pids.includes(pid))).to.deep.equal([])
    const refused = await fetch(cluster.url).catch((error: Error) => error)
    expect(refused).to.be.instanceOf(Error)
  })

  it('a start that fails (a flag the gateway refuses) rejects with its message and leaves no child running', async () => {
    const before = children()
    const failed = await startCluster({processes: 3, args: ['--rate-limit', 'bogus=1']}).catch((error: Error) => error)
    expect(failed).to.be.instanceOf(Error).with.property('message').match(/--rate-limit: unknown limit/)
    expect(children().filter((pid) => !before.includes(pid))).to.deep.equal([])
  })
})
