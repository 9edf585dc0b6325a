/**
 * The cluster harness itself (test/helpers/cluster.ts, scripts/cluster.js): the doc's HAProxy config with its
 * ports replaced is a valid config, and nothing it started is left running after `stop()`, nor after a start
 * that failed half-way.
 */
import {execFileSync, spawnSync} from 'node:child_process'
import {createServer, type IncomingMessage, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {expect} from 'chai'

import {HAPROXY, HAPROXY_NICE, startBalancer} from '../../scripts/cluster.js'
import {ROOT} from '../helpers/cli.js'
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

  it('a benchmark’s variant of the config replaces the doc’s balance algorithm, threads and server options', () => {
    const doc = haproxyConfig(14300, [14301])
    expect(doc).to.match(/^\s*nbthread 1$/m)
    expect(doc).to.match(/^\s*balance leastconn$/m)
    const variant = haproxyConfig(14300, [14301, 14302], {balance: 'roundrobin', threads: 2, server: 'maxconn 8'})
    expect(variant).to.match(/^\s*nbthread 2$/m)
    expect(variant).to.match(/^\s*balance roundrobin$/m)
    expect(variant.match(/^\s*server gw\d 127\.0\.0\.1:1430\d maxconn 8$/gm) ?? [], variant).to.have.length(2)
    const file = join(mkdtempSync(join(tmpdir(), 'payapp-haproxy-')), 'haproxy.cfg')
    writeFileSync(file, variant)
    execFileSync(HAPROXY, ['-c', '-q', '-f', file])
  })

  it('runs HAProxy at the niceness the doc starts it with, its pid HAProxy’s own; a variant at another', async () => {
    expect(readFileSync(join(ROOT, 'docs', 'shared-gateway.md'), 'utf8')).to.include(`nice -n ${HAPROXY_NICE} haproxy -db -f docs/shared-gateway/haproxy.cfg`)
    const server = createServer((req: IncomingMessage, res: ServerResponse) => void res.writeHead(req.url === '/health' ? 200 : 401).end())
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    /** The process's name and niceness (/proc/PID/stat: its 2nd and 19th fields). */
    const stat = (pid: number) => {
      const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
      return {name: text.slice(text.indexOf('(') + 1, text.lastIndexOf(')')), nice: Number(text.slice(text.lastIndexOf(') ') + 2).split(' ')[16])}
    }
    const ours = stat(process.pid).nice
    try {
      for (const [opts, nice] of [[{}, ours + HAPROXY_NICE], [{nice: 0}, ours]] as const) {
        const balancer = await startBalancer([(server.address() as AddressInfo).port], opts)
        try {
          expect(stat(balancer.pid), JSON.stringify(opts)).to.deep.equal({name: 'haproxy', nice: Math.min(nice, 19)})
        } finally {
          await balancer.stop()
        }
      }
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
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

  /** Two stand-ins for gateway processes, each passing the health check: one that fails every request it gets, one that answers. */
  async function throughFailing(failing: (req: IncomingMessage, res: ServerResponse) => void) {
    const seen = {failing: [] as string[], healthy: [] as string[]}
    const backend = (name: 'failing' | 'healthy') =>
      createServer((req: IncomingMessage, res: ServerResponse) => {
        req.resume()
        req.on('end', () => {
          if (req.url === '/health') return void res.writeHead(200).end()
          seen[name].push(`${req.method} ${req.headers['x-test']}`)
          if (name === 'failing') return failing(req, res)
          res.writeHead(200, {'content-type': 'application/json'}).end('{}')
        })
      })
    const servers = [backend('failing'), backend('healthy')]
    await Promise.all(servers.map((srv) => new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve))))
    const balancer = await startBalancer(servers.map((srv) => (srv.address() as AddressInfo).port))
    try {
      const send = (method: string, tag: string, key?: string, path = '/v1/app/products') =>
        fetch(`${balancer.url}${path}`, {method, headers: {'x-test': tag, 'content-type': 'application/json', ...(key ? {'idempotency-key': key} : {})}, body: method === 'POST' ? '{}' : undefined}).then((r) => r.status, () => 599)
      // One at a time, four of each kind: round robin sends some of each to the failing process first.
      const statuses: Record<string, number[]> = {get: [], keyed: [], unkeyed: [], clock: []}
      for (let i = 0; i < 4; i++) statuses.get!.push(await send('GET', `get-${i}`))
      for (let i = 0; i < 4; i++) statuses.keyed!.push(await send('POST', `keyed-${i}`, `key-${i}`))
      for (let i = 0; i < 4; i++) statuses.unkeyed!.push(await send('POST', `unkeyed-${i}`))
      // A keyed clock advance: many units of work, walked once per key all the same (its resend finishes its jump).
      for (let i = 0; i < 4; i++) statuses.clock!.push(await send('POST', `clock-${i}`, `clock-key-${i}`, '/_admin/clock'))
      const reached = (kind: string) => seen.failing.filter((t) => t.includes(` ${kind}-`))
      for (const kind of ['get', 'keyed', 'unkeyed', 'clock']) expect(reached(kind), `the failing process got some ${kind}: ${seen.failing.join(', ')}`).not.to.deep.equal([])
      return {statuses, reached, resent: (kind: string) => reached(kind).filter((t) => seen.healthy.includes(t))}
    } finally {
      await balancer.stop()
      await Promise.all(servers.map((srv) => new Promise((resolve) => srv.close(resolve))))
    }
  }

  it('the config resends a request whose process died before answering only if it is a read or carries an Idempotency-Key (a clock advance too)', async () => {
    const {statuses, reached, resent} = await throughFailing((req) => void req.socket.destroy())
    // Reads and keyed writes that reached it were answered by the other process; so were keyed clock advances.
    for (const kind of ['get', 'keyed', 'clock']) {
      expect(statuses[kind], kind).to.deep.equal([200, 200, 200, 200])
      expect(resent(kind), kind).to.deep.equal(reached(kind))
    }
    // An unkeyed write that reached it fails (a 502, or the connection closed: 599 here) and is never sent to another one.
    expect(statuses.unkeyed!.filter((st) => st === 502 || st === 599)).to.have.length(reached('unkeyed').length)
    expect(resent('unkeyed')).to.deep.equal([])
  })

  it("the config passes a process's 503 on to the client, never resent: a fault rule's 503 must be seen", async () => {
    const {statuses, reached, resent} = await throughFailing((_req, res) =>
      res.writeHead(503, {'content-type': 'application/json', 'retry-after': '1'}).end('{"error":{"type":"api_error","code":"maintenance"}}'),
    )
    for (const kind of ['get', 'keyed', 'unkeyed']) {
      expect(statuses[kind]!.filter((st) => st === 503), kind).to.have.length(reached(kind).length)
      expect(resent(kind), kind).to.deep.equal([])
    }
  })
})
