import {expect} from 'chai'
import {execFile} from 'node:child_process'
import {existsSync} from 'node:fs'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'
import {promisify} from 'node:util'

import {NotFoundError, PermissionError} from '@payapp/sdk/errors'
import {startGateway, type TestGateway} from '../../src/testing/index.js'
import {testDb} from '../helpers/test-db.js'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const run = promisify(execFile)

/** `payapp/testing`: the gateway started inside a test suite, as users' suites use it. */
describe('payapp/testing: startGateway in-process', () => {
  let gw: TestGateway
  before(async () => {
    gw = await startGateway({db: await testDb()})
  })
  after(() => gw.close())

  it('serves on 127.0.0.1 with an admin key, and hands out working credentials with their clients', async () => {
    expect(gw.url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(gw.adminKey).to.match(/^adm_/)
    const {client: store, secret_key} = await gw.secretKey()
    expect(secret_key).to.match(/^sk_test_/)
    const product = await store.products.create({name: 'Mug', price: {currency: 'eur', unit_amount: 1200}})
    const {client: app} = await gw.installation({scopes: ['products:read']})
    const listed = await app.products.list()
    expect(listed.data.map((p) => p.id)).to.deep.equal([product.id])
    // The scopes asked for are the scopes given.
    try {
      await app.orders.list()
      expect.fail('orders:read was not granted')
    } catch (error) {
      expect(error).to.be.instanceOf(PermissionError)
    }
  })

  it('keeps merchants apart and moves the clock: an unpaid checkout expires after 30 minutes', async () => {
    const other = await gw.merchant({company: 'Other GmbH'})
    const {client: otherStore} = await gw.secretKey({merchant: other.id})
    const {client: store} = await gw.secretKey()
    const product = await store.products.create({name: 'Tote', price: {currency: 'eur', unit_amount: 3900}})
    try {
      await otherStore.products.retrieve(product.id)
      expect.fail('another merchant read the product')
    } catch (error) {
      expect(error).to.be.instanceOf(NotFoundError)
    }
    const checkout = await store.checkouts.create({product_id: product.id})
    const before = await gw.clock.now()
    // The clock runs with real time between moves: a second may tick between the two calls.
    expect((await gw.clock.advance(31 * 60)) - before).to.be.within(31 * 60, 31 * 60 + 2)
    await store.products.retrieve(product.id) // expiry is applied lazily, by the next catalogue or session read
    const merchant = (await gw.defaultMerchant()).id
    const expired = await gw.admin.events.list({merchant, env: 'test', type: 'checkout.session.expired'})
    expect(expired.data.map((e: any) => e.data.object.id)).to.include(checkout.session_id)
  })

  it("moves one merchant's clock with {merchant}: its checkout expires, another merchant's stays open", async () => {
    const mine = await gw.merchant({company: 'Mine GmbH'})
    const theirs = await gw.merchant({company: 'Theirs GmbH'})
    const {client: myStore} = await gw.secretKey({merchant: mine.id})
    const {client: theirStore} = await gw.secretKey({merchant: theirs.id})
    const sell = async (store: typeof myStore) => {
      const product = await store.products.create({name: 'Cap', price: {currency: 'eur', unit_amount: 1500}})
      return {product, checkout: await store.checkouts.create({product_id: product.id})}
    }
    const [a, b] = [await sell(myStore), await sell(theirStore)]
    const [before, theirsBefore] = [await gw.clock.now({merchant: mine.id}), await gw.clock.now({merchant: theirs.id})]
    expect((await gw.clock.advance(31 * 60, {merchant: mine.id})) - before).to.be.within(31 * 60, 31 * 60 + 2)
    expect((await gw.clock.now({merchant: theirs.id})) - theirsBefore).to.be.within(0, 2)
    await myStore.products.retrieve(a.product.id)
    await theirStore.products.retrieve(b.product.id)
    const expired = async (merchant: string) => (await gw.admin.events.list({merchant, env: 'test', type: 'checkout.session.expired'})).data.map((e: any) => e.data.object.id)
    expect(await expired(mine.id)).to.deep.equal([a.checkout.session_id])
    expect(await expired(theirs.id)).to.deep.equal([])
    expect(await gw.admin.clock.retrieve({merchant: mine.id})).to.include({object: 'clock', merchant: mine.id})
  })

  it('starts seeded, and close() stops answering', async () => {
    const seeded = await startGateway({seed: true, db: await testDb()})
    expect(seeded.seed).to.have.property('merchant')
    const res = await fetch(`${seeded.url}/_admin/clock`, {headers: {authorization: `Bearer ${seeded.adminKey}`}})
    expect(res.status).to.equal(200)
    await seeded.close()
    let refused = false
    await fetch(`${seeded.url}/_admin/clock`).catch(() => (refused = true))
    expect(refused).to.equal(true)
  })

  describe('the documented examples, run from the built package (payapp/testing)', function () {
    this.timeout(60_000)
    before(function () {
      // `npm test` builds first; a bare mocha run without a build has nothing to import.
      if (!existsSync(join(ROOT, 'dist/testing/index.js'))) this.skip()
    })

    it('node:test', async () => {
      const {stdout} = await run(process.execPath, ['--test', '--test-reporter=tap', 'docs/examples/testing/node-test.test.mjs'], {cwd: ROOT})
      expect(stdout).to.match(/# pass 2/)
      expect(stdout).to.match(/# fail 0/)
    })

    it('CommonJS: require(\'payapp/testing\') from a .cjs file, and with no ES module on the require path (as Jest loads it)', async () => {
      const file = 'docs/examples/testing/commonjs.test.cjs'
      // Jest's module system cannot load an ES module; Node's --no-experimental-require-module refuses one the same way.
      for (const flags of [[], ['--no-experimental-require-module']]) {
        const {stdout} = await run(process.execPath, [...flags, '--test', '--test-reporter=tap', file], {cwd: ROOT})
        expect(stdout, flags.join(' ')).to.match(/# pass 1/)
        expect(stdout, flags.join(' ')).to.match(/# fail 0/)
      }
    })

    it('vitest', async () => {
      // vitest is a devDependency: run as `npx vitest run FILE` would, with no config file of ours.
      const vitest = join(ROOT, 'node_modules/vitest/vitest.mjs')
      const {stdout} = await run(process.execPath, [vitest, 'run', '--reporter', 'verbose', 'docs/examples/testing/vitest.test.mjs'], {
        cwd: ROOT,
        env: {...process.env, NO_COLOR: '1', FORCE_COLOR: '0'},
      })
      expect(stdout).to.match(/✓ .*creates a product/)
      expect(stdout).to.match(/Tests\s+1 passed \(1\)/)
      expect(stdout).not.to.match(/failed/)
    })

    it('mocha', async () => {
      const mocha = join(ROOT, 'node_modules/mocha/bin/mocha.js')
      const {stdout} = await run(process.execPath, [mocha, '--no-config', '--reporter', 'dot', 'docs/examples/testing/mocha.spec.mjs'], {cwd: ROOT})
      expect(stdout).to.match(/2 passing/)
      expect(stdout).not.to.match(/failing/)
    })
  })
})
