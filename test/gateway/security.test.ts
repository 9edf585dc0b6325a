import {connect} from 'node:net'

import {expect} from 'chai'
import fc from 'fast-check'

import {sellable} from '../helpers/commerce.js'
import {expectError, TestGateway, type Account} from '../helpers/gateway.js'

/**
 * Defects found by attacking the gateway (issue 15), each reproduced over real HTTP or a raw socket:
 * whatever a client sends, the answer is a 4xx in the spec's envelope with X-Request-Id, nothing is
 * written, and no connection is held open forever.
 */
describe('gateway: hostile clients', function () {
  this.timeout(60_000)
  let gw: TestGateway
  let acct: Account
  let live: Account

  before(async () => {
    // Short timeouts, so the slow-loris tests see the server hang up without waiting long.
    gw = await TestGateway.start({timeouts: {requestMs: 400, headersMs: 300, idleMs: 400, keepAliveMs: 300}})
    acct = await gw.account('test')
    live = await gw.account('live')
  })
  after(() => gw.close())

  const address = () => new URL(gw.url)

  /** Writes raw bytes on a fresh socket; resolves with everything read once the server closes it. */
  function rawExchange(text: string, opts: {keepOpen?: boolean} = {}): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(Number(address().port), address().hostname)
      let out = ''
      socket.on('data', (d) => (out += d))
      socket.on('close', () => resolve(out))
      socket.on('error', reject)
      socket.write(text)
      if (!opts.keepOpen) socket.end()
    })
  }

  /** A raw HTTP response split into status, headers (lower-case) and parsed JSON body. */
  function parseRaw(raw: string) {
    const [head, ...rest] = raw.split('\r\n\r\n')
    const [statusLine, ...lines] = head.split('\r\n')
    const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]))
    return {status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(rest.join('\r\n')) as any}
  }

  describe('2. malformed multipart', () => {
    for (const door of ['app', 'store'] as const) {
      it(`answers a part without its closing boundary, and a multipart type without a boundary, with a 400 envelope (/v1/${door})`, async () => {
        const token = door === 'app' ? acct.token : acct.secretKey
        const unclosed = '--XB\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\nhello'
        const cases: Array<[string, string]> = [
          ['multipart/form-data; boundary=XB', unclosed],
          ['multipart/form-data', 'hello'],
          ['multipart/form-data; boundary=XB', '--XB\r\nContent-Disposition: form-data; name="file"\r\n'],
          ['multipart/form-data; boundary=XB', 'garbage without any boundary'],
        ]
        for (const [contentType, rawBody] of cases) {
          const res = await gw.request('POST', `/v1/${door}/files`, {token, rawBody, headers: {'content-type': contentType}})
          expect(res.status, `${contentType} ${JSON.stringify(rawBody)}: ${res.text}`).to.equal(400)
          expectError(res, 400)
        }
        const files = await gw.request('GET', `/v1/${door}/files`, {token})
        if (files.status === 200) expect(files.body.data).to.have.length(0)
      })
    }
  })

  describe('3. deep bodies and bodies on routes that take none', () => {
    const deepObject = '{"a":'.repeat(20_000) + '1' + '}'.repeat(20_000)
    const deepArray = '['.repeat(20_000) + ']'.repeat(20_000)

    it('answers 20,000 levels of nesting with a 400 on routes with and without a body schema', async () => {
      const session = await checkoutSession(acct)
      const targets: Array<[string, (raw: string) => ReturnType<TestGateway['request']>]> = [
        ['POST /products', (raw) => acct.app('POST', '/products', {rawBody: raw, headers: {'content-type': 'application/json'}})],
        ['POST /products metadata', (raw) => acct.app('POST', '/products', {rawBody: `{"name":"x","metadata":${raw}}`, headers: {'content-type': 'application/json'}})],
        ['POST /subscription_links/{id}/archive', (raw) => live.app('POST', '/subscription_links/sl_x/archive', {rawBody: raw, headers: {'content-type': 'application/json'}})],
        ['POST /v1/checkout/sessions/{id}/expire', (raw) => gw.request('POST', `/v1/checkout/sessions/${session}/expire`, {token: acct.secretKey, rawBody: raw, headers: {'content-type': 'application/json'}})],
      ]
      for (const [what, send] of targets) {
        for (const raw of [deepObject, deepArray]) {
          const res = await send(raw)
          expect(res.status, `${what}: ${res.text.slice(0, 200)}`).to.equal(400)
          expectError(res, 400)
        }
      }
    })

    it('refuses an unknown field on routes without a body schema with parameter_unknown, like every other route', async () => {
      const session = await checkoutSession(acct)
      const archive = await live.app('POST', '/subscription_links/sl_x/archive', {body: {zz_unknown: 1}})
      expect(expectError(archive, 400, 'parameter_unknown').param).to.equal('zz_unknown')
      const expire = await gw.request('POST', `/v1/checkout/sessions/${session}/expire`, {token: acct.secretKey, body: {zz_unknown: 1}})
      expect(expectError(expire, 400, 'parameter_unknown').param).to.equal('zz_unknown')
      // The refused request changed nothing: the session is still open and an empty body expires it.
      const ok = await gw.request('POST', `/v1/checkout/sessions/${session}/expire`, {token: acct.secretKey, body: {}})
      expect(ok.status, ok.text).to.equal(200)
    })
  })

  describe('4. URLs are validated whole at creation', () => {
    it('refuses a success_url or cancel_url with a NUL byte, a control character or a space', async () => {
      const item = await sellable(acct)
      for (const bad of ['https://shop.example/ok\u0000x', 'https://shop.example/\r\nSet-Cookie: a=b', 'https://shop.example/a b', 'https://shop.example/\u007f', 'https://shop.example/\ttab']) {
        for (const field of ['success_url', 'cancel_url']) {
          const res = await acct.store('POST', '/checkouts', {body: {product_id: item.product.id, [field]: bad}})
          expect(expectError(res, 400).param, `${field}=${JSON.stringify(bad)}`).to.equal(field)
        }
      }
      const product = await acct.app('POST', '/products', {body: {name: 'x', url: 'https://shop.example/\u0000'}})
      expect(expectError(product, 400).param).to.equal('url')
    })
  })

  describe('5. slow clients', () => {
    it('closes a connection that sent headers and part of its body, then went silent', async () => {
      const raw = await rawExchange(
        `POST /v1/app/products HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${acct.token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":`,
        {keepOpen: true},
      )
      // Closed by the server (the promise resolved on 'close'), with at most an error answer.
      if (raw) expect(parseRaw(raw).status).to.be.within(400, 499)
    })

    it('closes a connection whose headers never finish', async () => {
      const raw = await rawExchange(`GET /v1/app/products HTTP/1.1\r\nHost: x\r\nAuthorization: Bear`, {keepOpen: true})
      if (raw) expect(parseRaw(raw).status).to.be.within(400, 499)
    })

    it('closes an idle keep-alive connection', async () => {
      const raw = await rawExchange(`GET /v1/app/products HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${acct.token}\r\n\r\n`, {keepOpen: true})
      expect(parseRaw(raw).status).to.equal(200)
    })
  })

  describe('7. framework errors carry the envelope and X-Request-Id', () => {
    it('answers a badly encoded URL with a 400 envelope', async () => {
      const res = await gw.request('GET', '/v1/app/products/%E0%A4%A', {token: acct.token})
      expectError(res, 400, 'invalid_url')
    })

    it('answers an over-long path parameter with a 414 envelope', async () => {
      const res = await gw.request('GET', `/v1/app/products/${'x'.repeat(3000)}`, {token: acct.token})
      expectError(res, 414, 'uri_too_long')
    })

    it('answers over-large headers and garbage request lines with an envelope, even before routing', async () => {
      for (const text of [`GET /v1/app/products HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 'NOT HTTP AT ALL\r\n\r\n']) {
        const res = parseRaw(await rawExchange(text))
        expect(res.status).to.be.within(400, 499)
        expect(res.body.error.request_id).to.be.a('string')
        expect(res.headers['x-request-id']).to.equal(res.body.error.request_id)
      }
    })
  })

  describe('8. two Authorization headers', () => {
    it('refuses the request instead of letting the first header win', async () => {
      const raw = await rawExchange(`GET /v1/app/products HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${acct.token}\r\nAuthorization: Bearer ${live.token}\r\nConnection: close\r\n\r\n`)
      const res = parseRaw(raw)
      expect(res.status).to.equal(401)
      expect(res.body.error.code).to.equal('invalid_authorization_header')
      expect(res.headers['x-request-id']).to.equal(res.body.error.request_id)
    })
  })

  describe('9. a __proto__ metadata key', () => {
    it('is refused with a code naming it, never silently dropped', async () => {
      const res = await acct.app('POST', '/products', {rawBody: '{"name":"p","metadata":{"__proto__":"kept","other":"kept"}}', headers: {'content-type': 'application/json'}})
      const err = expectError(res, 400, 'parameter_reserved')
      expect(err.param).to.equal('metadata[__proto__]')
      const list = await acct.app('GET', '/products')
      expect(list.body.data.filter((p: {name: string}) => p.name === 'p')).to.have.length(0)
    })
  })

  describe('10. a body nested past 32 levels, or a __proto__ key deep inside it', () => {
    /** `features` holding `levels` arrays, one inside the other: the body's depth is levels + 1. */
    const nested = (levels: number) => `{"name":"deep","features":${'['.repeat(levels)}${']'.repeat(levels)}}`

    it('refuses a body deeper than 32 levels with the path of its first level too deep, and writes nothing', async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer({min: 20, max: 45}), async (levels) => {
          const res = await acct.app('POST', '/products', {rawBody: nested(levels), headers: {'content-type': 'application/json'}})
          expect(res.status, res.text).to.equal(400)
          if (levels + 1 > 32) {
            expect(res.body.error.code).to.equal('body_too_deep')
            // The 33rd level: features, then 31 arrays' first items.
            expect(res.body.error.param).to.equal(`features${'[0]'.repeat(31)}`)
          } else {
            expect(res.body.error.code).to.not.equal('body_too_deep')
          }
        }),
        {numRuns: 30},
      )
      const list = await acct.app('GET', '/products')
      expect(list.body.data.filter((p: {name: string}) => p.name === 'deep')).to.have.length(0)
    })

    it('names a __proto__ key inside arrays and objects by its whole path', async () => {
      const res = await acct.app('POST', '/products', {
        rawBody: '{"name":"p","metadata":{"a":[{"b":"x"},{"c":[1,{"__proto__":"kept"}]}],"z":"y"}}',
        headers: {'content-type': 'application/json'},
      })
      const err = expectError(res, 400, 'parameter_reserved')
      expect(err.param).to.equal('metadata[a][1][c][1][__proto__]')
    })
  })

  /** An open merchant-API checkout session id of the account. */
  async function checkoutSession(account: Account): Promise<string> {
    const item = await sellable(account)
    const res = await account.store('POST', '/checkouts', {body: {product_id: item.product.id}})
    expect(res.status, res.text).to.equal(201)
    return res.body.session_id
  }
})
