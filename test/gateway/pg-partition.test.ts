/**
 * A gateway process cut off from PostgreSQL by a real partition (test/helpers/netns.ts: the server in a network
 * namespace, its link taken down, every packet dropped) while one of its units holds a row. The server waits
 * for the rest of that unit, and only a connection that ends frees the row. Each gateway connection asks the
 * server to end it after its deadline (docs/shared-gateway.md, "When PostgreSQL restarts"): by keepalive
 * when it went silent, by `tcp_user_timeout` when an answer was on its way; by the kernel's defaults it would take
 * two hours, or a quarter of one. The other process reaches the server through its Unix socket, which no
 * partition of the network cuts. Needs root and network namespaces (CI has both); skipped elsewhere.
 */
import {expect} from 'chai'

import {postgresBin, startPostgres} from '../../scripts/postgres-server.js'
import {PostgresStorage} from '../../src/gateway/storage/postgres.js'
import {type AvailabilityChange, StorageBusy, StorageUnavailable, type Store} from '../../src/gateway/storage/storage.js'
import {heldUnit} from '../helpers/held-unit.js'
import {type NetworkNamespace, networkNamespace} from '../helpers/netns.js'

const scope = {merchant: 'mch_pg_partition', env: 'test' as const}

describe('PostgreSQL storage: a real network partition', function () {
  this.timeout(60_000)
  let netns: NetworkNamespace | undefined
  let server: Awaited<ReturnType<typeof startPostgres>> | undefined

  before(async function () {
    netns = postgresBin() ? networkNamespace() : undefined
    if (!netns) return this.skip() // not root, no network namespaces, or no PostgreSQL installed
    server = await startPostgres({inside: netns.inside, address: netns.address})
  })
  after(() => {
    server?.stop()
    netns?.remove()
  })

  /**
   * A unit of the cut-off process holds `prod_held`. `silent`: the partition comes once the server's answers were
   * acknowledged, and the server's keepalive finds out. `answering`: the unit waits for a row the other process
   * holds, the partition comes, then that row is released and the server's answer goes out to nobody: an
   * unacknowledged send, which keepalive does not probe (TCP retransmits instead, a quarter of an hour by default).
   */
  for (const when of ['silent', 'answering'] as const) {
    it(`a process cut off while its unit holds a row (${when === 'silent' ? 'the connection silent' : 'an answer on its way'}): the server ends that session within seconds, and another process writes the row while the partition lasts`, async () => {
      // The cut-off process reaches the server across the link (TCP); the other one through its Unix socket.
      const [cutOff, other] = await Promise.all([PostgresStorage.open(server!.url, {timeoutMs: 1000}), PostgresStorage.open(server!.socketUrl, {timeoutMs: 1000})])
      const changes: AvailabilityChange[] = []
      cutOff.onAvailability((change) => changes.push(change))
      const rename = (id: string, name: string) => async (tx: Store) => {
        const doc = await tx.lock('product', scope, id, 'exclusive')
        await tx.save({...doc!, name})
      }
      const [held, free, blocker] = ['held', 'free', 'blocker'].map((name) => `prod_${when}_${name}`) as [string, string, string]
      let holding: ReturnType<typeof heldUnit> | undefined
      let blocking: ReturnType<typeof heldUnit> | undefined
      try {
        for (const id of [held, free, blocker]) await other.write((tx) => tx.insert('product', scope, {id, object: 'product', name: 'Before'} as never, {created: 0}))
        if (when === 'answering') {
          blocking = heldUnit(other, (tx) => tx.lock('product', scope, blocker, 'exclusive'))
          await blocking.reached
        }
        let waiting!: () => void
        const waits = new Promise<void>((resolve) => (waiting = resolve))
        holding = heldUnit(cutOff, async (tx) => {
          await tx.lock('product', scope, held, 'exclusive')
          if (when === 'silent') return
          const blocked = tx.lock('product', scope, blocker, 'exclusive')
          waiting()
          await blocked
        })
        if (when === 'silent') {
          await holding.reached
          // Past the longest delayed acknowledgement (200 ms): nothing the server sent is unacknowledged.
          await new Promise((resolve) => setTimeout(resolve, 400))
        } else await waits
        netns!.cut()
        const cutAt = Date.now()
        if (blocking) {
          blocking.release()
          await blocking.done
        }
        await other.write(rename(free, 'Written meanwhile'))
        // The held row waits for the cut-off unit: busy (lock_timeout), not a server the other process cannot reach.
        expect(await other.write(rename(held, 'Written after')).catch((error: unknown) => error)).to.be.instanceOf(StorageBusy)
        // The cut-off process gives its unit up after its deadline, as unavailable, never as written.
        holding.release()
        expect(await holding.done.catch((error: unknown) => error)).to.be.instanceOf(StorageUnavailable)
        expect(changes.map((c) => c.available)).to.deep.equal([false])
        // Sent again while busy, as clients do: stored once the server has ended the cut-off session, the link still down.
        let answer: unknown
        while (answer !== 'written' && Date.now() - cutAt < 30_000) answer = await other.write(rename(held, 'Written after')).then(() => 'written', (error: unknown) => error)
        const freedAfter = Date.now() - cutAt
        expect(answer, `still refused ${freedAfter} ms after the cut`).to.equal('written')
        // Within a few times the deadline; far less than two hours, or a quarter of one.
        expect(freedAfter).to.be.within(1000, 15_000)
        expect((await other.reads.getMany('product', scope, [held, free])).map((p) => p.name).sort()).to.deep.equal(['Written after', 'Written meanwhile'])
        // Healed: the cut-off process connects again and writes; the end of its outage is told once.
        netns!.heal()
        let again: unknown
        for (let tries = 0; tries < 20 && again !== 'written'; tries++) again = await cutOff.write(rename(free, 'Written once healed')).then(() => 'written', (error: unknown) => error)
        expect(again).to.equal('written')
        expect(changes.map((c) => c.available)).to.deep.equal([false, true])
      } finally {
        holding?.release()
        blocking?.release()
        netns!.heal()
        await Promise.all([cutOff.close(), other.close()]).catch(() => {})
      }
    })
  }
})
