import {expect} from 'chai'
import {existsSync} from 'node:fs'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'

import {adminEndpoints} from '@payapp/sdk/admin-endpoints'
import {DOOR_PREFIX, endpoints} from '@payapp/sdk/endpoints'
import {startGateway, type RunningGateway} from '../../src/gateway/server.js'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

/**
 * `gateway start` and `payapp/testing` run the gateway from dist/bundle/gateway.cjs (scripts/build-gateway.js:
 * fastify bundled, its router's prefix matching replaced): it must route every request as the sources do.
 */
describe('the bundled gateway (dist/bundle/gateway.cjs)', function () {
  this.timeout(30_000)
  let bundled: RunningGateway
  let source: RunningGateway

  before(async function () {
    // `npm test` builds first; a bare mocha run without a build has no bundle.
    if (!existsSync(join(ROOT, 'dist/bundle/gateway.cjs'))) this.skip()
    const {loadGateway} = (await import(pathToFileURL(join(ROOT, 'dist/gateway/load.js')).href)) as typeof import('../../src/gateway/load.js')
    const bundle = await loadGateway()
    expect(bundle.startGateway).not.to.equal(startGateway)
    const opts = {port: 0, db: ':memory:', rateLimit: false, adminKey: 'adm_bundle_test_0000000000000000'}
    ;[bundled, source] = await Promise.all([bundle.startGateway(opts), startGateway(opts)])
  })
  after(async () => {
    await bundled?.close()
    await source?.close()
  })

  it('answers every route of both tables, their other methods and unknown paths as the sources do', async () => {
    const paths = new Set<string>(['/', '/v1', '/v1/store/nothing', '/v1/app/products/prod_x/nothing', '/_admin/nothing', '/openapi.json', '/s/demo'])
    for (const def of Object.values(endpoints)) for (const door of def.doors) paths.add(DOOR_PREFIX[door] + def.path)
    for (const def of Object.values(adminEndpoints)) paths.add(`/_admin${def.path}`)
    const requests = [...paths].flatMap((path) => ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'].map((method) => ({method, path: path.replace(/\{\w+\}/g, 'x_1')})))
    const answer = async (gw: RunningGateway, {method, path}: {method: string; path: string}) => {
      const res = await fetch(gw.url + path, {method, headers: {authorization: 'Bearer adm_bundle_test_0000000000000000'}})
      const text = await res.text()
      const code = res.headers.get('content-type')?.startsWith('application/json') && text ? JSON.parse(text).error?.code : undefined
      return `${method} ${path} → ${res.status} ${code ?? ''}`
    }
    const fromBundle: string[] = []
    const fromSource: string[] = []
    for (const request of requests) {
      fromBundle.push(await answer(bundled, request))
      fromSource.push(await answer(source, request))
    }
    expect(fromBundle).to.deep.equal(fromSource)
    // Not vacuous: the requests reached routes, 405s and 404s alike.
    expect(fromBundle.filter((line) => / → 405 /.test(line))).not.to.be.empty
    expect(fromBundle.filter((line) => / → 404 route_not_found/.test(line))).not.to.be.empty
    expect(fromBundle.filter((line) => / → 401 /.test(line))).not.to.be.empty
  })
})
