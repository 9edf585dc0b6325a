import {expect} from 'chai'
import {once} from 'node:events'
import http from 'node:http'
import type {AddressInfo} from 'node:net'
import {inspect} from 'node:util'

import {
  APIError,
  AuthenticationError,
  ConflictError,
  ConnectionError,
  IdempotencyError,
  InvalidRequestError,
  NotFoundError,
  PayappError,
  PermissionError,
  RateLimitError,
  ResponseValidationError,
} from '@payapp/sdk/errors'
import {SDK_VERSION, Transport, type RequestEvent, type ResponseEvent, type TransportOptions} from '@payapp/sdk/transport'

import {httpSender} from '../../src/cli/http-sender.js'

const TOKEN = 'Bearer tok_test_0123456789abcdefWXYZ'
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** One scripted answer; the last step repeats for every further request. */
type Step =
  | {status: number; body?: unknown; raw?: string; headers?: Record<string, string>}
  | {destroy: true}
  | {hang: true}

interface Recorded {
  method: string
  url: string
  headers: http.IncomingHttpHeaders
  body: string
}

interface ScriptedServer {
  baseUrl: string
  requests: Recorded[]
  close(): Promise<void>
}

async function scriptedServer(script: Step[]): Promise<ScriptedServer> {
  const requests: Recorded[] = []
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      requests.push({method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8')})
      const step = script[Math.min(requests.length, script.length) - 1]!
      if ('destroy' in step) return void req.socket.destroy()
      if ('hang' in step) return
      const text = step.raw ?? (step.body === undefined ? '' : JSON.stringify(step.body))
      res.writeHead(step.status, {
        'content-type': step.raw === undefined ? 'application/json' : 'text/html',
        'x-request-id': `req_${requests.length}`,
        ...step.headers,
      })
      res.end(text)
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const {port} = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}/v1/app`,
    requests,
    async close() {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

function recordSleeps(): {delays: number[]; sleep: (ms: number) => Promise<void>} {
  const delays: number[] = []
  return {delays, sleep: async (ms) => void delays.push(ms)}
}

function errorBody(type: string, code?: string, param?: string, message = 'boom') {
  return {error: {type, code, param, message, request_id: 'req_body'}}
}

async function rejection(promise: Promise<unknown>): Promise<PayappError> {
  try {
    await promise
  } catch (err) {
    return err as PayappError
  }
  throw new Error('expected the request to fail')
}

// Every rule, through the runtime's fetch and through the CLI's node:http sender injected as the fetch option.
for (const [via, SENDER] of [
  ["the runtime's fetch", undefined],
  ["the CLI's node:http sender", httpSender],
] as const)
describe(`sdk/transport, via ${via}`, () => {
  let server: ScriptedServer | undefined
  afterEach(async () => {
    await server?.close()
    server = undefined
  })

  async function setup(script: Step[], opts: Partial<TransportOptions> = {}) {
    server = await scriptedServer(script)
    const sleeps = recordSleeps()
    const transport = new Transport({baseUrl: server.baseUrl, authorization: TOKEN, sleep: sleeps.sleep, fetch: SENDER, ...opts})
    return {transport, requests: server.requests, delays: sleeps.delays}
  }

  describe('requests', () => {
    it('sends a GET with query, auth and user agent, and returns data, status and request id', async () => {
      const {transport, requests} = await setup([{status: 200, body: {object: 'list', has_more: false, data: []}}], {
        userAgent: 'my-app/2.0',
      })
      const res = await transport.request({method: 'GET', path: '/products', query: {limit: 10, active: true, skip: undefined, q: 'a b&c'}})

      expect(res.data).to.deep.equal({object: 'list', has_more: false, data: []})
      expect(res.statusCode).to.equal(200)
      expect(res.requestId).to.equal('req_1')
      expect(requests).to.have.length(1)
      expect(requests[0]!.url).to.equal('/v1/app/products?limit=10&active=true&q=a+b%26c')
      expect(requests[0]!.headers.authorization).to.equal(TOKEN)
      expect(requests[0]!.headers.accept).to.equal('application/json')
      expect(requests[0]!.headers['user-agent']).to.equal(`payapp-sdk/${SDK_VERSION} node/${process.versions.node} my-app/2.0`)
      expect(requests[0]!.headers).not.to.have.property('idempotency-key')
    })

    it("carries the package's version, as package.json says", async () => {
      const {readFile} = await import('node:fs/promises')
      const pkg = JSON.parse(await readFile(new URL('../../packages/sdk/package.json', import.meta.url), 'utf8')) as {version: string}
      expect(SDK_VERSION).to.equal(pkg.version)
    })

    it('sends through the injected fetch, with the request it would send', async () => {
      const {transport, requests} = await setup([{status: 200, body: {id: 'x'}}])
      const seen: {url: string; init: RequestInit}[] = []
      const injected = new Transport({baseUrl: server!.baseUrl, authorization: TOKEN, fetch: async (url, init) => (seen.push({url, init}), fetch(url, init))})
      await injected.request({method: 'POST', path: '/products', body: {name: 'Mug'}, query: {expand: 'price'}})
      expect(seen).to.have.length(1)
      expect(seen[0]!.url).to.equal(`${server!.baseUrl}/products?expand=price`)
      expect(seen[0]!.init).to.include({method: 'POST', body: '{"name":"Mug"}', redirect: 'manual'})
      expect(requests).to.have.length(1)
      expect(transport).to.be.instanceOf(Transport)
    })

    it('refuses a fetch option that is not a function', () => {
      expect(() => new Transport({baseUrl: 'http://127.0.0.1:1', fetch: 'nope' as never})).to.throw(InvalidRequestError, /fetch/)
    })

    it('sends a JSON body and omits Authorization when none is configured', async () => {
      const {transport, requests} = await setup([{status: 201, body: {id: 'prod_1'}}], {authorization: undefined})
      const res = await transport.request<{id: string}>({method: 'POST', path: '/products', body: {name: 'Mug', tags: ['a']}})

      expect(res.data.id).to.equal('prod_1')
      expect(res.statusCode).to.equal(201)
      expect(requests[0]!.headers['content-type']).to.equal('application/json')
      expect(JSON.parse(requests[0]!.body)).to.deep.equal({name: 'Mug', tags: ['a']})
      expect(requests[0]!.headers).not.to.have.property('authorization')
    })

    it('sends multipart form data with a boundary', async () => {
      const {transport, requests} = await setup([{status: 200, body: {ok: true}}])
      const form = new FormData()
      form.append('purpose', 'product_image')
      form.append('file', new Blob(['PNGDATA'], {type: 'image/png'}), 'mug.png')
      await transport.request({method: 'POST', path: '/files', form})

      expect(requests[0]!.headers['content-type']).to.match(/^multipart\/form-data; boundary=/)
      expect(requests[0]!.body).to.include('name="purpose"').and.include('product_image')
      expect(requests[0]!.body).to.include('filename="mug.png"').and.include('PNGDATA')
      expect(requests[0]!.headers['idempotency-key']).to.match(UUID)
    })

    it('returns undefined data for an empty 204 response', async () => {
      const {transport} = await setup([{status: 204}])
      const res = await transport.request({method: 'DELETE', path: '/variants/v1'})
      expect(res.statusCode).to.equal(204)
      expect(res.data).to.equal(undefined)
    })

    it('refuses a path that does not start with "/" before sending anything', async () => {
      const {transport, requests} = await setup([{status: 200, body: {}}])
      const err = await rejection(transport.request({method: 'GET', path: 'https://evil.example/steal'}))
      expect(err).to.be.instanceOf(InvalidRequestError)
      expect(err.code).to.equal('invalid_path')
      expect(requests).to.have.length(0)
    })
  })

  describe('idempotency keys', () => {
    it('reuses one generated key on every retry of a POST, and a new key per call', async () => {
      const {transport, requests} = await setup([{status: 503}, {status: 503}, {status: 200, body: {id: 'a'}}, {status: 200, body: {id: 'b'}}])
      await transport.request({method: 'POST', path: '/products', body: {name: 'x'}})
      await transport.request({method: 'POST', path: '/products', body: {name: 'x'}})

      const keys = requests.map((r) => r.headers['idempotency-key'])
      expect(requests).to.have.length(4)
      expect(keys[0]).to.match(UUID)
      expect(keys[1]).to.equal(keys[0])
      expect(keys[2]).to.equal(keys[0])
      expect(keys[3]).to.match(UUID).and.not.equal(keys[0])
    })

    it('keys PATCH too, but not GET or DELETE', async () => {
      const {transport, requests} = await setup([{status: 200, body: {}}])
      await transport.request({method: 'PATCH', path: '/variants/v1', body: {title: 't'}})
      await transport.request({method: 'GET', path: '/variants/v1'})
      await transport.request({method: 'DELETE', path: '/variants/v1'})

      expect(requests[0]!.headers['idempotency-key']).to.match(UUID)
      expect(requests[1]!.headers).not.to.have.property('idempotency-key')
      expect(requests[2]!.headers).not.to.have.property('idempotency-key')
    })

    it('ignores a key in the transport-wide headers, which every call would share', async () => {
      const {transport, requests} = await setup([{status: 200, body: {}}], {headers: {'Idempotency-Key': 'shared'}})
      await transport.request({method: 'POST', path: '/products', body: {}})
      await transport.request({method: 'GET', path: '/products'})
      expect(requests[0]!.headers['idempotency-key']).to.match(UUID)
      expect(requests[1]!.headers).not.to.have.property('idempotency-key')
    })

    it("uses the caller's key on every attempt", async () => {
      const {transport, requests} = await setup([{status: 500}, {status: 200, body: {}}])
      await transport.request({method: 'POST', path: '/checkouts', body: {}, idempotencyKey: 'order-42'})
      expect(requests.map((r) => r.headers['idempotency-key'])).to.deep.equal(['order-42', 'order-42'])
    })

    it('rejects a key the platform would refuse (over 255 chars) without sending', async () => {
      const {transport, requests} = await setup([{status: 200, body: {}}])
      const err = await rejection(transport.request({method: 'POST', path: '/products', body: {}, idempotencyKey: 'k'.repeat(256)}))
      expect(err).to.be.instanceOf(InvalidRequestError)
      expect(err.code).to.equal('invalid_idempotency_key')
      expect(requests).to.have.length(0)
    })
  })

  describe('retries', () => {
    it('retries 5xx with 1, 2, 4, 8 s backoff and gives up after 5 attempts', async () => {
      const {transport, requests, delays} = await setup([{status: 503, body: errorBody('api_error', 'sandbox_unavailable')}])
      const err = await rejection(transport.request({method: 'GET', path: '/merchant'}))

      expect(requests).to.have.length(5)
      expect(delays).to.deep.equal([1000, 2000, 4000, 8000])
      expect(err).to.be.instanceOf(APIError)
      expect(err.statusCode).to.equal(503)
      expect(err.code).to.equal('sandbox_unavailable')
    })

    it('succeeds when a retry does', async () => {
      const {transport, requests, delays} = await setup([{status: 500}, {status: 502}, {status: 200, body: {ok: 1}}])
      const res = await transport.request({method: 'GET', path: '/balance'})
      expect(res.data).to.deep.equal({ok: 1})
      expect(requests).to.have.length(3)
      expect(delays).to.deep.equal([1000, 2000])
    })

    it('honours Retry-After on 429 instead of the backoff', async () => {
      const {transport, requests, delays} = await setup([
        {status: 429, headers: {'retry-after': '3'}, body: errorBody('rate_limit_error', 'rate_limited')},
        {status: 200, body: {}},
      ])
      await transport.request({method: 'POST', path: '/products', body: {}})
      expect(requests).to.have.length(2)
      expect(delays).to.deep.equal([3000])
    })

    it('falls back to the backoff for a 429 without Retry-After, and caps Retry-After at 60 s', async () => {
      const {transport, delays} = await setup([
        {status: 429},
        {status: 429, headers: {'retry-after': '600'}},
        {status: 503, headers: {'retry-after': '2'}},
        {status: 200, body: {}},
      ])
      await transport.request({method: 'GET', path: '/payments'})
      expect(delays).to.deep.equal([1000, 60_000, 2000])
    })

    it('surfaces the last 429 as a RateLimitError with its retryAfter', async () => {
      const {transport, requests} = await setup([{status: 429, headers: {'retry-after': '7'}, body: errorBody('rate_limit_error', 'rate_limited')}], {
        maxRetries: 1,
      })
      const err = await rejection(transport.request({method: 'GET', path: '/payments'}))
      expect(requests).to.have.length(2)
      expect(err).to.be.instanceOf(RateLimitError)
      expect((err as RateLimitError).retryAfter).to.equal(7)
    })

    const final: Array<[number, string, string | undefined, new (...args: never[]) => PayappError]> = [
      [400, 'invalid_request', 'parameter_missing', InvalidRequestError],
      [401, 'authentication_error', 'invalid_api_key', AuthenticationError],
      [403, 'insufficient_scope', undefined, PermissionError],
      [404, 'not_found', 'resource_missing', NotFoundError],
      [409, 'resource_conflict', 'out_of_stock', ConflictError],
      [409, 'idempotency_error', 'idempotency_key_reused', IdempotencyError],
      [422, 'invalid_state', 'session_expired', InvalidRequestError],
    ]
    for (const [status, type, code, cls] of final) {
      it(`does not retry ${status} ${code ?? type}`, async () => {
        const {transport, requests, delays} = await setup([{status, body: errorBody(type, code)}, {status: 200, body: {}}])
        const err = await rejection(transport.request({method: 'POST', path: '/orders', body: {}}))
        expect(requests).to.have.length(1)
        expect(delays).to.deep.equal([])
        expect(err).to.be.instanceOf(cls)
        expect(err.statusCode).to.equal(status)
        expect(err.code).to.equal(code)
      })
    }

    it('retries 409 idempotency_in_flight with the same key', async () => {
      const {transport, requests, delays} = await setup([
        {status: 409, body: errorBody('idempotency_error', 'idempotency_in_flight')},
        {status: 201, body: {id: 'ord_1'}},
      ])
      const res = await transport.request({method: 'POST', path: '/orders', body: {}})
      expect(res.data).to.deep.equal({id: 'ord_1'})
      expect(requests).to.have.length(2)
      expect(requests[1]!.headers['idempotency-key']).to.equal(requests[0]!.headers['idempotency-key'])
      expect(delays).to.deep.equal([1000])
    })

    it('respects maxRetries from the transport and per request', async () => {
      const {transport, requests, delays} = await setup([{status: 500}], {maxRetries: 2})
      await rejection(transport.request({method: 'GET', path: '/merchant'}))
      expect(requests).to.have.length(3)
      await rejection(transport.request({method: 'GET', path: '/merchant', maxRetries: 0}))
      expect(requests).to.have.length(4)
      expect(delays).to.deep.equal([1000, 2000])
    })

    it('uses custom retry delays, capped by maxMs', async () => {
      const {transport, delays} = await setup([{status: 500}], {retryDelays: {initialMs: 100, maxMs: 300}})
      await rejection(transport.request({method: 'GET', path: '/merchant'}))
      expect(delays).to.deep.equal([100, 200, 300, 300])
    })

    it('waits for real with the default delays when no sleep is injected', async () => {
      server = await scriptedServer([{status: 503}, {status: 200, body: {ok: true}}])
      const transport = new Transport({baseUrl: server.baseUrl, fetch: SENDER})
      const started = Date.now()
      const res = await transport.request({method: 'GET', path: '/merchant'})
      expect(res.data).to.deep.equal({ok: true})
      expect(server.requests).to.have.length(2)
      expect(Date.now() - started).to.be.at.least(900)
    })

    it('stops retrying when the caller aborts during the backoff', async () => {
      const controller = new AbortController()
      const {transport, requests} = await setup([{status: 503}], {
        sleep: async () => controller.abort(),
      })
      const err = await rejection(transport.request({method: 'GET', path: '/merchant', signal: controller.signal}))
      expect(requests).to.have.length(1)
      expect(err).to.be.instanceOf(PayappError)
      expect(err.code).to.equal('request_aborted')
    })
  })

  describe('connection failures', () => {
    it('retries a reset connection with the same key and then succeeds', async () => {
      const {transport, requests, delays} = await setup([{destroy: true}, {status: 200, body: {id: 'x'}}])
      const res = await transport.request({method: 'POST', path: '/products', body: {}})
      expect(res.data).to.deep.equal({id: 'x'})
      expect(requests).to.have.length(2)
      expect(requests[1]!.headers['idempotency-key']).to.equal(requests[0]!.headers['idempotency-key'])
      expect(delays).to.deep.equal([1000])
    })

    it('surfaces repeated resets as a ConnectionError that keeps the cause', async () => {
      const {transport, requests} = await setup([{destroy: true}], {maxRetries: 2})
      const err = await rejection(transport.request({method: 'GET', path: '/merchant'}))
      expect(requests).to.have.length(3)
      expect(err).to.be.instanceOf(ConnectionError)
      expect(err.code).to.equal('ECONNRESET')
      expect(err.message).to.include('GET http://127.0.0.1:').and.include('/v1/app/merchant').and.include('3 attempts')
      expect(err.cause).to.be.instanceOf(Error)
    })

    it('surfaces a timeout as a ConnectionError after retrying it', async () => {
      const {transport, requests, delays} = await setup([{hang: true}], {timeout: 150, maxRetries: 1})
      const err = await rejection(transport.request({method: 'GET', path: '/merchant'}))
      expect(requests).to.have.length(2)
      expect(delays).to.deep.equal([1000])
      expect(err).to.be.instanceOf(ConnectionError)
      expect(err.code).to.equal('ETIMEDOUT')
      expect(err.message).to.include('timed out after 150 ms')
    })

    it("loopbackRefused 'retry': retries a refused connection and reports it", async () => {
      const closed = await scriptedServer([{status: 200}])
      const baseUrl = closed.baseUrl
      await closed.close()
      const {delays, sleep} = recordSleeps()
      const transport = new Transport({baseUrl, authorization: TOKEN, sleep, maxRetries: 2, loopbackRefused: 'retry', fetch: SENDER})
      const err = await rejection(transport.request({method: 'GET', path: '/merchant'}))
      expect(err).to.be.instanceOf(ConnectionError)
      expect(err.code).to.equal('ECONNREFUSED')
      expect(delays).to.deep.equal([1000, 2000])
    })

    it('by default, a refused connection to this machine is final at once (nothing listens there)', async () => {
      const closed = await scriptedServer([{status: 200}])
      await closed.close()
      const {delays, sleep} = recordSleeps()
      const events: ResponseEvent[] = []
      const transport = new Transport({baseUrl: closed.baseUrl.replace('127.0.0.1', 'localhost'), authorization: TOKEN, sleep, onResponse: (e) => events.push(e), fetch: SENDER})
      const err = await rejection(transport.request({method: 'GET', path: '/merchant'}))
      expect(err).to.be.instanceOf(ConnectionError)
      expect(err.code).to.equal('ECONNREFUSED')
      expect(delays).to.deep.equal([])
      expect(events.map((e) => [e.attempt, e.maxAttempts, e.retry])).to.deep.equal([[1, 5, undefined]])
    })

    it('totalTimeout: a wait that would end past it is not made, and the failure is reported at once', async () => {
      const {transport, requests, delays} = await setup([{status: 429, headers: {'retry-after': '50'}, body: errorBody('rate_limit_error', 'rate_limited')}], {totalTimeout: 5000})
      const err = await rejection(transport.request({method: 'GET', path: '/products'}))
      expect(err).to.be.instanceOf(RateLimitError)
      expect(requests).to.have.length(1)
      expect(delays).to.deep.equal([])
    })

    it('totalTimeout: a wait that fits in it is made as usual', async () => {
      const {transport, delays} = await setup([{status: 503, headers: {'retry-after': '1'}}, {status: 200, body: {}}], {totalTimeout: 5000})
      await transport.request({method: 'GET', path: '/products'})
      expect(delays).to.deep.equal([1000])
    })

    it('onRequest shows the query string, with secret-looking parameters redacted', async () => {
      const seen: RequestEvent[] = []
      const {transport} = await setup([{status: 200, body: {}}], {onRequest: (e) => seen.push(e)})
      await transport.request({method: 'GET', path: '/checkout/sessions/cs_1', query: {cs: 'cs_secret_1', client_secret: 'cs_secret_2', limit: 5, status: 'open'}})
      expect(seen[0]!.url).not.to.include('?')
      expect(seen[0]!.query).to.equal('cs=%5BREDACTED%5D&client_secret=%5BREDACTED%5D&limit=5&status=open')
    })

    it('never exposes the token in the error, its message or its inspected form', async () => {
      const {transport} = await setup([{destroy: true}], {maxRetries: 0})
      const err = await rejection(transport.request({method: 'POST', path: '/products', body: {}}))
      const secret = TOKEN.slice('Bearer '.length)
      expect(err.message).not.to.include(secret)
      expect(inspect(err, {depth: 8})).not.to.include(secret)
      expect(JSON.stringify(err)).not.to.include(secret)
    })
  })

  describe('errors', () => {
    it('carries type, code, param, message, requestId, statusCode and headers', async () => {
      const {transport} = await setup([
        {status: 400, headers: {'x-request-id': 'req_hdr'}, body: {error: {type: 'invalid_request', code: 'too_many_features', param: 'features[12]', message: 'at most 12 features', request_id: 'req_abc'}}},
      ])
      const err = await rejection(transport.request({method: 'POST', path: '/products/prod_1/variants', body: {}}))
      expect(err).to.be.instanceOf(InvalidRequestError)
      expect(err).to.include({type: 'invalid_request', code: 'too_many_features', param: 'features[12]', requestId: 'req_abc', statusCode: 400})
      expect(err.message).to.equal('at most 12 features')
      expect(err.headers['x-request-id']).to.equal('req_hdr')
      expect(String(err)).to.equal('too_many_features: at most 12 features (req_abc)')
    })

    it('still yields a typed error for a non-JSON error body', async () => {
      const {transport} = await setup([{status: 502, raw: '<html>Bad gateway</html>'}], {maxRetries: 0})
      const err = await rejection(transport.request({method: 'GET', path: '/merchant'}))
      expect(err).to.be.instanceOf(APIError)
      expect(err.statusCode).to.equal(502)
      expect(err.requestId).to.equal('req_1')
      expect(err.message).to.equal('HTTP 502: Bad gateway')
    })

    it("builds the message of a body that is not the platform's envelope from the status and the body's start", async () => {
      const nginx = '<html>\r\n<head><title>502 Bad Gateway</title><style>body {color: red}</style></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>'
      const cases: [Step, string][] = [
        [{status: 502, raw: nginx}, 'HTTP 502: 502 Bad Gateway 502 Bad Gateway nginx'],
        [{status: 422, body: {detail: [{loc: ['body', 'name'], msg: 'field required'}]}}, 'HTTP 422: {"detail":[{"loc":["body","name"],"msg":"field required"}]}'],
        [{status: 400, raw: 'x'.repeat(500)}, `HTTP 400: ${'x'.repeat(200)}…`],
        [{status: 503}, 'HTTP 503 with an empty body'],
      ]
      for (const [step, message] of cases) {
        const {transport} = await setup([step], {maxRetries: 0})
        const err = await rejection(transport.request({method: 'GET', path: '/merchant'}))
        expect(err.message).to.equal(message)
        await server!.close()
        server = undefined
      }
    })

    it('rejects a successful response that is not JSON', async () => {
      const {transport} = await setup([{status: 200, raw: '<html>login</html>'}])
      const err = await rejection(transport.request({method: 'GET', path: '/merchant'}))
      expect(err).to.be.instanceOf(ResponseValidationError)
      expect(err.code).to.equal('response_not_json')
    })
  })

  describe('hooks', () => {
    it('reports each attempt, with the Authorization value redacted', async () => {
      const requestsSeen: RequestEvent[] = []
      const responsesSeen: ResponseEvent[] = []
      const {transport} = await setup([{status: 503}, {status: 200, body: {}}], {
        onRequest: (e) => requestsSeen.push(e),
        onResponse: (e) => responsesSeen.push(e),
      })
      await transport.request({method: 'POST', path: '/products', body: {}, query: {cs: 'cs_secret_1'}})

      expect(requestsSeen.map((e) => e.attempt)).to.deep.equal([1, 2])
      expect(requestsSeen[0]!.headers.authorization).to.equal('Bearer tok_test_…WXYZ')
      expect(requestsSeen[0]!.idempotencyKey).to.match(UUID)
      expect(JSON.stringify(requestsSeen)).not.to.include('0123456789abcdef').and.not.include('cs_secret_1')

      expect(responsesSeen).to.have.length(2)
      expect(responsesSeen[0]).to.include({attempt: 1, status: 503, requestId: 'req_1'})
      expect(responsesSeen[0]!.retry).to.deep.include({delayMs: 1000})
      expect(responsesSeen[1]).to.include({attempt: 2, status: 200, requestId: 'req_2'})
      expect(responsesSeen[1]!.retry).to.equal(undefined)
      expect(responsesSeen[1]!.elapsedMs).to.be.a('number').and.at.least(0)
    })

    it('a throwing hook does not fail the request', async () => {
      const {transport} = await setup([{status: 200, body: {ok: true}}], {
        onRequest: () => {
          throw new Error('logger broke')
        },
      })
      const warnings: string[] = []
      const original = process.emitWarning
      // Captured instead of printed, so the test output stays clean.
      process.emitWarning = ((w: string | Error) => void warnings.push(String(w))) as typeof process.emitWarning
      try {
        const res = await transport.request({method: 'GET', path: '/merchant'})
        expect(res.data).to.deep.equal({ok: true})
      } finally {
        process.emitWarning = original
      }
      expect(warnings.join()).to.include('logger broke')
    })
  })
})
