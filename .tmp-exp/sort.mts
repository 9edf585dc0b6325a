import pg from 'pg'
import {startPostgres} from '/work/wt/pgw23b/scripts/postgres-server.js'
import {PostgresStorage} from '/work/wt/pgw23b/src/gateway/storage/postgres.js'
const server = await startPostgres()
try {
  const s = await PostgresStorage.open(server.url)
  const scope = {merchant: 'm', env: 'test' as const}
  // other products' variants first, analyzed; then one product filled after the ANALYZE
  await s.write(async (tx) => { for (let i = 0; i < 300; i++) await tx.insert('variant', scope, {id: `v_o_${i}`, object: 'variant', sort_order: i} as never, {parent: `p_${i % 100}`, created: 0}) })
  const c = new pg.Client(server.url); await c.connect()
  await c.query('ANALYZE objects')
  await s.write(async (tx) => { for (let i = 0; i < 3000; i++) await tx.insert('variant', scope, {id: `v_${i}`, object: 'variant', options: [], sort_order: i, title: 'x'.repeat(300)} as never, {parent: 'p_big', created: 0}) })
  const forms = {
    fn: `SELECT payapp_last_variant_sort_order($1) AS max`,
    plain: `SELECT (data->>'sort_order')::numeric AS max FROM objects WHERE parent = $1 AND kind = 'variant' AND (data->>'sort_order')::numeric IS NOT NULL ORDER BY (data->>'sort_order')::numeric DESC LIMIT 1`,
    coalesce: `SELECT (data->>'sort_order')::numeric AS max FROM objects WHERE COALESCE(parent, '') = $1 AND kind = 'variant' AND (data->>'sort_order')::numeric IS NOT NULL ORDER BY (data->>'sort_order')::numeric DESC LIMIT 1`,
  }
  await c.query(`CREATE INDEX IF NOT EXISTS variants_last_sort_order ON objects ((COALESCE(parent, '')), ((data->>'sort_order')::numeric)) WHERE kind = 'variant'`)
  for (const [k, q] of Object.entries(forms)) {
    const plan = await c.query(`EXPLAIN (ANALYZE, COSTS OFF) ${q.replace('$1', "'p_big'")}`)
    console.log(k, plan.rows.map((r) => r['QUERY PLAN']).join('\n   '))
    for (let i = 0; i < 10; i++) await c.query({name: k, text: q, values: ['p_big']})
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < 2000; i++) await c.query({name: k, text: q, values: ['p_big']})
    console.log(k, 'µs per call (round trip)', Number(process.hrtime.bigint() - t0) / 2000 / 1000, (await c.query({name: k, text: q, values: ['p_big']})).rows[0])
  }
  await c.end(); await s.close()
} finally { server.stop() }
