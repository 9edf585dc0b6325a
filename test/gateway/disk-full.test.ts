/**
 * The disk under a gateway's SQLite file fills up (a laptop's, a CI runner's): writes are answered 503
 * `database_unavailable` with Retry-After (never 500, never half written), reads go on, the process says so on
 * stderr once; every write it acknowledged before is kept, and once there is room again the refused writes sent
 * again with their Idempotency-Key are stored once each, across a restart too. A real full disk: a small tmpfs,
 * which needs root (CI runs as root); elsewhere the test is skipped.
 */
import {execFileSync} from 'node:child_process'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {expect} from 'chai'

import {type GatewayProcess, startGatewayProcess, tempHome} from '../helpers/cli.js'

describe('gateway on a full disk (SQLite on a small tmpfs)', function () {
  this.timeout(120_000)
  const dir = mkdtempSync(join(tmpdir(), 'payapp-full-'))
  const home = tempHome()
  let mounted = false
  let gw: GatewayProcess | undefined
  let stderr = ''

  before(function () {
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=12m', 'tmpfs', dir], {stdio: 'pipe'})
      mounted = true
    } catch (error) {
      console.warn(`    (skipped: mounting a tmpfs needs root: ${String((error as {stderr?: Buffer}).stderr ?? error).trim()})`)
      this.skip()
    }
  })

  after(() => {
    gw?.child.kill('SIGKILL')
    if (mounted) execFileSync('umount', ['-l', dir])
    rmSync(dir, {recursive: true, force: true})
  })

  const start = async () => {
    const started = await startGatewayProcess(['--db', join(dir, 'gateway.sqlite'), '--rate-limit', 'off'], home)
    started.child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()))
    return started
  }
  /** SIGTERM, and its exit code (null if it had not exited 20 s later: a worker thread left running once kept it alive). */
  const stop = async (p: GatewayProcess) => {
    const exited = new Promise<number | null>((resolve) => p.child.once('exit', resolve))
    p.child.kill('SIGTERM')
    return Promise.race([exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 20_000))])
  }

  it('refuses writes with 503 while full, keeps what it acknowledged, and stores each refused write once when sent again', async () => {
    gw = await start()
    const admin = (path: string, body: unknown) =>
      fetch(gw!.url + path, {method: 'POST', headers: {authorization: `Bearer ${gw!.adminKey}`, 'content-type': 'application/json'}, body: JSON.stringify(body)}).then((r) => r.json() as Promise<any>)
    const merchant = await admin('/_admin/merchants', {})
    const {token} = await admin('/_admin/installations', {merchant: merchant.id, env: 'test', scopes: ['products:read', 'products:write']})
    const create = async (n: number) => {
      const res = await fetch(`${gw!.url}/v1/app/products`, {
        method: 'POST',
        headers: {authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': `full-${n}`},
        body: JSON.stringify({name: `Full ${n}`, description: 'd'.repeat(4900)}),
      })
      return {n, status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as any}
    }
    const names = async () => {
      const found: string[] = []
      let after: string | undefined
      for (;;) {
        const res = await fetch(`${gw!.url}/v1/app/products?limit=100${after ? `&starting_after=${after}` : ''}`, {headers: {authorization: `Bearer ${token}`}})
        expect(res.status).to.equal(200)
        const page = (await res.json()) as {data: {id: string; name: string}[]; has_more: boolean}
        found.push(...page.data.map((p) => p.name))
        if (!page.has_more) return found
        after = page.data.at(-1)!.id
      }
    }

    // Two thirds of the disk taken by another file, then writes of 20 at a time (sharing SQLite's group commits)
    // until the rest is full.
    const filler = join(dir, 'filler')
    writeFileSync(filler, Buffer.alloc(8 * 1024 * 1024))
    const answered: Awaited<ReturnType<typeof create>>[] = []
    let next = 0
    while (answered.filter((r) => r.status !== 201).length < 40) {
      expect(next, 'the disk never filled up').to.be.below(2000)
      answered.push(...(await Promise.all(Array.from({length: 20}, () => create(next++)))))
    }
    const acknowledged = answered.filter((r) => r.status === 201)
    const refused = answered.filter((r) => r.status !== 201)
    expect(acknowledged.length).to.be.at.least(20)
    for (const r of refused) {
      expect({status: r.status, code: r.body.error?.code, retryAfter: r.retryAfter}).to.deep.equal({status: 503, code: 'database_unavailable', retryAfter: '1'})
      expect(r.body.error.message).to.match(/takes no writes right now/)
    }
    expect(stderr).to.match(/database \S+gateway\.sqlite takes no writes \(database or disk is full\): writes answer 503 database_unavailable/)
    // Said when it began, not for each refused write (a small write may still fit, and end it, before the next fails).
    expect(stderr.match(/ takes no writes \(/g)!.length, 'said when it began').to.be.below(refused.length / 4)

    // Reads go on, and every acknowledged write is there; no refused one is, not even in part.
    const whileFull = await names()
    expect(whileFull).to.include.members(acknowledged.map((r) => `Full ${r.n}`))
    expect(whileFull).to.have.length(acknowledged.length)

    // Room again: each refused write sent again with its key is created, once.
    rmSync(filler)
    const retried = await Promise.all(refused.map((r) => create(r.n)))
    expect(retried.map((r) => r.status)).to.deep.equal(refused.map(() => 201))
    expect(stderr).to.match(/takes writes again, after \d+\.\d s/)
    const again = await Promise.all(acknowledged.slice(0, 5).map((r) => create(r.n)))
    expect(again.map((r) => r.body.id)).to.deep.equal(acknowledged.slice(0, 5).map((r) => r.body.id))

    // And all of it on disk: it stops when asked, and a restart on the file finds each product once.
    expect(await stop(gw)).to.equal(0)
    gw = await start()
    const stored = await names()
    expect(stored).to.have.length(answered.length)
    expect(new Set(stored)).to.deep.equal(new Set(answered.map((r) => `Full ${r.n}`)))
  })
})
