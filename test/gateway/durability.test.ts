import {spawn, type ChildProcess} from 'node:child_process'
import {join} from 'node:path'

import {expect} from 'chai'

import {BIN, ROOT, tempHome} from '../helpers/cli.js'
import {TestGateway} from '../helpers/gateway.js'

/**
 * "No lost acknowledged write": the gateway runs as its own process on a real SQLite file; every write
 * it answered 2xx must be there after the process is killed (SIGKILL, no chance to clean up) or
 * stopped (SIGTERM, which also finishes the requests in flight).
 */
describe('gateway durability (a real process on a real SQLite file)', function () {
  this.timeout(60_000)
  const home = tempHome()
  const db = TestGateway.tempDbFile()

  function start(): Promise<{child: ChildProcess; url: string; adminKey: string}> {
    const child = spawn(process.execPath, [BIN, 'gateway', 'start', '--port', '0', '--db', db, '--json', '--rate-limit', 'off'], {
      cwd: ROOT,
      env: {PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, 'config'), PAYAPP_KEYCHAIN: 'off'},
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    return new Promise((resolve, reject) => {
      let out = ''
      child.stdout!.on('data', (d) => {
        out += d
        const nl = out.indexOf('\n')
        if (nl >= 0) {
          const info = JSON.parse(out.slice(0, nl))
          resolve({child, url: info.url, adminKey: info.admin_key})
        }
      })
      child.on('exit', (code) => reject(new Error(`gateway exited ${code}`)))
    })
  }

  const exited = (child: ChildProcess) => new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))

  async function post(url: string, path: string, token: string, body: unknown) {
    const res = await fetch(url + path, {method: 'POST', headers: {authorization: `Bearer ${token}`, 'content-type': 'application/json'}, body: JSON.stringify(body)})
    return {status: res.status, body: (await res.json()) as any}
  }

  let token: string

  it('keeps every acknowledged write across a SIGKILL', async () => {
    const first = await start()
    const merchant = await post(first.url, '/_admin/merchants', first.adminKey, {})
    const inst = await post(first.url, '/_admin/installations', first.adminKey, {merchant: merchant.body.id, env: 'test', scopes: ['products:read', 'products:write']})
    token = inst.body.token
    const results = await Promise.all(Array.from({length: 60}, (_, i) => post(first.url, '/v1/app/products', token, {name: `Durable ${i}`})))
    const acknowledged = results.filter((r) => r.status === 201).map((r) => r.body.id)
    expect(acknowledged).to.have.length(60)
    first.child.kill('SIGKILL')
    await exited(first.child)

    const second = await start()
    const res = await fetch(`${second.url}/v1/app/products?limit=100`, {headers: {authorization: `Bearer ${token}`}})
    const ids = ((await res.json()) as {data: {id: string}[]}).data.map((p) => p.id)
    expect(ids).to.include.members(acknowledged)
    second.child.kill('SIGKILL')
    await exited(second.child)
  })

  it('finishes the requests in flight on SIGTERM, keeps them, and exits 0', async () => {
    const gw = await start()
    const inFlight = Array.from({length: 40}, (_, i) => post(gw.url, '/v1/app/products', token, {name: `In flight ${i}`}).catch(() => ({status: 0, body: {}})))
    // Ask it to stop once the server is answering them (a fixed delay misses on a loaded machine), while the rest are in flight.
    await Promise.race(inFlight)
    gw.child.kill('SIGTERM')
    const [results, code] = await Promise.all([Promise.all(inFlight), exited(gw.child)])
    expect(code).to.equal(0)
    const acknowledged = results.filter((r) => r.status === 201).map((r) => r.body.id as string)
    // Requests that arrived were answered; none was cut off with a server error.
    expect(acknowledged.length).to.be.greaterThan(0)
    expect(results.every((r) => r.status === 201 || r.status === 0 || r.status === 503)).to.equal(true)

    const again = await start()
    const res = await fetch(`${again.url}/v1/app/products?limit=100`, {headers: {authorization: `Bearer ${token}`}})
    const ids = ((await res.json()) as {data: {id: string}[]}).data.map((p) => p.id)
    expect(ids).to.include.members(acknowledged)
    again.child.kill('SIGTERM')
    expect(await exited(again.child)).to.equal(0)
  })
})
