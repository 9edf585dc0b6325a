import {expect} from 'chai'
import {build} from 'esbuild'
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import vm from 'node:vm'

import {lazySchemas} from '../../packages/sdk/scripts/lazy-schemas.js'

/**
 * A package with two schema modules (catalog imports common) and a module the plugin is not told about, each
 * logging when it is evaluated and when a value of it is made.
 */
const FILES = {
  'src/schemas/common.ts': `(globalThis as any).log.push('common evaluated')\nexport const money = ((globalThis as any).log.push('money made'), {currency: 'eur'})\nexport const ID_PREFIX = 'prod_'\n`,
  'src/schemas/catalog.ts':
    `import {money, ID_PREFIX} from './common.js'\n(globalThis as any).log.push('catalog evaluated')\n` +
    `export const product = ((globalThis as any).log.push('product made'), {money, prefix: ID_PREFIX})\n` +
    `export const price = ((globalThis as any).log.push('price made'), {money})\nexport function describe(p: {prefix: string}) { return 'product ' + p.prefix }\n`,
  'src/other.ts': `(globalThis as any).log.push('other evaluated')\nexport const table = ((globalThis as any).log.push('table made'), {size: 1})\n`,
}

describe('lazySchemas (packages/sdk/scripts/lazy-schemas.js)', function () {
  this.timeout(20_000)
  let dir: string
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'payapp-lazy-schemas-'))
    for (const [path, text] of Object.entries(FILES)) {
      mkdirSync(dirname(join(dir, path)), {recursive: true})
      writeFileSync(join(dir, path), text)
    }
  })
  after(() => rmSync(dir, {recursive: true, force: true}))

  /** Bundles `entry` (a module beside src/) with the plugin told about the two schema modules; runs it; returns the log. */
  async function run(entry: string): Promise<unknown[]> {
    const modules = ['common', 'catalog'].map((name) => join(dir, 'src', 'schemas', `${name}.ts`))
    const result = await build({
      stdin: {contents: entry, resolveDir: join(dir, 'src'), loader: 'ts', sourcefile: 'entry.ts'},
      bundle: true,
      write: false,
      format: 'cjs',
      platform: 'node',
      logLevel: 'silent',
      plugins: [lazySchemas({modules, root: dir})],
    })
    const log: unknown[] = []
    vm.runInNewContext(result.outputFiles[0]!.text, {globalThis: {log}, log, require, module: {exports: {}}, exports: {}})
    return log
  }

  it('evaluates a schema module on the first read of one of its values, and makes only what that read needs', async () => {
    const log = await run(`import {product} from './schemas/catalog.js'\n(globalThis as any).log.push('start');\n(globalThis as any).log.push(product.prefix)`)
    expect(log).to.deep.equal(['start', 'catalog evaluated', 'product made', 'common evaluated', 'money made', 'prod_'])
    expect(log, 'price, never read, is never made').not.to.include('price made')
  })

  it('keeps identity: a value read twice, or through another schema, is the same object', async () => {
    const log = await run(
      `import {product, price} from './schemas/catalog.js'\nimport {money} from './schemas/common.js'\n` +
        `(globalThis as any).log.push(product === product, product.money === money, price.money === money)`,
    )
    expect(log.slice(-3)).to.deep.equal([true, true, true])
    expect(log.filter((line) => line === 'money made')).to.have.length(1)
  })

  it('leaves functions usable as functions and a namespace import complete', async () => {
    const log = await run(`import * as catalog from './schemas/catalog.js'\n(globalThis as any).log.push(catalog.describe(catalog.product), Object.keys(catalog).sort().join())`)
    expect(log.slice(-2)).to.deep.equal(['product prod_', 'describe,price,product'])
  })

  it('leaves a module it was not told about as it was: evaluated at import, values made at once', async () => {
    const log = await run(`import {table} from './other.js'\n(globalThis as any).log.push('start', table.size)`)
    expect(log).to.deep.equal(['other evaluated', 'table made', 'start', 1])
  })
})
