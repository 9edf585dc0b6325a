/**
 * catalog.yaml applied the way the CI workflow applies it (the payapp CLI, credentials from the
 * environment, no terminal) to a real gateway started in this process with payapp/testing.
 */
import assert from 'node:assert/strict'
import {execFile} from 'node:child_process'
import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {after, before, test} from 'node:test'
import {fileURLToPath} from 'node:url'
import {promisify} from 'node:util'

import {startGateway} from 'payapp/testing'

const run = promisify(execFile)
const root = fileURLToPath(new URL('..', import.meta.url))

/** `payapp …` as `npx payapp` runs it: the installed package's bin, with this node. */
function payapp(args, env) {
  const pkgUrl = new URL(import.meta.resolve('payapp/package.json'))
  const bin = fileURLToPath(new URL(JSON.parse(readFileSync(pkgUrl, 'utf8')).bin.payapp, pkgUrl))
  return run(process.execPath, [bin, ...args], {cwd: root, env})
}

let gw
let env
before(async () => {
  gw = await startGateway()
  const {token} = await gw.installation({scopes: ['products:read', 'products:write', 'files:write', 'store:read']})
  // What the workflow sets, and a private config directory so no saved profile takes part.
  env = {...process.env, PAYAPP_TOKEN: token, PAYAPP_BASE_URL: gw.url, PAYAPP_ENV: 'test', XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'catalog-sync-')), PAYAPP_KEYCHAIN: 'off'}
})
after(() => gw.close())

test('apply creates the catalogue, and a second run changes nothing', async () => {
  const applied = await payapp(['catalog', 'apply', 'catalog.yaml', '--yes', '--json'], env)
  const summary = JSON.parse(applied.stdout.trim().split('\n').at(-1)).summary
  assert.equal(summary.failed, 0)

  const {client: store} = await gw.secretKey()
  const products = (await store.products.list()).data
  assert.deepEqual(products.map((p) => p.name).sort(), ['Classic T-Shirt', 'Mug'])
  const tee = await store.products.retrieve(products.find((p) => p.name === 'Classic T-Shirt').id)
  assert.deepEqual(tee.variants.filter((v) => !v.is_default).map((v) => v.sku).sort(), ['TEE-L', 'TEE-M', 'TEE-S'])

  const plan = JSON.parse((await payapp(['catalog', 'plan', 'catalog.yaml', '--json'], env)).stdout)
  assert.deepEqual(plan.changes.filter((c) => c.action !== 'unchanged'), [])
})
