/**
 * What only PostgreSQL has: several storages (as several gateway processes have) on one database at once.
 * Two `PostgresStorage` instances race on the invariants the storage enforces (docs/architecture.md):
 * each holds across them because it is a unique index or one conditional statement, not because their
 * units never interleave. Runs on the run's server with PAYAPP_TEST_DB, else on a private one it starts.
 */

import {expect} from 'chai'
import fc from 'fast-check'
import pg, {type Pool} from 'pg'

import {answerDeadlineMs, LAST_VARIANT_SORT_ORDER, poolSize, PostgresStorage, redactUrl, withServerOptions} from '../../src/gateway/storage/postgres.js'
import {type AvailabilityChange, type Storage, StorageBusy, StorageUnavailable, type Store} from '../../src/gateway/storage/storage.js'
import {postgresBin, startPostgres} from '../../scripts/postgres-server.js'
import {TestGateway} from '../helpers/gateway.js'
import {heldUnit} from '../helpers/held-unit.js'
import {partitionable} from '../helpers/partition.js'
import {postgresForSuite} from '../helpers/test-db.js'

const scope = {merchant: 'mch_pg_race', env: 'test' as const}

describe('PostgreSQL storage: two storages on one database', function () {
  this.timeout(60_000)
  let own: {url: string; stop: () => void} | undefined
  let url: string
  let a: Storage
  let b: Storage

  before(async function () {
    own = await postgresForSuite()
    if (!own) return this.skip() // No PostgreSQL installed here: nothing to race on.
    url = own.url
    // Both at once: the schema is created under an advisory lock, once.
    ;[a, b] = await Promise.all([PostgresStorage.open(url), PostgresStorage.open(url)])
  })
  after(async () => {
    await a?.close()
    await b?.close()
    own?.stop()
  })

  /** `n` units at once, alternating between the two storages; what each resolved to, or its error. */
  const race = <T>(n: number, unit: (storage: Storage, i: number) => Promise<T>) =>
    Promise.all(Array.from({length: n}, (_, i) => unit(i % 2 === 0 ? a : b, i).catch((error: Error) => error)))

  it('stock: 60 reservations of one unit over both storages for 10 in stock take exactly 10', async () => {
    const variant = {id: 'var_pg_race', object: 'variant', title: 'Race', stock_qty: 10, stock_reserved: 0, updated: 0}
    await a.write((tx) => tx.insert('variant', scope, variant as never, {parent: 'prod_pg_race', created: 0}))
    const results = await race(60, (s, i) => s.write((tx) => tx.increment('variant', scope, variant.id, {field: 'stock_reserved', by: 1, atMost: 'stock_qty', set: {updated: i}})))
    expect(results.filter((r) => r instanceof Error)).to.deep.equal([])
    expect(results.filter((r) => r !== undefined)).to.have.length(10)
    const stored = await b.reads.get('variant', scope, variant.id)
    expect(stored).to.include({stock_qty: 10, stock_reserved: 10})
    // The stored bytes keep the document's key order (list routes splice them as they are).
    expect(Object.keys(stored!)).to.deep.equal(Object.keys(variant))
  })

  it('one payment per session: of 20 inserts over both storages the unique index keeps one', async () => {
    const results = await race(20, (s, i) =>
      s.write((tx) => tx.insert('payment', scope, {id: `py_pg_race_${i}`, object: 'payment', session_id: 'cs_pg_race', status: 'succeeded'} as never, {created: i})),
    )
    expect(results.filter((r) => !(r instanceof Error))).to.have.length(1)
    for (const r of results.filter((x) => x instanceof Error)) expect(r).to.have.property('name', 'UniqueViolation')
    expect(await a.reads.ids('payment', scope, [{field: 'session_id', eq: 'cs_pg_race'}])).to.have.length(1)
  })

  it('idempotency: 20 claims of one key over both storages, one wins', async () => {
    const results = await race(20, (s) => s.write((tx) => tx.idempotency.claim('cred_pg', 'key-race', 'fp', 1000, 0)))
    expect(results.filter((r) => r === true)).to.have.length(1)
    expect(results.filter((r) => r === false)).to.have.length(19)
  })

  it('a write sent with the COMMIT that fails fails the unit: nothing of it is stored, and the next unit on the pool works', async () => {
    // The stored answer (idempotency.finish) goes out with the COMMIT, unawaited: its failure must still fail the unit.
    const failed = await a
      .write(async (tx) => {
        await tx.idempotency.claim('cred_pg', 'key-deferred', 'fp', 1000, 0)
        await tx.insert('product', scope, {id: 'prod_pg_deferred', object: 'product'} as never, {created: 0})
        await tx.idempotency.finish('cred_pg', 'key-deferred', 'not a status' as unknown as number, '{}')
        return 'acknowledged'
      })
      .catch((error: Error) => error)
    expect(failed).to.be.instanceOf(Error)
    expect(await b.reads.get('product', scope, 'prod_pg_deferred')).to.equal(undefined)
    expect(await b.reads.idempotency.read('cred_pg', 'key-deferred')).to.equal(undefined)
    // Reads issued together in a unit share its round trips; the unit commits them all.
    const [product, none] = await a.write((tx) =>
      Promise.all([tx.insert('product', scope, {id: 'prod_pg_deferred', object: 'product'} as never, {created: 0}), tx.get('product', scope, 'prod_pg_missing')]),
    )
    expect([product.id, none]).to.deep.equal(['prod_pg_deferred', undefined])
    expect(await b.reads.get('product', scope, 'prod_pg_deferred')).to.deep.include({id: 'prod_pg_deferred'})
  })

  it('a unit that throws stores none of its writes, answered or still in flight, and its connection serves the next unit', async () => {
    // One connection, so the next units run where the failed ones did. A unit's statements are one transaction
    // committed at its Sync: one that throws must be rolled back there, never committed.
    const one = await PostgresStorage.open(url, {max: 1})
    try {
      const thrown = await one
        .write(async (tx) => {
          await tx.insert('product', scope, {id: 'prod_pg_thrown_1', object: 'product'} as never, {created: 0})
          await tx.idempotency.claim('cred_pg', 'key-thrown', 'fp', 1000, 0)
          void tx.insert('product', scope, {id: 'prod_pg_thrown_2', object: 'product'} as never, {created: 0}).catch(() => {})
          throw new Error('the domain refused')
        })
        .catch((error: Error) => error.message)
      expect(thrown).to.equal('the domain refused')
      for (const id of ['prod_pg_thrown_1', 'prod_pg_thrown_2']) expect(await b.reads.get('product', scope, id)).to.equal(undefined)
      expect(await b.reads.idempotency.read('cred_pg', 'key-thrown')).to.equal(undefined)
      await one.write((tx) => tx.insert('product', scope, {id: 'prod_pg_thrown_3', object: 'product'} as never, {created: 0}))
      expect(await b.reads.get('product', scope, 'prod_pg_thrown_3')).to.deep.include({id: 'prod_pg_thrown_3'})
    } finally {
      await one.close()
    }
  })

  it('a statement that fails fails the statements sent behind it and its unit; what they prepared or not, the connection runs them next', async () => {
    await a.write((tx) => tx.insert('product', scope, {id: 'prod_pg_twice', object: 'product'} as never, {created: 0}))
    // A new connection, where each statement below is prepared (parsed) for the first time in the failing unit:
    // the INSERT's parse succeeds and its execution fails (the id exists); the server skips the rest up to the unit's end.
    const one = await PostgresStorage.open(url, {max: 1})
    try {
      const [insert, behind, after] = await one
        .write(async (tx) => {
          const sent = await Promise.allSettled([
            tx.insert('product', scope, {id: 'prod_pg_twice', object: 'product'} as never, {created: 1}),
            tx.find('product', 'prod_pg_twice'),
            tx.webhooks.endpointsOf('mch_pg_none'),
          ])
          return [...sent, await tx.get('product', scope, 'prod_pg_twice').catch((error: Error) => error)]
        })
        .catch((error: Error) => [error, undefined, undefined])
      expect(insert).to.be.instanceOf(Error)
      expect(behind).to.equal(undefined)
      expect(after).to.equal(undefined)
      // The unit failed with the INSERT's unique violation, the storage's own error for it.
      expect((insert as Error).name).to.equal('UniqueViolation')
      // The same statements on the same connection: the INSERT is prepared there, the others are not.
      const [stored, found, endpoints] = await one.write((tx) =>
        Promise.all([tx.insert('product', scope, {id: 'prod_pg_twice_2', object: 'product'} as never, {created: 1}), tx.find('product', 'prod_pg_twice'), tx.webhooks.endpointsOf('mch_pg_none')]),
      )
      expect([stored.id, found?.doc.id, endpoints]).to.deep.equal(['prod_pg_twice_2', 'prod_pg_twice', []])
      // And node-postgres' own queries (reads outside units) on that connection too.
      expect((await one.reads.find('product', 'prod_pg_twice_2'))?.doc.id).to.equal('prod_pg_twice_2')
      expect(await one.reads.webhooks.endpointsOf('mch_pg_none')).to.deep.equal([])
    } finally {
      await one.close()
    }
  })

  it('a write sent with the commit joins the statement issued just before it: its failure fails that statement, the unit, and nothing is stored', async () => {
    // The insert is not awaited, so the deferred answer rides in its statement (a data-modifying CTE).
    const create = (status: unknown) =>
      a.write(async (tx) => {
        await tx.idempotency.claim('cred_pg', 'key-joined', 'fp', 1000, 0)
        await tx.atCommit!(tx.insert('product', scope, {id: 'prod_pg_joined', object: 'product'} as never, {created: 0}))
        await tx.idempotency.finish('cred_pg', 'key-joined', status as number, '{"id":"prod_pg_joined"}')
      })
    expect(await create('not a status').catch((error: Error) => error)).to.be.instanceOf(Error)
    expect(await b.reads.get('product', scope, 'prod_pg_joined')).to.equal(undefined)
    expect(await b.reads.idempotency.read('cred_pg', 'key-joined')).to.equal(undefined)
    // And when it succeeds, both are stored.
    await create(201)
    expect(await b.reads.get('product', scope, 'prod_pg_joined')).to.deep.include({id: 'prod_pg_joined'})
    expect(await b.reads.idempotency.read('cred_pg', 'key-joined')).to.deep.include({state: 'done', status: 201, body: '{"id":"prod_pg_joined"}'})
  })

  it('a write sent with the commit that changes the table of the statement before it runs after it, and sees its row', async () => {
    // The claim is not awaited: a deferred answer joined to it would run on the claim's snapshot, without its row, and change nothing.
    await a.write(async (tx) => {
      void tx.idempotency.claim('cred_pg', 'key-same-table', 'fp', 1000, 0)
      await tx.idempotency.finish('cred_pg', 'key-same-table', 201, '{}')
    })
    expect(await b.reads.idempotency.read('cred_pg', 'key-same-table')).to.deep.include({state: 'done', status: 201, body: '{}'})
  })

  it('getMany answers exactly the asked documents of its kind and scope, for any number of ids (1 to 40, across its placeholder lists)', async () => {
    const other = {merchant: 'mch_pg_other', env: 'test' as const}
    await a.write(async (tx) => {
      for (let i = 0; i < 40; i++) await tx.insert('option_value', scope, {id: `optval_pg_${i}`, object: 'option_value', value: `V${i}`} as never, {parent: 'optgrp_pg', created: i})
      for (let i = 0; i < 5; i++) await tx.insert('option_value', other, {id: `optval_pg_other_${i}`, object: 'option_value', value: `O${i}`} as never, {parent: 'optgrp_pg_other', created: i})
      await tx.insert('option_group', scope, {id: 'optgrp_pg_kind', object: 'option_group', name: 'Kind'} as never, {parent: 'prod_pg', created: 0})
    })
    const id = fc.oneof(
      fc.integer({min: 0, max: 39}).map((i) => `optval_pg_${i}`),
      fc.integer({min: 0, max: 4}).map((i) => `optval_pg_other_${i}`),
      fc.constantFrom('optgrp_pg_kind', 'optval_pg_missing', 'optval_pg_\0', ''),
    )
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(id, {minLength: 1, maxLength: 40}), async (ids) => {
        const expected = ids.filter((i) => /^optval_pg_\d+$/.test(i)).sort()
        expect((await a.reads.getMany('option_value', scope, ids)).map((d) => d.id).sort()).to.deep.equal(expected)
      }),
      {numRuns: 60},
    )
  })

  it('reads a unit issues together go out as one statement, and each answers what it answers alone: rows, order, types, none', async () => {
    // One connection: the unit's and pg_prepared_statements' (the merged read is prepared on it).
    const one = await PostgresStorage.open(url, {max: 1})
    try {
      const parent = 'prod_pg_merge'
      await a.write(async (tx) => {
        for (let i = 0; i < 6; i++) {
          await tx.insert('option_group', scope, {id: `optgrp_pg_merge_${i}`, object: 'option_group', name: `G${i}`, note: i % 2 ? null : `n${i}`} as never, {parent, created: 10 - i})
        }
        for (let i = 0; i < 8; i++) {
          const variant = {id: `var_pg_merge_${i}`, object: 'variant', sku: i % 3 ? `PG-MERGE-${i}` : null, sort_order: i === 5 ? 2.75 : -i, title: `Ünïcode "${i}" \\ ☃`}
          await tx.insert('variant', scope, variant as never, {parent, created: i, key: `merge${i}`})
        }
      })
      // Each read answers a list of rows or values, as the domain's reads do; `Promise.all` issues them in one turn.
      const reads: Record<string, (tx: Store) => Promise<unknown>> = {
        groups: (tx) => tx.all('option_group', scope, parent),
        variants: (tx) => tx.all('variant', scope, parent),
        noVariants: (tx) => tx.all('variant', scope, 'prod_pg_merge_none'),
        skuOwners: (tx) => tx.ids('variant', scope, [{field: 'sku', eq: 'PG-MERGE-4'}]),
        noSku: (tx) => tx.ids('variant', scope, [{field: 'sku', eq: 'PG-MERGE-404'}]),
        twin: (tx) => tx.keyed('variant', scope, parent, 'merge3'),
        noTwin: (tx) => tx.keyed('variant', scope, parent, 'merge404'),
        lastSort: (tx) => tx.lastVariantSortOrder(parent),
        noSort: (tx) => tx.lastVariantSortOrder('prod_pg_merge_none'),
        some: (tx) => tx.getMany('variant', scope, ['var_pg_merge_1', 'var_pg_merge_6', 'var_pg_merge_404']),
        group: (tx) => tx.get('option_group', scope, 'optgrp_pg_merge_2'),
      }
      const alone = new Map<string, unknown>()
      for (const [name, read] of Object.entries(reads)) alone.set(name, await read(one.reads))
      expect(alone.get('lastSort')).to.equal(2.75)
      expect((alone.get('groups') as {id: string}[]).map((g) => g.id)).to.deep.equal([0, 1, 2, 3, 4, 5].map((i) => `optgrp_pg_merge_${i}`))
      await fc.assert(
        fc.asyncProperty(fc.uniqueArray(fc.constantFrom(...Object.keys(reads)), {minLength: 2, maxLength: 11}), async (names) => {
          // Twice: the first time on the connection, a read goes alone (its columns are learnt then).
          for (let round = 0; round < 2; round++) {
            const together = await one.write((tx) => Promise.all(names.map((n) => reads[n]!(tx))))
            expect(together).to.deep.equal(names.map((n) => alone.get(n)))
          }
        }),
        {numRuns: 40},
      )
      const pool = (one as unknown as {pool: Pool}).pool
      const {rows} = await pool.query<{statement: string}>("SELECT statement FROM pg_prepared_statements WHERE statement LIKE '% UNION ALL %'")
      expect(rows.length).to.be.greaterThan(0)
    } finally {
      await one.close()
    }
  })

  it('reads issued together whose bound values pass what one statement takes (65,535) still answer, each as alone', async () => {
    const one = await PostgresStorage.open(url, {max: 1})
    try {
      await a.write(async (tx) => {
        for (let i = 0; i < 8; i++) await tx.insert('variant', scope, {id: `var_pg_cap_${i}`, object: 'variant', sku: `PG-CAP-${i}`} as never, {parent: 'prod_pg_cap', created: i, key: `cap${i}`})
      })
      const ids = Array.from({length: 32}, (_, i) => `var_pg_cap_${i % 8}`)
      const alone = await one.reads.getMany('variant', scope, ids)
      expect(alone).to.have.length(8)
      // 2,000 reads of 34 values each: 68,000 in all. Twice: the first time on the connection the read goes alone.
      for (let round = 0; round < 2; round++) {
        const together = await one.write((tx) => Promise.all(Array.from({length: 2000}, () => tx.getMany('variant', scope, ids))))
        expect(together.every((docs) => JSON.stringify(docs) === JSON.stringify(alone))).to.equal(true)
      }
    } finally {
      await one.close()
    }
  })

  it('a write and the read of another table issued right behind it go out as one statement, each with its answer; a read of its own table sees it', async () => {
    const one = await PostgresStorage.open(url, {max: 1})
    try {
      await a.write((tx) => tx.insert('product', scope, {id: 'prod_pg_pair', object: 'product', name: 'Pair'} as never, {created: 0}))
      const answers: unknown[] = []
      // Three rounds on one connection: the first sends each statement alone (its columns are learnt then).
      for (let round = 0; round < 3; round++) {
        const [claimed, locked, again] = await one.write(async (tx) => {
          const [first, product] = await Promise.all([tx.idempotency.claim('cred_pg_pair', `key-${round}`, 'fp', 100, 0), tx.lock('product', scope, 'prod_pg_pair', 'shared')])
          // The same key again: nothing to claim (no row returned), beside the lock of a product that is not there.
          const [second, none] = await Promise.all([tx.idempotency.claim('cred_pg_pair', `key-${round}`, 'fp', 100, 0), tx.lock('product', scope, 'prod_pg_pair_none', 'shared')])
          return [first, product?.id, [second, none]]
        })
        answers.push([claimed, locked, again])
        // A document inserted and locked in one turn: its own table, so the lock goes after the insert and finds it.
        const mine = await one.write(async (tx) => {
          const [, found] = await Promise.all([
            tx.insert('product', scope, {id: `prod_pg_pair_${round}`, object: 'product', name: 'Mine'} as never, {created: 0}),
            tx.lock('product', scope, `prod_pg_pair_${round}`, 'exclusive'),
          ])
          return found?.id
        })
        expect(mine).to.equal(`prod_pg_pair_${round}`)
      }
      expect(answers).to.deep.equal(Array.from({length: 3}, () => [true, 'prod_pg_pair', [false, undefined]]))
      const pool = (one as unknown as {pool: Pool}).pool
      const {rows} = await pool.query<{statement: string}>("SELECT statement FROM pg_prepared_statements WHERE statement LIKE 'WITH paired%'")
      expect(rows.map((r) => r.statement).join('\n')).to.contain('INSERT INTO idempotency').and.contain('FOR KEY SHARE').and.not.contain('INSERT INTO objects')
    } finally {
      await one.close()
    }
  })

  it("getMany's statement is planned once per connection, not on every call (a generic plan after the first five)", async () => {
    const one = await PostgresStorage.open(url, {max: 1})
    try {
      // A catalogue of some size, analyzed: the planner's costs of a generic plan against a custom one are real.
      const pool = (one as unknown as {pool: Pool}).pool
      await pool.query(
        `INSERT INTO objects (id, kind, merchant, env, parent, created, data)
         SELECT 'optval_pg_bulk_' || i, 'option_value', 'mch_pg_bulk', 'test', 'optgrp_pg_bulk_' || (i % 50), i, json_build_object('id', 'optval_pg_bulk_' || i)
         FROM generate_series(1, 3000) AS i`,
      )
      await pool.query('ANALYZE objects')
      for (let i = 0; i < 12; i++) await one.reads.getMany('option_value', scope, ['optval_pg_1', 'optval_pg_2', 'optval_pg_3'])
      const {rows} = await pool.query<{generic_plans: string; custom_plans: string}>(
        "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE 'SELECT data FROM objects WHERE id%'",
      )
      expect(rows.map((r) => Number(r.generic_plans))).to.deep.equal([7])
    } finally {
      await one.close()
    }
  })

  it("a product's last variant sort order is the largest, negative and fractional ones too, none without variants", async () => {
    const parent = 'prod_pg_sort'
    const orders = [3, -7, 2.5, 12, 0]
    await a.write(async (tx) => {
      for (const [i, sort_order] of orders.entries()) {
        await tx.insert('variant', scope, {id: `var_pg_sort_${i}`, object: 'variant', sku: `PG-SORT-${i}`, sort_order} as never, {parent, created: i, key: `k${i}`})
      }
    })
    expect(await a.reads.lastVariantSortOrder(parent)).to.equal(12)
    expect(await a.reads.lastVariantSortOrder('prod_pg_no_variants')).to.equal(null)
  })

  it("a product's last variant sort order reads one variant, whatever the statistics say: a product filled since the last ANALYZE, custom and generic plans", async () => {
    const parent = 'prod_pg_sort_stale'
    const client = new pg.Client(url)
    await client.connect()
    try {
      await client.query('ANALYZE objects')
      await a.write(async (tx) => {
        for (let i = 0; i < 2000; i++) await tx.insert('variant', scope, {id: `var_pg_stale_${i}`, object: 'variant', sort_order: i} as never, {parent, created: i})
      })
      await client.query(`PREPARE last_sort_order AS ${LAST_VARIANT_SORT_ORDER}`)
      for (const mode of ['force_custom_plan', 'force_generic_plan']) {
        await client.query(`SET plan_cache_mode = ${mode}`)
        const [{'QUERY PLAN': [{Plan: plan}]}] = (await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE last_sort_order('${parent}')`)).rows
        // Every node of the plan produced at most one row: an ordered index probe, not a read of every variant and a sort.
        const nodes = (n: {'Actual Rows': number; 'Node Type': string; Plans?: unknown[]}): {'Actual Rows': number; 'Node Type': string}[] => [n, ...((n.Plans ?? []) as never[]).flatMap(nodes)]
        expect(nodes(plan).map((n) => [n['Node Type'], n['Actual Rows']]), mode).to.deep.equal([
          ['Limit', 1],
          ['Index Scan', 1],
        ])
      }
      expect(await a.reads.lastVariantSortOrder(parent)).to.equal(1999)
    } finally {
      await client.end()
    }
  })

  it("a write settled at the COMMIT that a unique index refuses fails the unit with the domain's answer to it; nothing of the unit is stored", async () => {
    await a.write((tx) => tx.insert('variant', scope, {id: 'var_pg_settled_1', object: 'variant'} as never, {parent: 'prod_pg_settled', created: 0, key: 'same'}))
    class Refused extends Error {}
    const failed = await b
      .write(async (tx) => {
        expect(await tx.idempotency.claim('cred_pg', 'key-settled', 'fp', 1000, 0)).to.equal(true)
        const twin = tx.insert('variant', scope, {id: 'var_pg_settled_2', object: 'variant'} as never, {parent: 'prod_pg_settled', created: 1, key: 'same'})
        await tx.atCommit!(twin.catch(() => Promise.reject(new Refused('variant_exists'))))
        await tx.idempotency.finish('cred_pg', 'key-settled', 201, '{}')
        return 'acknowledged'
      })
      .catch((error: Error) => error)
    // Not the "transaction is aborted" of the statements after it, nor the COMMIT's rollback.
    expect(failed).to.be.instanceOf(Refused)
    expect(await a.reads.get('variant', scope, 'var_pg_settled_2')).to.equal(undefined)
    expect(await a.reads.idempotency.read('cred_pg', 'key-settled')).to.equal(undefined)
    // Settled and stored when nothing refuses it; the pool's connection works after the failed unit.
    await b.write(async (tx) => {
      await tx.atCommit!(tx.insert('variant', scope, {id: 'var_pg_settled_3', object: 'variant'} as never, {parent: 'prod_pg_settled', created: 2, key: 'other'}))
    })
    expect(await a.reads.get('variant', scope, 'var_pg_settled_3')).to.deep.include({id: 'var_pg_settled_3'})
  })

  it('a job is claimed once: both storages remove it at once, one gets it', async () => {
    await a.write((tx) => tx.jobs.insert({due: 1, kind: 'race', merchant: scope.merchant, env: 'test', ref: 'ref_pg_race'}))
    const [job] = await b.reads.jobs.pending(['ref_pg_race'])
    const results = await race(10, (s) => s.write((tx) => tx.jobs.remove(job!.id)))
    expect(results.filter((r) => r === true)).to.have.length(1)
  })

  it('processes starting at once: a unit counting live processes waits for another that counted and joined, then counts it', async () => {
    const now = Date.now()
    const join = (owner: string) => async (tx: Parameters<Parameters<Storage['write']>[0]>[0]) => {
      const live = await tx.leases.live('process:', now)
      await tx.leases.acquire(`process:${owner}`, owner, now + 60_000, now)
      return live
    }
    const first = heldUnit(a, join('first'))
    expect(await first.reached).to.equal(0)
    const second = b.write(join('second'))
    // The second is alone only if it did not wait: give it time to answer before the first commits.
    const early = await Promise.race([second.then(() => 'answered'), new Promise((resolve) => setTimeout(() => resolve('waiting'), 300))])
    first.release()
    await first.done
    expect(early).to.equal('waiting')
    expect(await second).to.equal(1)
    expect(await a.reads.leases.live('process:', now)).to.equal(2)
  })

  it("webhook claims: one storage's claim in flight makes the other's claim nothing, not the next delivery; a live lease too; then in order", async () => {
    const endpoint = 'we_pg_claim'
    const now = Date.now()
    await a.write(async (tx) => {
      await tx.webhooks.insertEndpoint({id: endpoint, merchant: scope.merchant, env: 'test', url: 'http://127.0.0.1:9/hook', events: ['*'], secret: 'whsec_x', installation: null, created: 1, previous_secrets: []})
      for (const n of [1, 2]) await tx.webhooks.enqueue(endpoint, {id: `evt_pg_claim_${n}`, type: 'product.created'}, '{}', 1)
    })
    const claim = async (s: Storage, owner: string) => (await s.write((tx) => tx.webhooks.claim(endpoint, owner, 10, Date.now(), Date.now() + 60_000, 1)))[0]
    const held = heldUnit(a, async (tx) => (await tx.webhooks.claim(endpoint, 'A', 10, now, now + 60_000, 1))[0])
    const firstClaim = await held.reached
    expect(firstClaim?.event_id).to.equal('evt_pg_claim_1')
    // The first delivery is locked by A's unit: B claims nothing rather than the second one (order).
    const racing = await claim(b, 'B').finally(() => held.release())
    await held.done
    expect(racing).to.equal(undefined)
    // A's lease on the endpoint is live.
    expect(await claim(b, 'B')).to.equal(undefined)
    // Only the owner records the attempt; then the next delivery is B's to claim.
    const outcome = {status: 200, error: null, next: null, delivered: true}
    expect(await b.write((tx) => tx.webhooks.recordAttempt(firstClaim!.id, 1, 10, outcome, 'B'))).to.equal(false)
    expect(await a.write((tx) => tx.webhooks.recordAttempt(firstClaim!.id, 1, 10, outcome, 'A'))).to.equal(true)
    expect((await claim(b, 'B'))?.event_id).to.equal('evt_pg_claim_2')
    expect(await claim(a, 'A')).to.equal(undefined)
    expect(await a.reads.webhooks.dueCount(scope.merchant, 10)).to.equal(1)
  })

  it('revisions: of 20 compare-and-sets at one revision over both storages, one wins', async () => {
    const session = {id: 'cs_pg_revision', object: 'checkout_session', revision: 1}
    await a.write((tx) => tx.insert('checkout_session', scope, session as never, {created: 0}))
    const results = await race(20, (s, i) => s.write((tx) => tx.replaceIf({...session, revision: 2, winner: i}, [{field: 'revision', eq: 1}])))
    expect(results.filter((r) => r === true)).to.have.length(1)
  })

  it('a unit that writes back a document another unit changed after it read it runs again from the start, and overwrites nothing', async () => {
    type Doc = {id: string; metadata: Record<string, string>}
    const doc = {id: 'prod_pg_stale', object: 'product', name: 'Cap', metadata: {}}
    await a.write((tx) => tx.insert('product', scope, doc as never, {created: 0}))
    const addKey = (tx: Store, key: string) => async () => {
      const read = (await tx.get('product', scope, doc.id)) as unknown as Doc
      return {read, save: () => tx.save({...read, metadata: {...read.metadata, [key]: 'kept'}})}
    }
    // The first run of this unit reads, then waits while another storage (process) changes the row and commits.
    let attempts = 0
    let readFirst!: () => void
    const first = new Promise<void>((resolve) => (readFirst = resolve))
    let letGo!: () => void
    const gate = new Promise<void>((resolve) => (letGo = resolve))
    const writer = a.write(async (tx) => {
      attempts++
      const {save} = await addKey(tx, 'mine')()
      if (attempts === 1) {
        readFirst()
        await gate
      }
      return save()
    })
    await first
    await b.write(async (tx) => (await addKey(tx, 'theirs')()).save())
    letGo()
    await writer
    expect(attempts, 'runs of the unit whose copy went stale').to.equal(2)
    expect(((await b.reads.get('product', scope, doc.id)) as unknown as Doc).metadata).to.deep.equal({theirs: 'kept', mine: 'kept'})
  })

  it("a gateway's cached read never misses what another gateway on the database committed before it", async () => {
    const adminKey = 'adm_two_gateways_one_database_0123456789'
    const [one, two] = [await TestGateway.start({db: url, adminKey}), await TestGateway.start({db: url, adminKey})]
    try {
      const acct = await one.account()
      const list = async () => ((await two.request('GET', '/v1/store/products?limit=100', {token: acct.secretKey})).body.data as {name: string; prices: {unit_amount: number}[]}[]).map((p) => `${p.name} ${p.prices.map((x) => x.unit_amount).join(',')}`)
      expect(await list()).to.deep.equal([])
      const created = await acct.store('POST', '/products', {body: {name: 'Mug', price: {currency: 'eur', unit_amount: 1200}}})
      expect(await list()).to.deep.equal(['Mug 1200'])
      await acct.store('POST', `/products/${created.body.id}/prices`, {body: {currency: 'eur', unit_amount: 1500}})
      expect(await list()).to.deep.equal(['Mug 1500,1200'])
    } finally {
      await one.close()
      await two.close()
    }
  })

  for (const [mode, how] of [
    ['fast', 'shuts down (a restart: its sessions are told 57P01, then cut)'],
    ['immediate', 'crashes (its sessions just cut)'],
  ] as const) {
    it(`a server that ${how} under a unit fails the unit as unavailable, not the process; said once, and again when it is back`, async function () {
      if (!postgresBin()) this.skip()
      // Commits flushed as they are answered (the test servers' default is off): a crash keeps what was answered.
      const server = await startPostgres({settings: ['synchronous_commit=on']})
      const storage = await PostgresStorage.open(server.url)
      const changes: AvailabilityChange[] = []
      storage.onAvailability((change) => changes.push(change))
      try {
        const unit = heldUnit(storage, (tx) => tx.get('product', scope, 'prod_pg_gone'))
        await unit.reached
        // The whole pool busy too: idle connections and one in a unit.
        const reads = Promise.all(Array.from({length: 5}, () => storage.reads.get('product', scope, 'prod_pg_gone').catch((error: Error) => error)))
        server.pause(mode)
        unit.release()
        // What the API answers 503 database_unavailable: the unit, the reads, a new unit (the pool cannot connect) and a new read.
        expect(await unit.done.catch((error: Error) => error)).to.be.instanceOf(StorageUnavailable)
        for (const read of await reads) expect(read).to.be.instanceOf(StorageUnavailable)
        // Still running (an unhandled 'error' of a checked-out connection would have ended it): a new unit fails cleanly.
        expect(await storage.write((tx) => tx.get('product', scope, 'prod_pg_gone')).catch((error: Error) => error)).to.be.instanceOf(StorageUnavailable)
        expect(await storage.reads.get('product', scope, 'prod_pg_gone').catch((error: Error) => error)).to.be.instanceOf(StorageUnavailable)
        expect(changes.map((c) => c.available)).to.deep.equal([false])
        // Back on the same data: the next unit and read are answered, and the outage's end is told once.
        server.resume()
        expect(await storage.write((tx) => tx.get('product', scope, 'prod_pg_gone'))).to.equal(undefined)
        expect(await storage.reads.get('product', scope, 'prod_pg_gone')).to.equal(undefined)
        expect(changes.map((c) => c.available)).to.deep.equal([false, true])
      } finally {
        await storage.close().catch(() => {})
        server.stop()
      }
    })
  }

  it('a network that drops everything (no reset) fails a unit in flight, reads and new units as unavailable after the deadline, not a quarter of an hour later; back once healed', async () => {
    const {hostname, port} = new URL(url)
    const relay = await partitionable({host: hostname, port: Number(port)})
    const storage = await PostgresStorage.open(relay.through(url), {timeoutMs: 500})
    const changes: AvailabilityChange[] = []
    storage.onAvailability((change) => changes.push(change))
    try {
      // Connections in the pool, then one in a unit: each waits on a server that hears nothing and says nothing.
      await Promise.all(Array.from({length: 4}, () => storage.reads.get('product', scope, 'prod_pg_cut')))
      const unit = heldUnit(storage, (tx) => tx.get('product', scope, 'prod_pg_cut'))
      await unit.reached
      relay.cut()
      const reads = Array.from({length: 3}, () => storage.reads.get('product', scope, 'prod_pg_cut').catch((error: Error) => error))
      unit.release()
      const failed = [await unit.done.catch((error: Error) => error), ...(await Promise.all(reads))]
      for (const error of failed) expect(error).to.be.instanceOf(StorageUnavailable).and.to.have.property('message', 'PostgreSQL did not answer for 0.5 s')
      // A new unit: the pool's new connection is never answered either.
      expect(await storage.write((tx) => tx.get('product', scope, 'prod_pg_cut')).catch((error: Error) => error)).to.be.instanceOf(StorageUnavailable)
      expect(changes).to.deep.equal([{available: false, reason: 'PostgreSQL did not answer for 0.5 s', readOnly: false}])
      relay.heal()
      expect(await storage.write((tx) => tx.get('product', scope, 'prod_pg_cut'))).to.equal(undefined)
      expect(changes.map((c) => c.available)).to.deep.equal([false, true])
    } finally {
      relay.heal()
      await storage.close().catch(() => {})
      await relay.close()
    }
  })

  it('a process cut off while its unit holds a row: the others write other rows, and that one is answered busy (not unreachable) until the cut connection ends', async () => {
    const {hostname, port} = new URL(url)
    const relay = await partitionable({host: hostname, port: Number(port)})
    const [cutOff, other] = await Promise.all([PostgresStorage.open(relay.through(url), {timeoutMs: 1000}), PostgresStorage.open(url, {timeoutMs: 1000})])
    const changes: AvailabilityChange[] = []
    other.onAvailability((change) => changes.push(change))
    const rename = (id: string, name: string) => async (tx: Store) => {
      const doc = await tx.lock('product', scope, id, 'exclusive')
      await tx.save({...doc!, name})
    }
    let held: ReturnType<typeof heldUnit> | undefined
    try {
      for (const id of ['prod_pg_held', 'prod_pg_free']) await other.write((tx) => tx.insert('product', scope, {id, object: 'product', name: 'Before'} as never, {created: 0}))
      held = heldUnit(cutOff, (tx) => tx.lock('product', scope, 'prod_pg_held', 'exclusive'))
      await held.reached
      // The relay drops everything from now: the server waits for the rest of the unit, holding the row.
      relay.cut()
      await other.write(rename('prod_pg_free', 'Written meanwhile'))
      expect(await other.write(rename('prod_pg_held', 'Written after')).catch((error: unknown) => error)).to.be.instanceOf(StorageBusy)
      expect(changes, 'the server answered the other process throughout').to.deep.equal([])
      // The cut-off unit never answered as written: its process cut the silent connection.
      held.release()
      expect(await held.done.catch((error: unknown) => error)).to.be.instanceOf(StorageUnavailable)
      // Once that connection's end reaches the server (the partition heals; or TCP keepalive gives up, docs/shared-gateway.md),
      // the row is free: sent again while busy, as clients do, the write is stored.
      relay.heal()
      let answer: unknown
      for (let tries = 0; tries < 5 && answer !== 'written'; tries++) answer = await other.write(rename('prod_pg_held', 'Written after')).then(() => 'written', (error: unknown) => error)
      expect(answer).to.equal('written')
      expect((await other.reads.getMany('product', scope, ['prod_pg_held', 'prod_pg_free'])).map((p) => p.name).sort()).to.deep.equal(['Written after', 'Written meanwhile'])
    } finally {
      held?.release()
      relay.heal()
      await Promise.all([cutOff.close(), other.close()]).catch(() => {})
      await relay.close()
    }
  })

  it('a row held longer than lock_timeout (0.9 of the deadline) fails the waiting unit as busy, not as a server it cannot reach; sent again once the row is free, it is written', async () => {
    const [holder, waiter] = await Promise.all([PostgresStorage.open(url, {timeoutMs: 5000}), PostgresStorage.open(url, {timeoutMs: 500})])
    const changes: AvailabilityChange[] = []
    waiter.onAvailability((change) => changes.push(change))
    let held: ReturnType<typeof heldUnit> | undefined
    try {
      await waiter.write((tx) => tx.insert('product', scope, {id: 'prod_pg_busy', object: 'product', name: 'Busy'} as never, {created: 0}))
      held = heldUnit(holder, (tx) => tx.lock('product', scope, 'prod_pg_busy', 'exclusive'))
      await held.reached
      const update = (tx: Store) => tx.lock('product', scope, 'prod_pg_busy', 'exclusive').then((doc) => tx.save({...doc!, name: 'After the holder'}))
      const busy = await waiter.write(update).catch((error: unknown) => error)
      expect(busy).to.be.instanceOf(StorageBusy)
      expect(changes, 'the server answered throughout').to.deep.equal([])
      held.release()
      await held.done
      await waiter.write(update)
      expect((await waiter.reads.get('product', scope, 'prod_pg_busy'))!.name).to.equal('After the holder')
    } finally {
      held?.release()
      await Promise.all([holder.close(), waiter.close()])
    }
  })

  it('a server that takes no writes (a primary fenced for a switchover) fails units as unavailable, read-only; reads go on; once the URL leads to the new primary, writes go there; said once, and when writes are taken again', async function () {
    if (!postgresBin()) this.skip()
    const [old, next] = await Promise.all([startPostgres(), startPostgres()])
    // The URL the gateway has leads to the old primary until the switchover moves it (a virtual IP, DNS).
    const relay = await partitionable({host: '127.0.0.1', port: old.port})
    const storage = await PostgresStorage.open(relay.through(old.url))
    const promoted = await PostgresStorage.open(next.url)
    const admin = new pg.Client(old.url)
    await admin.connect()
    const changes: AvailabilityChange[] = []
    storage.onAvailability((change) => changes.push(change))
    const product = (id: string) => ({id, object: 'product', name: 'Fenced'}) as never
    const insert = (id: string) => storage.write((tx) => tx.insert('product', scope, product(id), {created: 0}))
    try {
      // Units and reads at once: several pooled connections to the old primary.
      await Promise.all([...Array.from({length: 4}, (_, i) => insert(`prod_pg_before_${i}`)), storage.reads.get('product', scope, 'prod_pg_before_0')])
      await admin.query('ALTER SYSTEM SET default_transaction_read_only = on')
      await admin.query('SELECT pg_reload_conf()')
      // The reload reaches each session at its next statement: until then a unit may still commit.
      let refused: unknown
      for (let i = 0; i < 50 && !refused; i++) refused = await insert(`prod_pg_fencing_${i}`).then(() => undefined, (error: unknown) => error)
      expect(refused).to.be.instanceOf(StorageUnavailable).and.to.include({readOnly: true})
      expect(await storage.reads.get('product', scope, 'prod_pg_before_0')).to.include({name: 'Fenced'})
      // A read answered does not end the spell: only a write does.
      expect(changes.map(({available, readOnly}) => ({available, readOnly}))).to.deep.equal([{available: false, readOnly: true}])
      expect(changes[0]).to.have.property('reason').that.matches(/read-only transaction/)

      relay.retarget({host: '127.0.0.1', port: next.port})
      // Each refused unit's connection left the pool: within the pool's connections to the old primary, a write reaches the new one.
      let written = false
      for (let i = 0; i < 12 && !written; i++) written = await insert('prod_pg_after').then(() => true, () => false)
      expect(written, 'a write reached the new primary').to.equal(true)
      expect(await promoted.reads.get('product', scope, 'prod_pg_after')).to.include({name: 'Fenced'})
      expect(changes.map(({available, readOnly}) => ({available, readOnly}))).to.deep.equal([
        {available: false, readOnly: true},
        {available: true, readOnly: true},
      ])
    } finally {
      await admin.end().catch(() => {})
      await Promise.all([storage.close(), promoted.close()]).catch(() => {})
      await relay.close()
      old.stop()
      next.stop()
    }
  })

  it('a server whose disk is full (53100) fails units that write as unavailable, taking no writes, and answers reads; said once, and when it takes writes again', async () => {
    const storage = await PostgresStorage.open(url)
    const admin = new pg.Client(url)
    await admin.connect()
    const changes: AvailabilityChange[] = []
    storage.onAvailability((change) => changes.push(change))
    const insert = (id: string) => storage.write((tx) => tx.insert('product', scope, {id, object: 'product', name: 'Full'} as never, {created: 0}))
    try {
      await insert('prod_pg_room')
      // What PostgreSQL answers when it cannot extend a table's file: the same SQLSTATE and message, raised on demand.
      await admin.query(`CREATE FUNCTION disk_full() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        RAISE EXCEPTION 'could not extend file "base/16384/16397": No space left on device' USING ERRCODE = 'disk_full', HINT = 'Check free disk space.'; END $$`)
      await admin.query('CREATE TRIGGER disk_full BEFORE INSERT ON objects FOR EACH STATEMENT EXECUTE FUNCTION disk_full()')
      for (const id of ['prod_pg_full_1', 'prod_pg_full_2']) {
        expect(await insert(id).catch((error: Error) => error))
          .to.be.instanceOf(StorageUnavailable)
          .and.to.include({readOnly: true, message: 'could not extend file "base/16384/16397": No space left on device'})
      }
      expect(await storage.reads.get('product', scope, 'prod_pg_room')).to.include({name: 'Full'})
      expect(changes.map(({available, readOnly}) => ({available, readOnly}))).to.deep.equal([{available: false, readOnly: true}])
      await admin.query('DROP TRIGGER disk_full ON objects')
      await insert('prod_pg_room_again')
      expect(changes.map(({available, readOnly}) => ({available, readOnly}))).to.deep.equal([
        {available: false, readOnly: true},
        {available: true, readOnly: true},
      ])
    } finally {
      await admin.query('DROP TRIGGER IF EXISTS disk_full ON objects').catch(() => {})
      await admin.query('DROP FUNCTION IF EXISTS disk_full()').catch(() => {})
      await admin.end()
      await storage.close()
    }
  })

  it("connects through the server's Unix socket when the URL's host parameter names its directory (docs/shared-gateway.md)", async function () {
    if (!postgresBin()) this.skip()
    const server = await startPostgres()
    const storage = await PostgresStorage.open(server.socketUrl)
    const admin = new pg.Client(server.url)
    try {
      await storage.write((tx) => tx.insert('product', scope, {id: 'prod_pg_socket', object: 'product', name: 'Socket'} as never, {created: 0}))
      expect(await storage.reads.get('product', scope, 'prod_pg_socket')).to.include({name: 'Socket'})
      await admin.connect()
      // A Unix-socket session has no client port (-1); the admin's own session is TCP.
      const {rows} = await admin.query<{port: number}>('SELECT client_port AS port FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')
      expect(rows.length).to.be.greaterThan(1)
      expect(rows.map((r) => r.port)).to.satisfy((ports: number[]) => ports.every((p) => p === -1))
    } finally {
      await admin.end().catch(() => {})
      await storage.close()
      server.stop()
    }
  })

  it('opens two connections per core, 4 to 10, or as many as PAYAPP_GATEWAY_PG_POOL says: 30 units at once have no more server processes', async function () {
    if (!postgresBin()) this.skip()
    expect([1, 2, 3, 4, 5, 64].map((cores) => poolSize(undefined, cores))).to.deep.equal([4, 4, 6, 8, 10, 10])
    expect(poolSize('16', 2)).to.equal(16)
    // Not a count of connections: the default.
    expect(['', '0', '-1', '2.5', 'ten'].map((setting) => poolSize(setting, 2))).to.deep.equal([4, 4, 4, 4, 4])
    const server = await startPostgres()
    const admin = new pg.Client(server.url)
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
    const saved = process.env.PAYAPP_GATEWAY_PG_POOL
    try {
      await admin.connect()
      for (const setting of [undefined, '3']) {
        if (setting === undefined) delete process.env.PAYAPP_GATEWAY_PG_POOL
        else process.env.PAYAPP_GATEWAY_PG_POOL = setting
        const storage = await PostgresStorage.open(server.url)
        try {
          let most = 0
          let running = 0
          // 30 units, each holding its connection 50 ms, counted while they run: the queue waits for the pool.
          await Promise.all(
            Array.from({length: 30}, () =>
              storage.write(async (tx) => {
                most = Math.max(most, ++running)
                await tx.get('product', scope, 'prod_pool')
                await sleep(50)
                running--
              }),
            ),
          )
          const {rows} = await admin.query<{n: number}>(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND NOT starts_with(application_name, 'payapp-watch-')",
          )
          const size = setting === undefined ? poolSize(undefined) : 3
          expect(most, 'units running at once').to.equal(size)
          // The pool's connections, and at most the one that reads the shared version for the watch.
          expect(rows[0]!.n - size, 'server processes besides the pool').to.be.within(0, 1)
        } finally {
          await storage.close()
        }
      }
    } finally {
      if (saved === undefined) delete process.env.PAYAPP_GATEWAY_PG_POOL
      else process.env.PAYAPP_GATEWAY_PG_POOL = saved
      await admin.end().catch(() => {})
      server.stop()
    }
  })

  it('keeps the connections a burst opened while they idle past 30 s: the next burst starts no new server process', async function () {
    // 31 s of one worker's time: run by `npm run test:pg` (PAYAPP_TEST_DB set), which CI runs after `npm test`.
    if (!postgresBin() || !process.env.PAYAPP_TEST_DB) this.skip()
    // 31 s of idling: a pool that closes connections idle for 30 s (this one did before 2026-11-28) ends them in it.
    this.timeout(90_000)
    const server = await startPostgres()
    const storage = await PostgresStorage.open(server.url)
    const admin = new pg.Client(server.url)
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
    /** The server processes of the storage's connections (the version watch's, named, apart). */
    const backends = async () =>
      (
        await admin.query<{pid: number}>(
          "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND NOT starts_with(application_name, 'payapp-watch-') ORDER BY pid",
        )
      ).rows.map((r) => r.pid)
    /** As many units at once as the pool has connections, each holding its connection 100 ms: all of them open. */
    const burst = () =>
      Promise.all(
        Array.from({length: poolSize(process.env.PAYAPP_GATEWAY_PG_POOL)}, (_, i) =>
          storage.write(async (tx) => {
            await tx.get('product', scope, `prod_idle_${i}`)
            await sleep(100)
          }),
        ),
      )
    try {
      await admin.connect()
      await burst()
      const opened = await backends()
      expect(opened).to.have.length.of.at.least(poolSize(process.env.PAYAPP_GATEWAY_PG_POOL))
      await sleep(31_000)
      expect(await backends(), 'after 31 s idle').to.deep.equal(opened)
      await burst()
      expect(await backends(), 'after the next burst').to.deep.equal(opened)
    } finally {
      await admin.end().catch(() => {})
      await storage.close()
      server.stop()
    }
  })

  it("refuses a database a newer gateway's schema is on, and leaves it as it was", async () => {
    const admin = new pg.Pool({connectionString: url, max: 1})
    const ours = (await admin.query(`SELECT value FROM meta WHERE key = 'schema_version'`)).rows[0].value as string
    try {
      await admin.query(`UPDATE meta SET value = '99' WHERE key = 'schema_version'`)
      const error = await PostgresStorage.open(url).then(
        () => undefined,
        (e: unknown) => e as Error & {code?: string},
      )
      expect(error?.message).to.match(/schema version 99, newer than this gateway's \d+/)
      expect(error?.code).to.equal('db_refused')
      expect((await admin.query(`SELECT value FROM meta WHERE key = 'schema_version'`)).rows[0].value).to.equal('99')
    } finally {
      await admin.query(`UPDATE meta SET value = $1 WHERE key = 'schema_version'`, [ours])
      await admin.end()
    }
  })

  it('says which database it cannot open without its password, unreachable apart from refused', async () => {
    const unreachable = await PostgresStorage.open('postgres://payapp:s3cret-word@127.0.0.1:1/payapp').catch((error: Error) => error)
    expect(unreachable).to.include({name: 'StorageOpenError', code: 'db_unreachable'})
    expect((unreachable as Error).message).to.contain('postgres://payapp:***@127.0.0.1:1/payapp').and.not.contain('s3cret')
    const missing = new URL(url)
    missing.pathname = '/no_such_database'
    missing.password = 's3cret-word'
    const refused = await PostgresStorage.open(missing.toString()).catch((error: Error) => error)
    expect(refused).to.include({name: 'StorageOpenError', code: 'db_refused'})
    expect((refused as Error).message).to.contain('no_such_database').and.not.contain('s3cret')
    expect(redactUrl('postgresql://u:p%40ss@h/db?password=x&sslmode=require')).to.equal('postgresql://u:***@h/db?password=***&sslmode=require')
  })

  it('PAYAPP_GATEWAY_PG_TIMEOUT: seconds, fractions too; 10 s when unset, empty, zero, negative or not a number; at most what a timer takes', () => {
    expect(['30', '0.5', ' 2 '].map(answerDeadlineMs)).to.deep.equal([30_000, 500, 2000])
    for (const bad of [undefined, '', ' ', '0', '-1', 'ten', 'NaN']) expect(answerDeadlineMs(bad), String(bad)).to.equal(10_000)
    expect(answerDeadlineMs('1e12')).to.equal(2 ** 31 - 1)
  })

  it("the gateway's lock_timeout and TCP keepalives and user timeout join a URL's own server options (a search_path), and a setting the URL names again is the URL's", async () => {
    const schema = `opts_${process.pid}`
    const admin = new pg.Client(url)
    await admin.connect()
    await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
    const base = url.replace(/[?&]options=[^&#]*/, '')
    const withOptions = (options: string) => `${base}${base.includes('?') ? '&' : '?'}options=${encodeURIComponent(options)}`
    const settings = async (target: string) => {
      const storage = await PostgresStorage.open(target, {timeoutMs: 2000})
      try {
        const pool = (storage as unknown as {pool: Pool}).pool
        const names = ['search_path', 'lock_timeout', 'tcp_keepalives_idle', 'tcp_keepalives_interval', 'tcp_keepalives_count', 'tcp_user_timeout']
        const {rows} = await pool.query<{values: string[]}>('SELECT array(SELECT current_setting(n) FROM unnest($1::text[]) AS n) AS values', [names])
        const [path, lock, ...keepalive] = rows[0]!.values
        // Keepalives are a TCP connection's (a Unix socket's show 0).
        return {path, lock, keepalive: new URL(target).searchParams.has('host') ? undefined : keepalive.join(' ')}
      } finally {
        await storage.close()
      }
    }
    try {
      const keepalive = new URL(url).searchParams.has('host') ? undefined : '2 1 3 2000'
      expect(await settings(withOptions(`-c search_path=${schema}`))).to.deep.equal({path: schema, lock: '1800ms', keepalive})
      expect(await settings(withOptions(`-c search_path=${schema} -c lock_timeout=7s`))).to.deep.equal({path: schema, lock: '7s', keepalive})
      expect(withServerOptions('postgres://u@h/db', '-c lock_timeout=900')).to.deep.equal({connectionString: 'postgres://u@h/db', options: '-c lock_timeout=900'})
    } finally {
      await admin.query(`DROP SCHEMA ${schema} CASCADE`)
      await admin.end()
    }
  })
})

describe("PostgreSQL storage: the planner's statistics, kept by several storages on one database", function () {
  this.timeout(60_000)
  let own: {url: string; stop: () => void} | undefined
  let storages: Storage[] = []
  let admin: Pool

  before(async function () {
    own = await postgresForSuite()
    if (!own) return this.skip()
    storages = await Promise.all([1, 2, 3].map(() => PostgresStorage.open(own!.url, {max: 2})))
    admin = new pg.Pool({connectionString: own.url, max: 1})
    // Only the storages' analyses: autovacuum's would move the statistics at moments of its own.
    await admin.query('ALTER TABLE objects SET (autovacuum_enabled = false)')
  })
  after(async () => {
    await Promise.all(storages.map((s) => s.close()))
    await admin?.end()
    own?.stop()
  })

  let next = 0
  /** `n` variants of about 1 KB inserted by `storage`, in one unit (sizes as a catalogue's, so that the empty pages PostgreSQL adds to a table at once are a small part of it). */
  const insert = (storage: Storage, n: number) =>
    storage.write(async (tx) => {
      for (let i = 0; i < n; i++) {
        const k = next++
        await tx.insert('variant', scope, {id: `var_pg_stats_${k}`, object: 'variant', title: `Stats ${k}`, description: 'd'.repeat(1000)} as never, {parent: 'prod_pg_stats', created: k})
      }
    })
  /** Each storage's last request to analyze, answered. */
  const settled = () => Promise.all(storages.map((s) => (s as unknown as {analyzing?: Promise<void>}).analyzing))
  const stats = async () => {
    const {rows} = await admin.query<{analyses: string; rows: number}>(
      `SELECT s.analyze_count AS analyses, c.reltuples AS rows FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.relid = 'objects'::regclass`,
    )
    return {analyses: Number(rows[0]!.analyses), rows: rows[0]!.rows}
  }

  it('three storages that pass their first 200 inserts together analyze the table once, then again only once it has doubled', async () => {
    const [a, b, c] = storages as [Storage, Storage, Storage]
    for (const s of storages) await insert(s, 199)
    expect(await stats()).to.deep.equal({analyses: 0, rows: -1})
    // Each passes 200 at once: each asks, the server analyzes once, with every storage's rows but those whose
    // unit committed after the analysis began (its snapshot): at most the two other storages' last ones.
    await Promise.all(storages.map((s) => insert(s, 1)))
    await settled()
    const first = await stats()
    expect(first.analyses).to.equal(1)
    expect(first.rows).to.be.within(598, 600)
    // Short of their next count (1,000), b and c add 1,400 rows; a passes its 1,000 with the table at 2,800 rows,
    // more than twice what was analyzed: analyzed again.
    await insert(b, 700)
    await insert(c, 700)
    await insert(a, 800)
    await settled()
    expect(await stats()).to.deep.equal({analyses: 2, rows: 2800})
    // b passes its 1,000 with the table at 2,900 rows, not twice 2,800: the statistics stand.
    await insert(b, 100)
    await settled()
    expect(await stats()).to.deep.equal({analyses: 2, rows: 2800})
  })
})
