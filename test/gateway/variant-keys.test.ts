/**
 * A variant's option combination is its unique key (storage: `objects.unique_key`, unique per product). A
 * database from before the key (the combination's JSON indexed, no column) gets its variants' keys when a
 * gateway opens it: on SQLite and, with PAYAPP_TEST_DB, on PostgreSQL (schema version 2 → 3).
 */
import {expect} from 'chai'
import pg from 'pg'

import {openDatabase} from '../../src/gateway/storage/sqlite-driver.js'
import {expectError, TestGateway} from '../helpers/gateway.js'
import {onPostgres} from '../helpers/test-db.js'

/** Takes the database back to before the key: no unique_key column, the old index on the combination's JSON. */
async function downgrade(db: string): Promise<void> {
  if (onPostgres) {
    const pool = new pg.Pool({connectionString: db, max: 1})
    try {
      await pool.query(`DROP INDEX objects_unique_key;
        ALTER TABLE objects DROP COLUMN unique_key;
        CREATE INDEX variants_by_combination_scoped ON objects (parent, merchant, env, (data->>'options')) WHERE kind = 'variant';
        UPDATE meta SET value = '2' WHERE key = 'schema_version'`)
    } finally {
      await pool.end()
    }
    return
  }
  const sqlite = openDatabase(db)
  try {
    sqlite.exec(`DROP INDEX objects_unique_key;
      ALTER TABLE objects DROP COLUMN unique_key;
      CREATE INDEX variants_by_combination_scoped ON objects (parent, kind, merchant, env, json_extract(data, '$.options')) WHERE kind = 'variant';`)
  } finally {
    sqlite.close()
  }
}

describe('gateway variants: the option combination as a unique key', function () {
  this.timeout(60_000)

  it('a database from before the key gets its variants keyed on open: their combinations stay taken, others are free', async () => {
    const db = TestGateway.tempDbFile()
    const first = await TestGateway.start({db})
    const acct = await first.account()
    const product = (await acct.store('POST', '/products', {body: {name: 'Tee'}})).body
    const size = (await acct.store('POST', `/products/${product.id}/options`, {body: {name: 'Size', values: ['S', 'M', 'L']}})).body
    const color = (await acct.store('POST', `/products/${product.id}/options`, {body: {name: 'Color', values: ['Red', 'Blue']}})).body
    const pick = (s: number, c: number) => [
      {group: size.id, value: size.values[s].id},
      {group: color.id, value: color.values[c].id},
    ]
    const made = (await acct.store('POST', `/products/${product.id}/variants`, {body: {options: pick(0, 1)}})).body
    expect(made).to.have.property('object', 'variant')
    const plain = (await acct.store('POST', '/products', {body: {name: 'Plain'}})).body
    await first.close()
    await downgrade(db)

    const second = await TestGateway.start({db})
    try {
      const create = (productId: string, options: unknown[]) =>
        second.request('POST', `/v1/store/products/${productId}/variants`, {token: acct.secretKey, body: {options}})
      const twin = expectError(await create(product.id, pick(0, 1)), 409, 'variant_exists')
      expect(twin.message).to.include(made.id)
      // Sent in the other order, the combination is the same one.
      expectError(await create(product.id, [...pick(0, 1)].reverse()), 409, 'variant_exists')
      // A product's default variant (no options) was keyed too.
      expectError(await create(plain.id, []), 409, 'variant_exists')
      const other = await create(product.id, pick(1, 1))
      expect(other.status, other.text).to.equal(201)
      expectError(await create(product.id, pick(1, 1)), 409, 'variant_exists')
    } finally {
      await second.close()
    }
  })
})
