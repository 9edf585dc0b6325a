/**
 * The catalogue commands (store, products, prices, option groups and values, variants, files) run as
 * the real CLI against the real gateway, in human and --json form, with their error paths.
 */
import {expect} from 'chai'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {date} from '../../src/cli/output.js'
import {runCli, type CliResult} from '../helpers/cli.js'
import {TestGateway, type Account} from '../helpers/gateway.js'


/** Table rows as cells (columns are separated by at least two spaces); the header is row 0. */
const cells = (out: string) => out.trimEnd().split('\n').map((line) => line.split(/\s{2,}/))
/** The first `Label  value` block of the output as an object. */
function kv(out: string): Record<string, string> {
  const lines = out.trimEnd().split('\n\n')[0].split('\n')
  return Object.fromEntries(lines.map((line) => {
    const m = /^(\S.*?)\s{2,}(.*)$/.exec(line)
    if (!m) throw new Error(`not a key/value line: ${JSON.stringify(line)}`)
    return [m[1], m[2]]
  }))
}
/** The section of the output that starts with `title` (up to the next blank line). */
const section = (out: string, title: string) => out.trimEnd().split('\n\n').find((part) => part.startsWith(`${title}\n`))?.slice(title.length + 1)
const API_ERROR_LINE = /^[a-z_]+: .+ \(req_\w+\)\n$/

