/**
 * A shared gateway's PostgreSQL restarted under it (an upgrade, a failover, `systemctl restart`): while it is
 * down, every request is answered 503 `database_unavailable` with Retry-After (retried by clients with the same
 * Idempotency-Key, as the spec says of 5xx), and each process says so on stderr, once, with the URL's
 * password masked; once it is back, every process serves again without a restart, a write refused meanwhile and sent
 * again is stored once, and a change made on one process is still seen by the next request to another.
 */
import {expect} from 'chai'

import {postgresBin, startPostgres} from '../../scripts/postgres-server.js'
import {startCluster, type Cluster} from '../helpers/cluster.js'
import {expectError, HttpGateway} from '../helpers/gateway.js'

describe('cluster: PostgreSQL restarted under two gateway processes', function () {
  this.timeout(120_000)
  let server: Awaited<ReturnType<typeof startPostgres>> | undefined
  let cluster: Cluster | undefined
  const stderr: string[] = []
  /** Down between `pause` and `resume`: a test that fails in between leaves it running for the next. */
  let paused = false
  const direct = (i: number) => new HttpGateway(cluster!.processes[i]!.url, cluster!.adminKey)

  before(async function () {
    if (!postgresBin()) this.skip()
    this.timeout(60_000)
    server = await startPostgres()
    // The server trusts local connections, so the password is never checked: it is here to be kept out of the output.
    const db = server.socketUrl.replace('postgres://payapp@', 'postgres://payapp:hunter2-secret@')
    cluster = await startCluster({db, processes: 2})
    for (const [i, p] of cluster.processes.entries()) {
      stderr[i] = ''
      p.child.stderr!.on('data', (d: Buffer) => (stderr[i] += d.toString()))
    }
  })
  afterEach(() => {
    if (paused) server!.resume()
    paused = false
  })
  after(async function () {
    this.timeout(30_000)
    await cluster?.stop()
    server?.stop()
  })

  it('answers 503 database_unavailable while it is down, serves again once it is back, and a write sent again then is stored once', async () => {
    const gw = new HttpGateway(cluster!.url, cluster!.adminKey)
    const acct = await gw.account()
    const body = {name: 'Made across a restart', price: {currency: 'eur', unit_amount: 2500}}
    for (const i of [0, 1]) expect((await direct(i).request('GET', '/v1/app/products', {token: acct.token})).status).to.equal(200)

    server!.pause()
    paused = true
    for (const i of [0, 1]) {
      const read = await direct(i).request('GET', '/v1/app/products', {token: acct.token})
      expect(expectError(read, 503, 'database_unavailable').type).to.equal('api_error')
      expect(read.headers.get('retry-after')).to.equal('1')
      expectError(await direct(i).request('POST', '/v1/app/products', {token: acct.token, body, idempotencyKey: 'across-restart'}), 503, 'database_unavailable')
      // The admin API too: the operator's calls get the same answer, not a 500.
      expectError(await direct(i).admin('GET', '/merchants'), 503, 'database_unavailable')
    }
    for (const i of [0, 1]) {
      expect(stderr[i]).to.match(/database postgres:\/\/payapp:\*\*\*@localhost:\d+\/payapp\S* unreachable \(.+\): requests answer 503 database_unavailable/)
      expect(stderr[i]!.match(/unreachable/g), 'said once per outage').to.have.length(1)
    }

    server!.resume()
    paused = false
    // Each process is back within moments, without a restart; meanwhile it answers only 503s, never a 500.
    for (const i of [0, 1]) {
      const deadline = Date.now() + 10_000
      for (;;) {
        const res = await direct(i).request('GET', '/v1/app/products', {token: acct.token})
        if (res.status === 200) break
        expectError(res, 503, 'database_unavailable')
        if (Date.now() > deadline) throw new Error(`process ${i} still answers 503 10 s after the database came back`)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }
    const created = await direct(0).request('POST', '/v1/app/products', {token: acct.token, body, idempotencyKey: 'across-restart'})
    expect(created.status, created.text).to.equal(201)
    const replayed = await direct(1).request('POST', '/v1/app/products', {token: acct.token, body, idempotencyKey: 'across-restart'})
    expect(replayed.status, replayed.text).to.equal(201)
    expect(replayed.body.id).to.equal(created.body.id)
    const list = await gw.request('GET', '/v1/app/products?limit=100', {token: acct.token})
    expect(list.body.data.filter((p: {name: string}) => p.name === body.name)).to.have.length(1)

    for (const i of [0, 1]) {
      expect(stderr[i]).to.match(/database postgres:\/\/payapp:\*\*\*@localhost:\d+\/payapp\S* reachable again, after \d+\.\d s/)
      expect(stderr[i]).not.to.include('hunter2-secret')
    }
  })

  it('writes in flight when it goes down are each answered, 201 or 503, none left hanging; sent again once it is back, each is stored once', async () => {
    const acct = await new HttpGateway(cluster!.url, cluster!.adminKey).account()
    const send = (i: number) =>
      fetch(`${cluster!.processes[i % 2]!.url}/v1/app/products`, {
        method: 'POST',
        headers: {authorization: `Bearer ${acct.token}`, 'content-type': 'application/json', 'idempotency-key': `in-flight-${i}`},
        body: JSON.stringify({name: `In flight ${i}`, price: {currency: 'eur', unit_amount: 2500}}),
        // A request whose unit waits for an answer the server will never send fails here, not at the test's timeout.
        signal: AbortSignal.timeout(20_000),
      })
    const inFlight = Array.from({length: 40}, (_, i) => send(i))
    await new Promise((resolve) => setTimeout(resolve, 30))
    server!.pause()
    paused = true
    const statuses = await Promise.all(inFlight.map(async (res) => (await res).status))
    expect(statuses.filter((status) => status !== 201 && status !== 503), statuses.join(' ')).to.deep.equal([])
    server!.resume()
    paused = false
    for (let i = 0; i < 40; i++) {
      // The first request to a process may still meet the outage's end (its pool reconnecting): a 503 is sent again, as clients do.
      let res = await send(i)
      for (let tries = 0; res.status === 503 && tries < 50; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        res = await send(i)
      }
      expect(res.status, await res.text()).to.equal(201)
    }
    const list = await new HttpGateway(cluster!.url, cluster!.adminKey).request('GET', '/v1/app/products?limit=100', {token: acct.token})
    expect(list.body.data.map((p: {name: string}) => p.name).sort()).to.deep.equal(Array.from({length: 40}, (_, i) => `In flight ${i}`).sort())
  })

  it('after the restart, a revocation answered by one process is refused by the next request to the other', async () => {
    const acct = await new HttpGateway(cluster!.url, cluster!.adminKey).account()
    for (const i of [0, 1]) expect((await direct(i).request('GET', '/v1/app/products', {token: acct.token})).status).to.equal(200)
    const revoked = await direct(0).admin('DELETE', `/installations/${acct.installation.id}`)
    expect(revoked.status, revoked.text).to.equal(200)
    expectError(await direct(1).request('GET', '/v1/app/products', {token: acct.token}), 401)
  })
})
