/**
 * How a gateway process on PostgreSQL learns that another changed the shared version (a revocation, a fault
 * rule, a clock move: `SHARED_VERSION_KEY`) without reading it before every request.
 *
 * A LISTEN alone is not enough: PostgreSQL sends a notification to a listening connection after the change
 * committed, and a request sent to this process once the change was acknowledged to its client may arrive
 * before it. So the change's process waits, before it answers, until every watching process has taken the
 * notification in (and marked its caches stale): each acknowledges it with a NOTIFY of its own, and the
 * changing process waits for the acknowledgement of every watch connection it finds after its commit
 * (`pg_stat_activity`, by application_name, set only once the connection listens), at most `WAIT_MS`. So every
 * process connects as one role (or roles with `pg_read_all_stats`): the view hides other roles' sessions.
 *
 * A watch that connects after the change committed, and is found all the same (a process starting or
 * reconnecting meanwhile), gets no notification of it and needs none: until its connection is up its process
 * reads the version instead, and a new connection changes the token, so its next request reads it again. It
 * says so: once listening, it sends a hello on the acknowledgements' channel. Notifications reach a listener in
 * commit order, so a hello that this process's own watch takes in after its change's notification was sent
 * after that change committed, and counts as the acknowledgement of it; without it, the change waited `WAIT_MS`
 * (measured: 1 in 10 runs of three processes starting at once, and the start-up that waits on it stalled).
 *
 * A process whose watch may have missed a notification without the changer waiting for it reads the version
 * again instead (`token()` is undefined, and `Storage.external()` falls back to one read per turn): while its
 * watch connection is down or reconnecting, and when its last answered ping was sent `TRUST_MS` ago or more
 * (its event loop or its connection stalled, so a changer may have given up waiting). Why that suffices:
 * PostgreSQL sends a listening connection the notifications of every transaction committed before a query of
 * that connection began ahead of that query's answer, so an answered ping sent at `t` vouches for every change
 * committed before `t`; one committed after `t` (less than `TRUST_MS` ago) has a changer still waiting for this
 * process's acknowledgement (`WAIT_MS` = 2 × `TRUST_MS`), so none of its clients can have sent a request yet.
 */
import {createHash, randomBytes} from 'node:crypto'
import {performance} from 'node:perf_hooks'

import type {Client, Notification, QueryResult, QueryResultRow} from 'pg'

import {SHARED_VERSION_KEY, type Store} from './storage.js'

/** How long a changing process waits, at most, for every watch's acknowledgement. */
export const WAIT_MS = 5000
/** How long an answered ping vouches for the watch (half of `WAIT_MS`: a changer still waits for this one). */
const TRUST_MS = WAIT_MS / 2
const PING_MS = 500
/** What a watch sends on the acknowledgements' channel once it listens (a change's payload has a colon). */
const HELLO = 'hello'
const RECONNECT_MS = 1000

type Query = (text: string, values: unknown[]) => Promise<Array<Record<string, unknown>>>
type Run = <R extends QueryResultRow>(text: string, values?: unknown[]) => Promise<QueryResult<R>>

/**
 * A client's queries, one after another: a notification's acknowledgement may be sent while a ping or another
 * acknowledgement runs, and node-postgres deprecates sending a query while one runs (pg 9 refuses it).
 */
function serially(client: Client): Run {
  let last: Promise<unknown> = Promise.resolve()
  return <R extends QueryResultRow>(text: string, values?: unknown[]) => {
    const next = last.then(() => client.query<R>(text, values))
    last = next.catch(() => {})
    return next
  }
}

export class VersionWatch {
  private client: Client | undefined
  /** Sends the client's queries one after another. */
  private run: Run | undefined
  /** This watch connection's server process id (its acknowledgements carry it). */
  private pid = 0
  /** Counts connections: a new one may have missed notifications, so it changes the token. */
  private generation = 0
  private notified = 0
  /** performance.now() at which the last answered ping was sent; -Infinity while the connection is down. */
  private vouched = Number.NEGATIVE_INFINITY
  private pinging = false
  /** Per announced change (its payload): the watch connections that acknowledged it. */
  private readonly acks = new Map<string, Set<number>>()
  /** The announced changes whose own notification this watch took in: a hello after it acknowledges them. */
  private readonly delivered = new Set<string>()
  private readonly wake = new Set<() => void>()
  private timer: NodeJS.Timeout | undefined
  private closed = false
  /** Names this process's changes in their notifications. */
  private readonly id = randomBytes(8).toString('hex')
  /**
   * The channels and the application_name of a watch connection (set once it listens: what a changer waits
   * for), per schema: gateways on other schemas of the database are other platforms.
   */
  private channel = ''
  private acksChannel = ''
  private name = ''

  constructor(
    /** A new, unconnected client with the storage's options. */
    private readonly newClient: () => Client,
    /** A statement on another connection (the pool), for the list of watches. */
    private readonly query: Query,
    /** How long a change waits, at most, for every watch's acknowledgement. */
    private readonly waitMs = WAIT_MS,
  ) {}

  /** Connects and listens; a failure leaves the watch reconnecting (and the storage reading the version meanwhile). */
  async start(): Promise<void> {
    const [row] = await this.query('SELECT current_schema() AS schema', [])
    const key = createHash('sha256')
      .update(String(row?.schema ?? ''))
      .digest('hex')
      .slice(0, 16)
    this.channel = `payapp_version_${key}`
    this.acksChannel = `payapp_version_ack_${key}`
    this.name = `payapp-watch-${key}`
    await this.connect().catch(() => this.lost())
    this.timer = setInterval(() => void this.ping(), PING_MS)
    this.timer.unref()
  }