describe('catalogue commands', function () {
  this.timeout(60_000)

  let gw: TestGateway
  let acct: Account
  let env: Record<string, string>

  /** Runs the CLI as the account; no run may print a credential. */
  async function cli(args: string[], opts: {env?: Record<string, string | undefined>; input?: string} = {}): Promise<CliResult> {
    const res = await runCli(args, {env: {...env, ...opts.env}, input: opts.input})
    for (const secret of [acct.token, acct.secretKey]) {
      expect(res.stdout, 'stdout leaks a credential').not.to.include(secret)
      expect(res.stderr, 'stderr leaks a credential').not.to.include(secret)
    }
    return res
  }
  const ok = (res: CliResult) => {
    expect(res.code, `exit ${res.code}\nstdout: ${res.stdout}\nstderr: ${res.stderr}`).to.equal(0)
    return res
  }
  /** An App API call that must succeed; returns the body. */
  async function api<T = any>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await acct.app(method, path, body === undefined ? {} : {body})
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`)
    return res.body as T
  }
  const product = (name: string, extra: Record<string, unknown> = {}) =>
    api('POST', '/products', {name, price: {currency: 'eur', unit_amount: 2500}, ...extra})
  /** A product with Size (S, M, L) and Color (Red, Blue) option groups. */
  async function tee() {
    const p = await product('Tee')
    const size = await api('POST', `/products/${p.id}/options`, {name: 'Size', values: ['S', 'M', 'L']})
    const color = await api('POST', `/products/${p.id}/options`, {name: 'Color', values: ['Red', 'Blue']})
    const value = (group: any, name: string) => group.values.find((v: any) => v.value === name).id as string
    return {product: p, size, color, value}
  }

  before(async function () {
    gw = await TestGateway.start()
    acct = await gw.account('test')
    env = {PAYAPP_BASE_URL: gw.url, PAYAPP_TOKEN: acct.token}
  })
  after(async function () {
    await gw?.close()
  })

  describe('store', function () {
    it('shows the store as a block, and as the API object with --json', async function () {
      const store = await api('GET', '/store')
      expect((ok(await cli(['store', '--json']))).json()).to.deep.equal(store)
      const res = ok(await cli(['store']))
      expect(kv(res.stdout)).to.deep.equal({
        ID: store.id,
        Name: store.display_name,
        Slug: store.slug,
        Mode: 'test',
        Status: store.status,
        Approval: store.approval,
        URL: store.url,
        Logo: store.logo_url ?? '-',
        Cover: store.cover_url ?? '-',
      })
      expect(res.stderr).to.equal('')
    })
  })

  describe('products', function () {
    it('create: flags derived from the schema, with the inline price, repeatable images and tags, and metadata', async function () {
      const res = ok(await cli([
        'products', 'create', '--name', 'Canvas bag', '--price-currency', 'eur', '--price-unit-amount', '1999',
        '--images', 'https://img.test/a.png', '--images', 'https://img.test/b.png', '--tags', 'eco', '--tags', 'bags',
        '--metadata', 'family=bags', '--metadata', 'origin=pt', '--package-dimensions-length', '40', '--package-dimensions-width', '30',
        '--package-dimensions-height', '2', '--package-dimensions-weight', '120', '--no-store-visible', '--json',
      ]))
      const created = res.json()
      expect(created).to.deep.equal(await api('GET', `/products/${created.id}`))
      expect(created).to.include({name: 'Canvas bag', store_visible: false, active: true})
      expect(created.images).to.deep.equal(['https://img.test/a.png', 'https://img.test/b.png'])
      expect(created.tags).to.deep.equal(['eco', 'bags'])
      expect(created.metadata).to.deep.equal({family: 'bags', origin: 'pt'})
      expect(created.package_dimensions).to.deep.equal({length: 40, width: 30, height: 2, weight: 120})
      const prices = await api('GET', `/products/${created.id}/prices`)
      expect(prices.data).to.have.length(1)
      expect(prices.data[0]).to.include({id: created.default_price, unit_amount: 1999, currency: 'eur'})
    })

    it('create (human): the product as a block', async function () {
      const res = ok(await cli(['products', 'create', '--name', 'Mug', '--tags', 'kitchen', '--metadata', 'k=v']))
      const shown = kv(res.stdout)
      const created = await api('GET', `/products/${shown.ID}`)
      expect(shown).to.deep.equal({
        ID: created.id,
        Name: 'Mug',
        Active: 'yes',
        Visible: 'yes',
        'Default price': '-',
        Tags: 'kitchen',
        Metadata: 'k=v',
        Created: date(created.created),
        Updated: date(created.updated),
      })
    })

    it('create: --data @file.json, with flags overriding its fields', async function () {
      const file = join(mkdtempSync(join(tmpdir(), 'payapp-catalog-')), 'product.json')
      writeFileSync(file, JSON.stringify({name: 'From file', description: 'Described', tags: ['a']}))
      const created = ok(await cli(['products', 'create', '--data', `@${file}`, '--tags', 'b', '--json'])).json()
      expect(created).to.include({name: 'From file', description: 'Described'})
      expect(created.tags).to.deep.equal(['b'])
    })

    it('create: --data - reads the body from stdin', async function () {
      const body = {name: 'From stdin', price: {currency: 'eur', unit_amount: 300}}
      const created = ok(await cli(['products', 'create', '--data', '-', '--json'], {input: JSON.stringify(body)})).json()
      expect(created.name).to.equal('From stdin')
      const prices = await api('GET', `/products/${created.id}/prices`)
      expect(prices.data[0]).to.include({unit_amount: 300, currency: 'eur'})
    })

    it('create: --data that is not JSON fails at once (exit 2) without calling the API', async function () {
      const res = await cli(['products', 'create', '--data', '{name'])
      expect(res.code).to.equal(2)
      expect(res.stderr).to.equal("Error: --data is not valid JSON: Expected property name or '}' at line 1, column 2\n")
      expect(res.stdout).to.equal('')
    })

    it('list: the columns that matter, and the API list envelope with --json', async function () {
      const a = await product('List A')
      const b = await product('List B', {store_visible: false})
      const json = ok(await cli(['products', 'list', '--json'])).json()
      expect(json).to.deep.equal(await api('GET', '/products?limit=25'))

      const rows = cells(ok(await cli(['products', 'list'])).stdout)
      expect(rows[0]).to.deep.equal(['ID', 'NAME', 'ACTIVE', 'VISIBLE', 'DEFAULT PRICE', 'CREATED'])
      expect(rows.slice(1).map((r) => r[0])).to.deep.equal(json.data.map((p: any) => p.id))
      // Newest first; the default price as its amount (read alongside: the App API's products carry only its id).
      expect(rows[1]).to.deep.equal([b.id, 'List B', 'yes', 'no', '25.00 EUR', date(b.created)])
      expect(rows[2]).to.deep.equal([a.id, 'List A', 'yes', 'yes', '25.00 EUR', date(a.created)])
    })

    it('list --limit: one short page, with a hint on stderr only', async function () {
      const res = ok(await cli(['products', 'list', '--limit', '2']))
      expect(cells(res.stdout)).to.have.length(3)
      expect(res.stderr).to.equal('More products exist: pass --offset 2 for the next page, or --all.\n')
      const json = ok(await cli(['products', 'list', '--limit', '2', '--offset', '1', '--json']))
      expect(json.stderr).to.equal('')
      expect(json.json()).to.deep.equal(await api('GET', '/products?limit=2&offset=1'))
    })

    it('list --all pages through more than 100 products', async function () {
      const many = await gw.account('test')
      const names = Array.from({length: 105}, (_, i) => `Bulk ${String(i).padStart(3, '0')}`)
      for (let i = 0; i < names.length; i += 25) {
        await Promise.all(names.slice(i, i + 25).map((name) => many.app('POST', '/products', {body: {name}})))
      }
      const manyEnv = {PAYAPP_TOKEN: many.token}
      const all = ok(await runCli(['products', 'list', '--all', '--json'], {env: {...env, ...manyEnv}})).json()
      expect(all.object).to.equal('list')
      expect(all.has_more).to.equal(false)
      expect(all.data).to.have.length(105)
      expect(new Set(all.data.map((p: any) => p.name))).to.deep.equal(new Set(names))
      const page1 = (await many.app('GET', '/products?limit=100')).body
      expect(all.data.slice(0, 100)).to.deep.equal(page1.data)

      const allHuman = ok(await runCli(['products', 'list', '--all'], {env: {...env, ...manyEnv}}))
      expect(cells(allHuman.stdout)).to.have.length(106)
      expect(allHuman.stderr).to.equal('')

      // The spec's page is 1 to 100 items: a larger --limit is a usage error before any request (--all pages through).
      const tooMany = await runCli(['products', 'list', '--limit', '500', '--json'], {env: {...env, ...manyEnv}})
      expect(tooMany.code).to.equal(2)
      expect(tooMany.json().error).to.include({code: 'invalid_usage'})
      expect(tooMany.json().error.message).to.match(/--limit[\s\S]*less than or equal to 100/)
      const human = await runCli(['products', 'list', '--limit', '101'], {env: {...env, ...manyEnv}})
      expect(human.code).to.equal(2)
      expect(human.stderr).to.match(/^Error: Parsing --limit[\s\S]*100 but received: 101/)
    })

    it('get: a block, the option groups and a variants table; the API object with --json', async function () {
      const {product: p, size, color, value} = await tee()
      const made = await api('POST', `/products/${p.id}/variants`, {
        options: [{group: size.id, value: value(size, 'M')}, {group: color.id, value: value(color, 'Red')}],
        sku: 'TEE-M-RED',
        track_inventory: true,
        stock_qty: 5,
      })

      const json = ok(await cli(['products', 'get', p.id, '--json'])).json()
      expect(json).to.deep.equal(await api('GET', `/products/${p.id}`))

      const out = ok(await cli(['products', 'get', p.id])).stdout
      expect(kv(out)).to.deep.equal({
        ID: p.id,
        Name: 'Tee',
        Active: 'yes',
        Visible: 'yes',
        'Default price': `25.00 EUR (${p.default_price})`,
        Created: date(p.created),
        Updated: date(json.updated),
      })
      expect(section(out, 'Options')).to.equal('  Size   S, M, L\n  Color  Red, Blue')
      const table = cells(section(out, 'Variants')!)
      expect(table[0]).to.deep.equal(['ID', 'TITLE', 'SKU', 'PRICE', 'STOCK'])
      const byId = Object.fromEntries(table.slice(1).map((r) => [r[0], r]))
      const dflt = json.variants.find((v: any) => v.is_default)
      expect(byId[dflt.id]).to.deep.equal([dflt.id, 'Tee (default)', '-', '25.00 EUR', 'not tracked'])
      expect(byId[made.id]).to.deep.equal([made.id, 'M / Red', 'TEE-M-RED', '25.00 EUR', '5'])
    })

    it('get: an unknown product exits 5 with the API error', async function () {
      const res = await cli(['products', 'get', 'prod_doesnotexist'])
      expect(res.code).to.equal(5)
      expect(res.stderr).to.match(API_ERROR_LINE)
      expect(res.stdout).to.equal('')
      const json = await cli(['products', 'get', 'prod_doesnotexist', '--json'])
      expect(json.code).to.equal(5)
      expect(json.json().error).to.include({status: 404})
      expect(json.json().error.request_id).to.match(/^req_/)
    })

    it('update: changes only the given fields', async function () {
      const p = await product('Before')
      const json = ok(await cli(['products', 'update', p.id, '--name', 'After', '--no-store-visible', '--tags', 'new', '--json'])).json()
      expect(json).to.include({id: p.id, name: 'After', store_visible: false, default_price: p.default_price})
      expect(json.tags).to.deep.equal(['new'])
      expect(json).to.deep.equal(await api('GET', `/products/${p.id}`))

      const shown = kv(ok(await cli(['products', 'update', p.id, '--description', 'Now with text'])).stdout)
      expect(shown).to.include({ID: p.id, Name: 'After', Description: 'Now with text', Visible: 'no'})
    })

    it('update: --default-price-id switches the default price', async function () {
      const p = await product('Two prices')
      const second = await api('POST', `/products/${p.id}/prices`, {currency: 'eur', unit_amount: 4000})
      const json = ok(await cli(['products', 'update', p.id, '--default-price-id', second.id, '--json'])).json()
      expect(json.default_price).to.equal(second.id)
    })

    it('archive: human and --json', async function () {
      const a = await product('Archive me')
      const res = ok(await cli(['products', 'archive', a.id]))
      expect(res.stdout).to.equal(`Archived product ${a.id} and its prices.\n`)
      expect((await api('GET', `/products/${a.id}`)).active).to.equal(false)

      const b = await product('Archive me too')
      expect(ok(await cli(['products', 'archive', b.id, '--json'])).json()).to.deep.include({id: b.id, object: 'product', deleted: true, active: false})
    })

    it('a validation error from the API: code: message (req_…) on stderr, exit 6, no stack trace', async function () {
      const res = await cli(['products', 'create', '--name', 'Bad', '--statement-descriptor', 'x'.repeat(30)])
      expect(res.code).to.equal(6)
      expect(res.stdout).to.equal('')
      expect(res.stderr).to.match(API_ERROR_LINE)
      expect(res.stderr).not.to.match(/\n\s+at /)

      const json = await cli(['products', 'create', '--name', 'Bad', '--statement-descriptor', 'x'.repeat(30), '--json'])
      expect(json.code).to.equal(6)
      const {error} = json.json()
      expect(error.status).to.equal(400)
      expect(error.request_id).to.match(/^req_/)
      expect(error.param).to.match(/statement_descriptor/)
    })

    it('a missing token exits 3 naming PAYAPP_TOKEN, before any request', async function () {
      for (const args of [['products', 'list'], ['store'], ['products', 'create', '--name', 'X']]) {
        const res = await cli(args, {env: {PAYAPP_TOKEN: undefined}})
        expect(res.code, args.join(' ')).to.equal(3)
        expect(res.stderr).to.include('PAYAPP_TOKEN')
        expect(res.stdout).to.equal('')
      }
      const json = await cli(['products', 'list', '--json'], {env: {PAYAPP_TOKEN: undefined}})
      expect(json.code).to.equal(3)
      expect(json.json().error).to.include({type: 'authentication_error', code: 'credential_missing'})
    })

    it('never waits for input without a TTY', async function () {
      const started = Date.now()
      const cases: Array<[string[], number, RegExp]> = [
        [['products', 'get'], 2, /Missing 1 required arg/],
        [['products', 'create', '--data', '-'], 2, /--data \(stdin\) is not valid JSON: Unexpected end of JSON input/],
        [['products', 'variants', 'create'], 2, /Missing 1 required arg/],
        [['products', 'prices', 'update', 'prod_x'], 2, /Missing 1 required arg/],
      ]
      for (const [args, code, stderr] of cases) {
        const res = await cli(args)
        expect(res.code, args.join(' ')).to.equal(code)
        expect(res.stderr).to.match(stderr)
      }
      // A missing required field is named by its flag, before any request.
      const res = await cli(['products', 'create'])
      expect(res.code).to.equal(2)
      expect(res.stderr).to.match(/^Error: Missing required flag --name /)
      expect(Date.now() - started).to.be.below(30_000)
    })
  })

  describe('prices', function () {
    it('create: money flags in minor units; the block shows major units', async function () {
      const p = await product('Plan')
      const res = ok(await cli(['products', 'prices', 'create', p.id, '--currency', 'eur', '--unit-amount', '900', '--recurring-interval', 'month', '--nickname', 'Monthly']))
      const shown = kv(res.stdout)
      const created = (await api('GET', `/products/${p.id}/prices`)).data.find((x: any) => x.id === shown.ID)
      expect(shown).to.deep.equal({
        ID: created.id,
        Product: p.id,
        Amount: '9.00 EUR',
        Billing: 'every month',
        Nickname: 'Monthly',
        'Lookup key': '-',
        'Tax behavior': created.tax_behavior,
        Active: 'yes',
        Created: date(created.created),
      })

      const json = ok(await cli(['products', 'prices', 'create', p.id, '--currency', 'jpy', '--unit-amount', '1200', '--set-as-default', '--json'])).json()
      expect(json).to.include({product: p.id, unit_amount: 1200, currency: 'jpy', type: 'one_time'})
      expect((await api('GET', `/products/${p.id}`)).default_price).to.equal(json.id)
    })

    it('list: amounts in major units; the API list with --json', async function () {
      const p = await product('Priced')
      await api('POST', `/products/${p.id}/prices`, {currency: 'eur', unit_amount: 12_345, recurring: {interval: 'month', interval_count: 3}, lookup_key: 'q'})
      const json = ok(await cli(['products', 'prices', 'list', p.id, '--json'])).json()
      expect(json).to.deep.equal(await api('GET', `/products/${p.id}/prices?limit=25`))
      const rows = cells(ok(await cli(['products', 'prices', 'list', p.id])).stdout)
      expect(rows[0]).to.deep.equal(['ID', 'AMOUNT', 'BILLING', 'NICKNAME', 'LOOKUP KEY', 'ACTIVE', 'CREATED'])
      const byId = Object.fromEntries(rows.slice(1).map((r) => [r[0], r.slice(1)]))
      const [recurring, oneTime] = [json.data.find((x: any) => x.recurring), json.data.find((x: any) => !x.recurring)]
      expect(byId[recurring.id]).to.deep.equal(['123.45 EUR', 'every 3 months', '-', 'q', 'yes', date(recurring.created)])
      expect(byId[oneTime.id]).to.deep.equal(['25.00 EUR', 'one-time', '-', '-', 'yes', date(oneTime.created)])
    })

    it('update: the mutable fields; amount flags do not exist', async function () {
      const p = await product('Update price')
      const price = await api('POST', `/products/${p.id}/prices`, {currency: 'eur', unit_amount: 500})
      const json = ok(await cli(['products', 'prices', 'update', p.id, price.id, '--nickname', 'Launch', '--no-active', '--metadata', 'a=1', '--json'])).json()
      expect(json).to.include({id: price.id, nickname: 'Launch', active: false, unit_amount: 500})
      expect(json.metadata).to.deep.equal({a: '1'})

      const shown = kv(ok(await cli(['products', 'prices', 'update', p.id, price.id, '--lookup-key', 'launch'])).stdout)
      expect(shown).to.include({ID: price.id, Amount: '5.00 EUR', Nickname: 'Launch', 'Lookup key': 'launch', Active: 'no'})

      const immutable = await cli(['products', 'prices', 'update', p.id, price.id, '--unit-amount', '900'])
      expect(immutable.code).to.equal(2)
      expect(immutable.stderr).to.include('--unit-amount')
    })

    it('below the minimum amount: exit 6 with the API code', async function () {
      const p = await product('Cheap')
      const res = await cli(['products', 'prices', 'create', p.id, '--currency', 'eur', '--unit-amount', '100'])
      expect(res.code).to.equal(6)
      expect(res.stderr).to.match(/^amount_too_small: .+ \(req_\w+\)\n$/)
    })
  })

  describe('option groups and values', function () {
    it('create with --value (and --values) and show the group with its value ids', async function () {
      const p = await product('Options')
      const res = ok(await cli(['products', 'options', 'create', p.id, '--name', 'Size', '--value', 'S', '--value', 'M', '--value', 'L']))
      const [head, values] = res.stdout.trimEnd().split('\n\n')
      const group = (await api('GET', `/products/${p.id}/options`)).data.find((g: any) => g.name === 'Size')
      expect(kv(head)).to.deep.equal({ID: group.id, Name: 'Size', Product: p.id})
      expect(cells(values)).to.deep.equal([['VALUE', 'VALUE ID'], ...group.values.map((v: any) => [v.value, v.id])])
      expect(group.values.map((v: any) => v.value)).to.deep.equal(['S', 'M', 'L'])

      const json = ok(await cli(['products', 'options', 'create', p.id, '--name', 'Color', '--values', 'Red', '--values', 'Blue', '--json'])).json()
      expect(json).to.include({object: 'option_group', product: p.id, name: 'Color'})
      expect(json.values.map((v: any) => v.value)).to.deep.equal(['Red', 'Blue'])
    })

    it('list: one row per value with the ids; the API list with --json', async function () {
      const {product: p, size, color} = await tee()
      const json = ok(await cli(['products', 'options', 'list', p.id, '--json'])).json()
      expect(json).to.deep.equal(await api('GET', `/products/${p.id}/options?limit=25`))
      const rows = cells(ok(await cli(['products', 'options', 'list', p.id])).stdout)
      expect(rows[0]).to.deep.equal(['GROUP', 'VALUE', 'GROUP ID', 'VALUE ID'])
      const expected = json.data.flatMap((g: any) => g.values.map((v: any) => [g.name, v.value, g.id, v.id]))
      expect(rows.slice(1)).to.deep.equal(expected)
      expect(expected).to.have.length(size.values.length + color.values.length)
    })

    it('rename, values add, values delete, delete', async function () {
      const {product: p, size, color} = await tee()
      const renamed = ok(await cli(['products', 'options', 'rename', size.id, '--name', 'Shirt size', '--json'])).json()
      expect(renamed).to.include({id: size.id, name: 'Shirt size'})
      expect(kv(ok(await cli(['products', 'options', 'rename', size.id, '--name', 'Size'])).stdout)).to.include({ID: size.id, Name: 'Size'})

      const added = ok(await cli(['products', 'options', 'values', 'add', size.id, '--value', 'XL', '--json'])).json()
      expect(added.values.map((v: any) => v.value)).to.deep.equal(['S', 'M', 'L', 'XL'])
      const xs = ok(await cli(['products', 'options', 'values', 'add', size.id, '--value', 'XS', '--sort-order', '-1']))
      const [, table] = xs.stdout.trimEnd().split('\n\n')
      expect(cells(table).slice(1).map((r) => r[0])).to.deep.equal(['XS', 'S', 'M', 'L', 'XL'])

      const xl = added.values.find((v: any) => v.value === 'XL')
      expect(ok(await cli(['products', 'options', 'values', 'delete', xl.id])).stdout).to.equal(`Deleted option value ${xl.id}.\n`)
      const xsId = (await api('GET', `/products/${p.id}/options`)).data.find((g: any) => g.id === size.id).values.find((v: any) => v.value === 'XS').id
      expect(ok(await cli(['products', 'options', 'values', 'delete', xsId, '--json'])).json()).to.include({id: xsId, deleted: true})

      expect(ok(await cli(['products', 'options', 'delete', color.id])).stdout).to.equal(`Deleted option group ${color.id}.\n`)
      expect(ok(await cli(['products', 'options', 'delete', size.id, '--json'])).json()).to.include({id: size.id, deleted: true})
      expect((await api('GET', `/products/${p.id}/options`)).data).to.deep.equal([])
    })

    it('deletion guards come back as conflicts (exit 6)', async function () {
      const {product: p, size, color, value} = await tee()
      await api('POST', `/products/${p.id}/variants`, {options: [{group: size.id, value: value(size, 'S')}, {group: color.id, value: value(color, 'Red')}]})
      const inUse = await cli(['products', 'options', 'values', 'delete', value(size, 'S')])
      expect(inUse.code).to.equal(6)
      expect(inUse.stderr).to.match(/^value_in_use: .+ \(req_\w+\)\n$/)
      const groupGuard = await cli(['products', 'options', 'delete', size.id, '--json'])
      expect(groupGuard.code).to.equal(6)
      expect(groupGuard.json().error).to.include({code: 'variants_exist', status: 409})
    })
  })

  describe('variants', function () {
    it('create resolves option names (any case) to ids with one product read', async function () {
      const {product: p, size, color, value} = await tee()
      const json = ok(await cli([
        'products', 'variants', 'create', p.id, '--option', 'size=m', '--option', 'COLOR=Red', '--sku', 'TEE-NAMED',
        '--track-inventory', '--stock-qty', '5', '--features', 'Organic', '--features', 'Heavy', '--delivery-days', '3', '--highlight', '--json',
      ])).json()
      expect(json.options.map((o: any) => ({group: o.group, value: o.value}))).to.deep.equal([
        {group: size.id, value: value(size, 'M')},
        {group: color.id, value: value(color, 'Red')},
      ])
      expect(json).to.include({sku: 'TEE-NAMED', track_inventory: true, stock_qty: 5, delivery_days: 3, highlight: true, title: 'M / Red'})
      expect(json.features).to.deep.equal(['Organic', 'Heavy'])
      const listed = await api('GET', `/products/${p.id}/variants?limit=100`)
      expect(listed.data.find((v: any) => v.id === json.id)).to.deep.equal(json)
    })

    it('create accepts ids, and shows the variant as a block', async function () {
      const {product: p, size, color, value} = await tee()
      const res = ok(await cli(['products', 'variants', 'create', p.id, '--option', `${size.id}=${value(size, 'L')}`, '--option', `Color=${value(color, 'Blue')}`, '--title', 'Large blue']))
      const shown = kv(res.stdout)
      const v = (await api('GET', `/products/${p.id}/variants?limit=100`)).data.find((x: any) => x.id === shown.ID)
      expect(shown).to.deep.equal({
        ID: v.id,
        Product: p.id,
        Title: 'Large blue',
        Options: 'Size=L, Color=Blue',
        SKU: '-',
        Price: `${p.default_price} (the product's default)`,
        Stock: 'not tracked',
        'Sort order': String(v.sort_order),
        Created: date(v.created),
      })
    })

    it('an unknown group or value fails with exit 2 naming the known ones; nothing is created', async function () {
      const {product: p} = await tee()
      const group = await cli(['products', 'variants', 'create', p.id, '--option', 'Fit=Slim', '--option', 'Size=M'])
      expect(group.code).to.equal(2)
      expect(group.stderr).to.equal('Error: Unknown option group "Fit"; the product\'s groups: "Size", "Color"\n')
      const value = await cli(['products', 'variants', 'create', p.id, '--option', 'Size=XL', '--json'])
      expect(value.code).to.equal(2)
      expect(value.json().error).to.include({type: 'usage_error', param: '--option', message: 'Unknown value "XL" for option group "Size"; its values: "S", "M", "L"'})
      expect((await api('GET', `/products/${p.id}/variants`)).data).to.have.length(1)
    })

    it('an incomplete combination fails before anything is written, naming the group left out (exit 2)', async function () {
      const {product: p} = await tee()
      const res = await cli(['products', 'variants', 'create', p.id, '--option', 'Size=M'])
      expect(res.code).to.equal(2)
      expect(res.stderr).to.equal('Error: Missing --option for the product\'s option group "Color": a variant takes one value of every group, e.g. --option Color=Red\n')
      const none = await cli(['products', 'variants', 'create', p.id, '--sku', 'NO-OPTIONS'])
      expect(none.code).to.equal(2)
      expect(none.stderr).to.match(/Missing --option for the product's option groups "Size", "Color"/)
      // Only the default variant: nothing was created.
      expect((await api('GET', `/products/${p.id}/variants`)).data.filter((v: {sku: string | null}) => v.sku)).to.deep.equal([])
    })

    it('create takes the combination from --data when no --option is given', async function () {
      const {product: p, size, color, value} = await tee()
      const body = {options: [{group: size.id, value: value(size, 'S')}, {group: color.id, value: value(color, 'Blue')}], sku: 'FROM-STDIN'}
      const json = ok(await cli(['products', 'variants', 'create', p.id, '--data', '-', '--json'], {input: JSON.stringify(body)})).json()
      expect(json).to.include({sku: 'FROM-STDIN', title: 'S / Blue'})
    })

    it('list: ID, TITLE, SKU, PRICE (major units), STOCK; the API list with --json', async function () {
      const {product: p, size, color, value} = await tee()
      const own = await api('POST', `/products/${p.id}/prices`, {currency: 'eur', unit_amount: 3150})
      const v = await api('POST', `/products/${p.id}/variants`, {
        options: [{group: size.id, value: value(size, 'L')}, {group: color.id, value: value(color, 'Red')}],
        price: own.id, sku: 'TEE-L-RED', track_inventory: true, stock_qty: 0,
      })
      const json = ok(await cli(['products', 'variants', 'list', p.id, '--json'])).json()
      expect(json).to.deep.equal(await api('GET', `/products/${p.id}/variants?limit=25`))
      const rows = cells(ok(await cli(['products', 'variants', 'list', p.id])).stdout)
      expect(rows[0]).to.deep.equal(['ID', 'TITLE', 'SKU', 'PRICE', 'STOCK'])
      const byId = Object.fromEntries(rows.slice(1).map((r) => [r[0], r]))
      expect(byId[v.id]).to.deep.equal([v.id, 'L / Red', 'TEE-L-RED', '31.50 EUR', '0'])
      expect(Object.keys(byId)).to.have.length(2)
    })

    it('update and delete', async function () {
      const {product: p, size, color, value} = await tee()
      const v = await api('POST', `/products/${p.id}/variants`, {options: [{group: size.id, value: value(size, 'S')}, {group: color.id, value: value(color, 'Red')}]})
      const json = ok(await cli(['products', 'variants', 'update', v.id, '--track-inventory', '--stock-qty', '20', '--sku', 'TEE-S-RED', '--json'])).json()
      expect(json).to.include({id: v.id, track_inventory: true, stock_qty: 20, sku: 'TEE-S-RED'})
      const shown = kv(ok(await cli(['products', 'variants', 'update', v.id, '--features', 'Soft', '--revisions', '2'])).stdout)
      expect(shown).to.include({ID: v.id, SKU: 'TEE-S-RED', Stock: '20', Features: 'Soft', Revisions: '2'})

      expect(ok(await cli(['products', 'variants', 'delete', v.id])).stdout).to.equal(`Deleted variant ${v.id}.\n`)
      const dflt = (await api('GET', `/products/${p.id}`)).variants.find((x: any) => x.is_default)
      const guard = await cli(['products', 'variants', 'delete', dflt.id, '--json'])
      expect(guard.code).to.be.oneOf([6, 5])
      expect(guard.json().error.request_id).to.match(/^req_/)
    })
  })

  describe('files', function () {
    it('upload prints the storage path (stdout only), usable as a product image', async function () {
      const dir = mkdtempSync(join(tmpdir(), 'payapp-upload-'))
      const file = join(dir, 'tee.png')
      writeFileSync(file, Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 1)]))
      const res = ok(await cli(['files', 'upload', file]))
      expect(res.stdout).to.match(/^files\/\S+\n$/)
      expect(res.stderr).to.match(/^Uploaded tee\.png \(72 bytes, image\/png\) as \S+\n$/)
      const path = res.stdout.trim()

      const json = ok(await cli(['files', 'upload', file, '--json'])).json()
      expect(json).to.include({object: 'file', filename: 'tee.png', size: 72, content_type: 'image/png'})
      expect(json.path).to.match(/^files\//)

      const created = ok(await cli(['products', 'create', '--name', 'With image', '--images', path, '--json'])).json()
      expect(created.images).to.deep.equal([path])
    })

    it('upload of a missing file fails without a stack trace', async function () {
      const res = await cli(['files', 'upload', '/nonexistent/file.png'])
      expect(res.code).to.not.equal(0)
      expect(res.stderr).to.match(/^file_unreadable: .*\/nonexistent\/file\.png.*\n$/)
    })
  })
})
