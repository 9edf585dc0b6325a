/**
 * Option group names and option values are unique in their product or group ignoring case, as the
 * domain's check folds it (JavaScript's toLowerCase) on every engine. The storage's unique indexes fold
 * ASCII case only, so that they never refuse what the check let through: PostgreSQL's lower() under the
 * database's collation (schema versions 3 to 6) folded by the locale's rules, and refused 'İ' beside 'i'
 * (one letter to glibc, two to JavaScript) as a concurrent write, on every retry.
 */
import {expect} from 'chai'
import pg from 'pg'

import {expectError, TestGateway, type Account} from '../helpers/gateway.js'
import {onPostgres} from '../helpers/test-db.js'

/** Pairs JavaScript folds to one text and no engine may treat as two, and pairs it keeps apart, which no index may join. */
const SAME = [
  ['Size', 'SIZE'],
  ['Été', 'ÉTÉ'],
  ['Ärmel', 'äRMEL'],
]
const APART = [
  ['i', 'İ'],
  ['οδοσ', 'ΟΔΟΣ'],
  ['Größe', 'GRÖSSE'],
]

async function product(acct: Account): Promise<string> {
  const made = await acct.store('POST', '/products', {body: {name: 'Tee', price: {currency: 'eur', unit_amount: 900}}})
  expect(made.status, made.text).to.equal(201)
  return made.body.id
}

describe('gateway: option names and values ignore case as the domain folds it', function () {
  this.timeout(60_000)
  let gw: TestGateway
  before(async () => (gw = await TestGateway.start()))
  after(() => gw?.close())

  it('a group takes two values, and a product two group names, that differ beyond ASCII case but not as JavaScript folds them apart; never a pair it folds to one', async () => {
    const acct = await gw.account()
    const id = await product(acct)
    for (const [a, b] of APART) {
      // In one create, as a value added after, and as a rename of another group.
      const group = await acct.store('POST', `/products/${id}/options`, {body: {name: a, values: [a, b]}})
      expect(group.status, group.text).to.equal(201)
      expect(group.body.values.map((v: {value: string}) => v.value)).to.deep.equal([a, b])
      const other = await acct.store('POST', `/products/${id}/options`, {body: {name: `${a}-other`, values: [a]}})
      expect(other.status, other.text).to.equal(201)
      const added = await acct.store('POST', `/options/${other.body.id}/values`, {body: {value: b}})
      expect(added.status, added.text).to.equal(201)
      const renamed = await acct.store('PATCH', `/options/${other.body.id}`, {body: {name: b}})
      expect(renamed.status, renamed.text).to.equal(200)
    }
    const next = await product(acct)
    for (const [a, b] of SAME) {
      expectError(await acct.store('POST', `/products/${next}/options`, {body: {name: a, values: [a, b]}}), 400, 'values_not_unique')
      const group = await acct.store('POST', `/products/${next}/options`, {body: {name: a, values: [a]}})
      expect(group.status, group.text).to.equal(201)
      expect(expectError(await acct.store('POST', `/options/${group.body.id}/values`, {body: {value: b}}), 409, 'value_exists').param).to.equal('value')
      expect(expectError(await acct.store('POST', `/products/${next}/options`, {body: {name: b, values: ['x']}}), 409, 'option_exists').param).to.equal('name')
    }
  })

  it('PostgreSQL: a database whose indexes folded by its collation (schema version 6) gets the ASCII ones when a gateway opens it', async function () {
    if (!onPostgres) return this.skip()
    const db = TestGateway.tempDbFile()
    const first = await TestGateway.start({db})
    const acct = await first.account()
    const id = await product(acct)
    const group = (await acct.store('POST', `/products/${id}/options`, {body: {name: 'Size', values: ['i']}})).body
    await first.close()
    const pool = new pg.Pool({connectionString: db, max: 1})
    const indexes = async () =>
      (await pool.query<{indexname: string}>(`SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'objects' AND indexname LIKE 'option_%' ORDER BY 1`)).rows.map((r) => r.indexname)
    try {
      await pool.query(`DROP INDEX option_groups_unique_name_ascii;
        DROP INDEX option_values_unique_value_ascii;
        CREATE UNIQUE INDEX option_groups_unique_name ON objects (parent, lower(data->>'name')) WHERE kind = 'option_group';
        CREATE UNIQUE INDEX option_values_unique_value ON objects (parent, lower(data->>'value')) WHERE kind = 'option_value';
        UPDATE meta SET value = '6' WHERE key = 'schema_version'`)
      const second = await TestGateway.start({db})
      try {
        expect(await indexes()).to.deep.equal(['option_groups_unique_name_ascii', 'option_values_unique_value_ascii'])
        const added = await second.request('POST', `/v1/store/options/${group.id}/values`, {token: acct.secretKey, body: {value: 'İ'}})
        expect(added.status, added.text).to.equal(201)
        expectError(await second.request('POST', `/v1/store/options/${group.id}/values`, {token: acct.secretKey, body: {value: 'I'}}), 409, 'value_exists')
      } finally {
        await second.close()
      }
    } finally {
      await pool.end()
    }
  })
})
