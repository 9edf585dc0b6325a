import {expect} from 'chai'

import {DOOR_PREFIX, endpoints, pathParams, type Door, type EndpointDef} from '@payapp/sdk/endpoints'
import {expectError, TestGateway} from '../helpers/gateway.js'

/**
 * "Zero 5xx on malformed input": every endpoint, on every door, is sent the kinds of garbage real
 * clients send — broken JSON, wrong shapes, wrong types in every field, hostile path parameters and
 * queries — and must answer a 4xx in the spec's envelope every time, and write nothing.
 */
describe('gateway: malformed input never yields a 5xx', function () {
  this.timeout(120_000)
  let gw: TestGateway
  let acct: Awaited<ReturnType<TestGateway['account']>>
  let live: Awaited<ReturnType<TestGateway['account']>>
  let productId: string

  before(async () => {
    gw = await TestGateway.start()
    acct = await gw.account('test')
    live = await gw.account('live')
    const product = await acct.app('POST', '/products', {body: {name: 'Target', price: {currency: 'eur', unit_amount: 1000}}})
    productId = product.body.id
  })
  after(() => gw.close())

  const cases: Array<[string, EndpointDef]> = Object.entries(endpoints)

  /** Bodies that broke parsers: 20,000 levels of nesting, and multipart that never closes or has no boundary. */
  const DEEP_BODIES = ['{"a":'.repeat(20_000) + '1' + '}'.repeat(20_000), '['.repeat(20_000) + ']'.repeat(20_000), `{"metadata":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}}`]
  const BROKEN_MULTIPART: Array<[string, string]> = [
    ['multipart/form-data; boundary=XB', '--XB\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\nhello'],
    ['multipart/form-data', 'hello'],
    ['multipart/form-data; boundary=XB', '--XB\r\nContent-Disposition: form-data; name="file"\r\n'],
  ]

  /** Every value a field may wrongly receive. */
  const WRONG_VALUES: unknown[] = [null, true, -1, 1.5, 1e308, '', 'x'.repeat(10_000), [], [null], {}, {nested: {deep: [1]}}, '__proto__', '\u0000\ud800']

  async function send(def: EndpointDef, door: Door, opts: {path?: string; raw?: string; body?: unknown; contentType?: string}) {
    const params = Object.fromEntries(pathParams(def.path).map((p) => [p, p === 'id' && def.path.startsWith('/products') ? productId : 'nope']))
    const path = opts.path ?? def.path.replace(/\{(\w+)\}/g, (_, name: string) => params[name])
    // Live-only routes get a live credential, so their bodies are validated, not refused up front.
    const who = def.env === 'live' ? live : acct
    const token = door === 'app' ? who.token : who.secretKey
    const headers: Record<string, string> = {}
    if (opts.contentType) headers['content-type'] = opts.contentType
    const rawBody = opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body))
    return gw.request(def.method, DOOR_PREFIX[door] + path, {token, rawBody, headers})
  }

  function expect4xx(res: Awaited<ReturnType<TestGateway['request']>>, what: string) {
    expect(res.status, `${what}: ${res.text.slice(0, 300)}`).to.be.within(400, 499)
    expectError(res, res.status)
  }

  for (const [id, def] of cases) {
    for (const door of def.doors) {
      it(`${id} on /v1/${door}`, async () => {
        if (def.method !== 'GET' && def.method !== 'DELETE' && !def.multipart) {
          const before = await acct.app('GET', '/products?limit=100')
          for (const raw of ['{', '{"a":', 'null', '[]', '"text"', '12', '{"__proto__": {"x": 1}}', '\u0000']) {
            const res = await send(def, door, {raw, contentType: 'application/json'})
            expect4xx(res, `raw body ${JSON.stringify(raw)}`)
          }
          expect4xx(await send(def, door, {raw: 'a=1', contentType: 'application/x-www-form-urlencoded'}), 'form body')
          expect4xx(await send(def, door, {raw: '{"a":1}', contentType: 'text/plain'}), 'text/plain body')
          for (const raw of DEEP_BODIES) expect4xx(await send(def, door, {raw, contentType: 'application/json'}), `deep body ${raw.slice(0, 12)}`)
          // A rejected request writes nothing: the catalogue is as it was.
          const after = await acct.app('GET', '/products?limit=100')
          expect(after.body.data).to.deep.equal(before.body.data)
        }
        if (def.method !== 'GET') {
          for (const [contentType, raw] of BROKEN_MULTIPART) expect4xx(await send(def, door, {raw, contentType}), `multipart ${contentType} ${JSON.stringify(raw)}`)
        }
        if (def.body) {
          const shape = (def.body as {shape?: Record<string, unknown>}).shape ?? (def.body as {def?: {in?: {shape?: Record<string, unknown>}}}).def?.in?.shape ?? {}
          for (const field of Object.keys(shape)) {
            for (const value of WRONG_VALUES) {
              const res = await send(def, door, {body: {[field]: value}})
              expect(res.status, `${field}=${JSON.stringify(value)?.slice(0, 40)}: ${res.text.slice(0, 200)}`).to.be.below(500)
            }
          }
        }
        for (const hostile of ['%', '%00', '..', 'a%2Fb', 'x'.repeat(300), '%E0%A4%A']) {
          const path = def.path.replace(/\{(\w+)\}/g, hostile)
          if (path === def.path) continue
          const res = await send(def, door, {path})
          expect(res.status, `path ${path.slice(0, 60)}: ${res.text.slice(0, 200)}`).to.be.within(400, 499)
        }
        if (def.method === 'GET') {
          for (const q of ['?limit=abc', '?limit=0', '?limit=101', '?offset=-1', '?limit=1e3', '?limit[]=1', '?days=abc', '?%=%', '?status=%00']) {
            const res = await send(def, door, {path: def.path.replace(/\{(\w+)\}/g, (_, n: string) => (n === 'id' && def.path.startsWith('/products') ? productId : 'nope')) + q})
            expect(res.status, `query ${q}: ${res.text.slice(0, 200)}`).to.be.below(500)
          }
        }
      })
    }
  }

  it('answers garbage headers with a 4xx', async () => {
    for (const authorization of ['Bearer', 'Bearer ', 'Bearer a b', 'Basic Zm9vOmJhcg==', `Bearer ${'x'.repeat(5000)}`, 'Bearer app_test_%%%%']) {
      const res = await gw.request('GET', '/v1/app/products', {headers: {authorization}})
      expect4xx(res, authorization.slice(0, 20))
    }
    const res = await acct.app('POST', '/products', {body: {name: 'x'}, headers: {'idempotency-key': 'é'.repeat(10)}})
    expect4xx(res, 'non-ASCII idempotency key')
  })
})
