/**
 * The promise behind every cache a gateway process keeps: a change acknowledged by one process (here a
 * revocation) is seen by a request that starts afterwards on any other, at once — with no wait, and also when
 * the other process's notice of the change is held up. On PostgreSQL the processes learn of changes by
 * LISTEN/NOTIFY (src/gateway/storage/pg-watch.ts), whose notification may arrive after such a request: these
 * tests fail for a process that trusts a notification to come first.
 */
import {expect} from 'chai'
import pg from 'pg'

import {clusterForSuite} from '../helpers/cluster.js'
import {expectError} from '../helpers/gateway.js'

describe('cluster: a change acknowledged by one process is seen by the next request to another', function () {
  this.timeout(120_000)
  const suite = clusterForSuite({processes: 3})

  /** Every process has used the token (so each may remember it); revoked through `from`; then asked on `to`. */
  async function revokeThenAsk(from: number, to: number) {
    const acct = await suite.gw.account()
    for (const i of [0, 1, 2]) {
      const r = await suite.direct(i).request('GET', '/v1/app/products', {token: acct.token})
      expect(r.status, r.text).to.equal(200)
    }
    const revoked = await suite.direct(from).admin('DELETE', `/installations/${acct.installation.id}`)
    expect(revoked.status, revoked.text).to.equal(200)
    return suite.direct(to).request('GET', '/v1/app/products', {token: acct.token})
  }

  it('refuses a token on another process right after its revocation was answered, every time', async () => {
    for (let round = 0; round < 15; round++) expectError(await revokeThenAsk(round % 3, (round + 1) % 3), 401)
  })

  it('refuses it also while the other processes’ notifications are held up (PostgreSQL: their LISTEN connections stopped)', async function () {
    const db = suite.cluster.db
    if (!db.startsWith('postgres')) this.skip()
    const client = new pg.Client({connectionString: db})
    await client.connect()
    let stopped: number[] = []
    try {
      // The watch connections' server processes: stopped, they send nothing (and take no acknowledgement in).
      const rows = (await client.query<{pid: number}>("SELECT pid FROM pg_stat_activity WHERE starts_with(application_name, 'payapp-watch-') AND datname = current_database()")).rows
      expect(rows, 'one watch connection per process').to.have.length(3)
      try {
        for (const {pid} of rows) {
          process.kill(pid, 'SIGSTOP')
          stopped.push(pid)
        }
      } catch (error) {
        // Not allowed to signal the server's processes (not root, another user's server).
        if ((error as NodeJS.ErrnoException).code === 'EPERM') this.skip()
        throw error
      }
      expectError(await revokeThenAsk(0, 1), 401)
      expectError(await revokeThenAsk(2, 0), 401)
    } finally {
      for (const pid of stopped) process.kill(pid, 'SIGCONT')
      stopped = []
      await client.end()
    }
    // Once they run again, the processes go on seeing changes.
    expectError(await revokeThenAsk(1, 2), 401)
  })
})
