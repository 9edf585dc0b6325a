import pg from 'pg'
import {startPostgres} from '../scripts/postgres-server.js'
import {PostgresStorage} from '../src/gateway/storage/postgres.js'
const server = await startPostgres()
try {
  const s = await PostgresStorage.open(server.url)
  const scope = {merchant: 'm', env: 'test' as const}
  await s.write(async (tx) => { for (let i = 0; i < 3000; i++) await tx.insert('variant', scope, {id: `v_${i}`, object: 'variant', options: [], sort_order: i, title: 'x'.repeat(300)} as never, {parent: 'p_big', created: 0}) })
  const c = new pg.Client(server.url); await c.connect()
  await c.query('ANALYZE objects')
  await c.query(`CREATE INDEX IF NOT EXISTS variants_last_sort_order ON objects ((COALESCE(parent, '')), ((data->>'sort_order')::numeric)) WHERE kind = 'variant'`)
  const n = 20000
  const forms = {
    fn: `SELECT count(x) FROM generate_series(1, ${n}) g, LATERAL (SELECT payapp_last_variant_sort_order('p_big' || left(g::text, 0)) AS x) s`,
    coalesce: `SELECT count(x) FROM generate_series(1, ${n}) g, LATERAL (SELECT (data->>'sort_order')::numeric AS x FROM objects WHERE COALESCE(parent, '') = 'p_big' || left(g::text, 0) AND kind = 'variant' AND (data->>'sort_order')::numeric IS NOT NULL ORDER BY (data->>'sort_order')::numeric DESC LIMIT 1) s`,
  }
  for (let round = 0; round < 3; round++) for (const [k, q] of Object.entries(forms)) {
    const t0 = process.hrtime.bigint()
    await c.query(q)
    console.log(k, 'µs per call', (Number(process.hrtime.bigint() - t0) / n / 1000).toFixed(1))
  }
  await c.end(); await s.close()
} finally { server.stop() }
