import pg from 'pg'
import {startPostgres} from '../scripts/postgres-server.js'
import {LAST_VARIANT_SORT_ORDER, PostgresStorage} from '../src/gateway/storage/postgres.js'
const server = await startPostgres()
try {
  const s = await PostgresStorage.open(server.url)
  const scope = {merchant: 'm', env: 'test' as const}
  const c = new pg.Client(server.url); await c.connect()
  for (const [before, big] of [[0, 300], [300, 3000], [20000, 5000]]) {
    await s.write(async (tx) => { for (let i = 0; i < before; i++) await tx.insert('variant', scope, {id: `v_o_${big}_${i}`, object: 'variant', sort_order: i} as never, {parent: `p_${big}_${i % 2000}`, created: 0}) })
    await c.query('ANALYZE objects')
    await s.write(async (tx) => { for (let i = 0; i < big; i++) await tx.insert('variant', scope, {id: `v_${big}_${i}`, object: 'variant', options: [], sort_order: i, title: 'x'.repeat(300)} as never, {parent: `p_big_${big}`, created: 0}) })
    await c.query(`PREPARE q${big} AS ${LAST_VARIANT_SORT_ORDER}`)
    for (const mode of ['force_custom_plan', 'force_generic_plan']) {
      await c.query(`SET plan_cache_mode = ${mode}`)
      const plan = await c.query(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) EXECUTE q${big}('p_big_${big}')`)
      console.log(before, big, mode, plan.rows.map((r) => r['QUERY PLAN']).filter((l: string) => !l.includes('Time')).join(' | '))
    }
  }
  await c.end(); await s.close()
} finally { server.stop() }
