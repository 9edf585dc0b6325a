import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import {existsSync, readFileSync, readdirSync} from 'node:fs'
import {dirname, join, relative, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

/** The only package an app pulls in by importing the SDK; the CLI's and the gateway's stay out, and so does every Node built-in (browsers, workerd). */
const ALLOWED_PACKAGES = new Set(['zod'])

/** Every `import … from`, `export … from`, bare `import '…'` and literal `import('…')`. */
const SPECIFIER = /(?:^|[\s;])(?:import|export)\s[^'"]*?\sfrom\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm

interface Graph {
  files: string[]
  packages: Set<string>
}

/** Follows relative imports from `entry`, mapping `.js` to `.ts` when walking sources. */
function importGraph(entry: string, fromSource: boolean): Graph {
  const files: string[] = []
  const packages = new Set<string>()
  const queue = [entry]
  while (queue.length > 0) {
    const file = queue.pop()!
    if (files.includes(file)) continue
    files.push(file)
    const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|^\s*\/\/.*$/gm, '')
    for (const match of text.matchAll(SPECIFIER)) {
      const spec = match[1] ?? match[2] ?? match[3]!
      if (spec.startsWith('.')) {
        const target = resolve(dirname(file), spec)
        queue.push(fromSource ? target.replace(/\.js$/, '.ts') : target)
      } else if (spec.startsWith('node:')) {
        packages.add(spec)
      } else {
        packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!)
      }
    }
  }
  return {files, packages}
}

function expectSelfContained(graph: Graph, dir: string) {
  const outside = graph.files.map((f) => relative(join(ROOT, dir), f)).filter((f) => f.startsWith('..'))
  expect(outside, 'files outside the SDK').to.deep.equal([])
  expect([...graph.packages].filter((p) => !ALLOWED_PACKAGES.has(p)), 'packages and built-ins beyond zod').to.deep.equal([])
}

describe('sdk/import graph', () => {
  it('packages/sdk/src/index.ts reaches only its own files and zod, no Node built-in', () => {
    const graph = importGraph(join(ROOT, 'packages/sdk/src/index.ts'), true)
    expect(graph.files.map((f) => relative(ROOT, f))).to.include.members(['packages/sdk/src/client.ts', 'packages/sdk/src/admin.ts', 'packages/sdk/src/transport.ts'])
    expectSelfContained(graph, 'packages/sdk/src')
  })

  it('the built @payapp/sdk loads only its dist and zod, no Node built-in', function () {
    this.timeout(20_000)
    const entry = join(ROOT, 'packages/sdk/dist/index.js')
    // `npm test` builds first; a bare mocha run without a build has nothing to check here.
    if (!existsSync(entry)) this.skip()
    expectSelfContained(importGraph(entry, false), 'packages/sdk/dist')
    // Through the package's own `exports`, as an app imports it.
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', "const m = await import('payapp/sdk'); console.log(Object.keys(m).sort().join(','))"], {
      cwd: ROOT,
      encoding: 'utf8',
    })
    expect(out.trim().split(',')).to.include.members(['AppClient', 'StoreClient', 'GatewayAdmin', 'verifyWebhook', 'schemas', 'endpoints', 'PagePromise'])
  })

  it('the built @payapp/sdk: every module path exports what its source does, and shares one instance of each class and schema', async function () {
    this.timeout(20_000)
    const dist = join(ROOT, 'packages/sdk/dist')
    if (!existsSync(join(dist, 'bundle'))) this.skip()
    const modules = readdirSync(join(ROOT, 'packages/sdk/src'), {recursive: true, encoding: 'utf8'}).filter((f) => f.endsWith('.ts')).map((f) => f.replace(/\.ts$/, ''))
    expect(modules).to.include.members(['index', 'client', 'schemas/catalog', 'schemas/index', 'webhooks-edge'])
    for (const module of modules) {
      const source = await import(join(ROOT, 'packages/sdk/src', `${module}.ts`))
      const built = await import(join(dist, `${module}.js`))
      expect(Object.keys(built).sort(), module).to.deep.equal(Object.keys(source).sort())
    }
    const sdk = await import(join(dist, 'index.js'))
    expect(sdk.NotFoundError).to.equal((await import(join(dist, 'errors.js'))).NotFoundError)
    expect(sdk.SignatureVerificationError).to.equal((await import(join(dist, 'webhooks-edge.js'))).SignatureVerificationError)
    expect(sdk.schemas.product).to.equal((await import(join(dist, 'schemas/catalog.js'))).product)
    expect(sdk.endpoints['products.list'].response).to.equal(sdk.schemas.product)
    expect(Object.keys(sdk.schemas.admin).sort()).to.deep.equal(Object.keys(await import(join(ROOT, 'packages/sdk/src/schemas/admin.ts'))).sort())
  })

  it('importing the built @payapp/sdk loads no HTTP stack or crypto until a call needs them, and require() no zod until a schema is read', function () {
    this.timeout(20_000)
    if (!existsSync(join(ROOT, 'packages/sdk/dist/bundle'))) this.skip()
    const loaded = (code: string[]) =>
      JSON.parse(execFileSync(process.execPath, code, {cwd: join(ROOT, 'packages/sdk'), encoding: 'utf8'})) as {before: string[]; after: string[]}
    const builtins = ['NativeModule http', 'NativeModule _http_client', 'NativeModule crypto']
    const esm = loaded(['--input-type=module', '-e', `const sdk = await import('@payapp/sdk'); const before = [...process.moduleLoadList]; sdk.verifyWebhook(...(({header, body}) => [body, header])(sdk.signWebhookPayload({id: 'evt_1'}, 'whsec_1')), 'whsec_1'); await new sdk.AppClient({token: 'app_test_x', baseUrl: 'http://127.0.0.1:9', maxRetries: 0}).products.list().catch(() => {}); console.log(JSON.stringify({before, after: process.moduleLoadList}))`])
    expect(esm.before.filter((m) => builtins.includes(m))).to.deep.equal([])
    expect(esm.after).to.include.members(builtins)
    const cjs = loaded(['-e', `const sdk = require('@payapp/sdk'); const zod = () => Object.keys(require.cache).some((f) => f.includes('/node_modules/zod/')); const before = zod() ? ['zod'] : []; sdk.schemas.product.safeParse({}); console.log(JSON.stringify({before, after: zod() ? ['zod'] : []}))`])
    expect(cjs).to.deep.equal({before: [], after: ['zod']})
  })
})