  private async connect(): Promise<void> {
    const client = this.newClient()
    const run = serially(client)
    client.on('error', () => this.lost(client))
    client.on('end', () => this.lost(client))
    client.on('notification', (n) => this.notification(client, run, n))
    await client.connect()
    await run(`LISTEN ${this.channel}`)
    await run(`LISTEN ${this.acksChannel}`)
    // Once listening: a changer whose watch takes this hello in after its change's notification knows that this
    // connection began listening after the change committed (no notice of it, and none needed); before it, one came.
    await run('SELECT pg_notify($1, $2)', [this.acksChannel, HELLO])
    // Named only once it listens: a changer that finds it will get its acknowledgement.
    await run(`SET application_name = '${this.name}'`)
    this.pid = Number((await run<{pid: number}>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid)
    if (this.closed) {
      await client.end().catch(() => {})
      return
    }
    this.client = client
    this.run = run
    this.generation += 1
    await this.ping()
  }

  private lost(client?: Client): void {
    if (client && client !== this.client) return
    const old = this.client
    this.client = undefined
    this.vouched = Number.NEGATIVE_INFINITY
    old?.end().catch(() => {})
    if (this.closed) return
    setTimeout(() => {
      if (!this.closed && !this.client) void this.connect().catch(() => this.lost())
    }, RECONNECT_MS).unref()
  }

  private async ping(): Promise<void> {
    const client = this.client
    const run = this.run
    if (!client || !run || this.pinging) return
    this.pinging = true
    const sent = performance.now()
    try {
      await run('SELECT 1')
      if (client === this.client) this.vouched = Math.max(this.vouched, sent)
    } catch {
      this.lost(client)
    } finally {
      this.pinging = false
    }
  }

  private notification(client: Client, run: Run, n: Notification): void {
    if (n.channel === this.channel) {
      // Marked stale first (the next request's `sync` compares the token), then acknowledged.
      this.notified += 1
      if (this.acks.has(n.payload ?? '')) this.delivered.add(n.payload!)
      run('SELECT pg_notify($1, $2)', [this.acksChannel, n.payload ?? '']).catch(() => this.lost(client))
    } else if (n.channel === this.acksChannel) {
      if (n.payload === HELLO) {
        // A watch that began listening after these changes committed: it needs no notice of them.
        for (const payload of this.delivered) this.acks.get(payload)?.add(n.processId)
      } else this.acks.get(n.payload ?? '')?.add(n.processId)
      for (const wake of this.wake) wake()
    }
  }

  /**
   * What `Storage.external()` returns while the watch vouches for every change committed before the request
   * began; undefined when it cannot (read the version instead).
   */
  token(): string | undefined {
    if (!this.client || performance.now() - this.vouched >= TRUST_MS) return undefined
    return `n:${this.generation}:${this.notified}`
  }

  /**
   * Watches a unit's store: when the unit changes the shared version (`setMeta(SHARED_VERSION_KEY, …)`), it
   * also notifies the other processes, at its commit. `committed()`, once the unit committed, waits for their
   * acknowledgements; `failed()` forgets the notice of a unit that did not commit.
   */
  inUnit(store: Pick<Store, 'setMeta'>, run: (text: string, values: unknown[]) => Promise<unknown>): {committed: () => Promise<void>; failed: () => void} {
    let payload: string | undefined
    let acked = new Set<number>()
    const setMeta = store.setMeta.bind(store)
    store.setMeta = async (key, value) => {
      await setMeta(key, value)
      if (key !== SHARED_VERSION_KEY) return
      if (payload) this.forget(payload)
      payload = `${this.id}:${value}`
      acked = new Set()
      this.acks.set(payload, acked)
      await run('SELECT pg_notify($1, $2)', [this.channel, payload])
    }
    return {
      committed: async () => {
        if (!payload) return
        const done = payload
        // Never throws: the unit committed, and its answer must say so.
        await this.settled(acked)
          .catch(() => {})
          .finally(() => this.forget(done))
      },
      failed: () => {
        if (payload) this.forget(payload)
      },
    }
  }

  private forget(payload: string): void {
    this.acks.delete(payload)
    this.delivered.delete(payload)
  }

  private async watching(): Promise<Set<number>> {
    const rows = await this.query('SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database() AND pid <> $2', [this.name, this.pid])
    return new Set(rows.map((r) => Number(r.pid)))
  }

  /** Resolves once every watch found now acknowledged (`acked`) or ended, or after `waitMs`. */
  private async settled(acked: Set<number>): Promise<void> {
    const deadline = performance.now() + this.waitMs
    let waiting = await this.watching().catch(() => new Set<number>())
    for (let round = 0; ; round++) {
      for (const pid of acked) waiting.delete(pid)
      if (waiting.size === 0 || this.closed) return
      const left = deadline - performance.now()
      if (left <= 0) return
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer)
          this.wake.delete(done)
          resolve()
        }
        const timer = setTimeout(done, Math.min(left, 100))
        this.wake.add(done)
      })
      // Now and then: a watch whose connection ended acknowledges nothing (its process re-reads on reconnecting).
      if (round % 5 === 4) {
        const live = await this.watching().catch(() => waiting)
        waiting = new Set([...waiting].filter((pid) => live.has(pid)))
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true
    clearInterval(this.timer)
    for (const wake of this.wake) wake()
    const client = this.client
    this.client = undefined
    await client?.end().catch(() => {})
  }
}
