import {expect} from 'chai'
import {execFileSync} from 'node:child_process'
import {existsSync, mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
/** The built package to check; PAYAPP_SDK_DIR points it at another build (e.g. an older one, to see this test fail). */
const SDK = process.env.PAYAPP_SDK_DIR ?? join(ROOT, 'packages/sdk')
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc')

/** What an app writes: every client, the fetch option, errors, pagination, uploads and both webhook forms. */
const CONSUMER = `
import {AppClient, MerchantClient, GatewayAdmin, NotFoundError, verifyWebhook, verifyWebhookAsync, type Product, type RequestEvent} from '@payapp/sdk'
import {verifyWebhookAsync as edgeVerify} from '@payapp/sdk/webhooks'

const app = new AppClient({baseUrl: 'https://platform.example', token: 'app_test_x', fetch: (url, init) => fetch(url, init), onRequest: (e: RequestEvent) => console.log(e.url)})
const browser = new MerchantClient({baseUrl: 'https://platform.example', publishableKey: 'pk_test_x'})
const admin = new GatewayAdmin({baseUrl: 'http://127.0.0.1:4242', adminKey: 'adm_x'})
export async function main(body: string, header: string): Promise<string[]> {
  const names: string[] = []
  for await (const product of app.products.list({limit: 10, expand: ['data.variants']})) names.push((product satisfies Product).name)
  await app.files.upload(new Uint8Array([1, 2, 3]), {filename: 'a.png'})
  await app.files.upload(new Blob(['x'], {type: 'text/plain'}))
  const session = await browser.checkout.sessions.create({line_items: [{price_id: 'price_1', quantity: 1}]})
  names.push(session.id, (await admin.merchants.create()).id)
  names.push(verifyWebhook(body, header, 'whsec_1').id, (await verifyWebhookAsync(body, header, 'whsec_1')).id, (await edgeVerify(new TextEncoder().encode(body), header, 'whsec_1')).type)
  try {
    await app.products.retrieve('prod_missing')
  } catch (err) {
    if (err instanceof NotFoundError) names.push(err.code ?? '')
  }
  return names
}
`

describe('sdk/declarations', () => {
  let dir: string
  before(function () {
    if (!existsSync(join(SDK, 'dist/index.d.ts'))) this.skip()
    dir = mkdtempSync(join(tmpdir(), 'payapp-types-'))
    // The package as installed in an app without @types/node: only the SDK and its dependency zod.
    mkdirSync(join(dir, 'node_modules/@payapp'), {recursive: true})
    symlinkSync(SDK, join(dir, 'node_modules/@payapp/sdk'))
    symlinkSync(join(ROOT, 'node_modules/zod'), join(dir, 'node_modules/zod'))
    writeFileSync(join(dir, 'app.ts'), CONSUMER)
  })
  after(() => dir && rmSync(dir, {recursive: true, force: true}))

  // An ES module app bundled for browsers/edge, and a CommonJS one on node16 resolution (the require side's types).
  for (const [module, resolution] of [
    ['ESNext', 'Bundler'],
    ['Node16', 'Node16'],
  ] as const) {
    it(`compile in an app with types: [] and lib DOM, module ${module}: no @types/node reached`, function () {
      this.timeout(60_000)
      const compilerOptions = {noEmit: true, strict: true, types: [], lib: ['ES2022', 'DOM', 'DOM.Iterable'], target: 'ES2022', module, moduleResolution: resolution, preserveSymlinks: true}
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({compilerOptions, files: ['app.ts']}))
      let out: string
      try {
        out = execFileSync(process.execPath, [TSC, '-p', 'tsconfig.json', '--listFiles'], {cwd: dir, encoding: 'utf8'})
      } catch (err) {
        throw new Error(`tsc failed:\n${(err as {stdout?: string}).stdout}`)
      }
      const files = out.trim().split('\n')
      expect(files.filter((f) => f.includes('@types/node'))).to.deep.equal([])
      expect(files.some((f) => f.includes('@payapp/sdk/dist/'))).to.equal(true)
    })
  }
})
