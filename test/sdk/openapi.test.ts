import {execFile} from 'node:child_process'
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {promisify} from 'node:util'

import {expect} from 'chai'
import type {z} from 'zod'

import {DOOR_PREFIX, endpoints, type Door, type EndpointDef} from '@payapp/sdk/endpoints'
import {eventTypes} from '@payapp/sdk/events'
import {errorStatuses, openapiDocument} from '@payapp/sdk/openapi'
import {ROOT, runCli, tempHome} from '../helpers/cli.js'
import {TestGateway} from '../helpers/gateway.js'
import {checkResponse, takeViolations} from '../helpers/openapi-conformance.js'

const run = promisify(execFile)
const COMMITTED = join(ROOT, 'docs', 'openapi.json')
const bin = (name: string) => join(ROOT, 'node_modules', '.bin', name)

type Json = Record<string, any>
const doc = openapiDocument() as Json
const entries = Object.entries(endpoints) as [string, EndpointDef][]

/**
 * For every JSON request body, a type assertion that the keys openapi-typescript makes required are exactly
 * the keys the zod model requires (a field with a default is optional to a caller), at the top level and
 * in `line_items`.
 */
function requiredKeyChecks(): string {
  const lines = [
    'type RequiredKeys<T> = {[K in keyof T]-?: {} extends Pick<T, K> ? never : K}[keyof T]',
    'type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false',
    'const same = <A, B>(ok: Same<A, B>) => ok',
  ]
  const keysOf = (schema: z.ZodType) => {
    const shape = (schema as z.ZodObject).shape as Record<string, z.ZodType> | undefined
    if (!shape) return undefined
    const required = Object.entries(shape).filter(([, f]) => !f.safeParse(undefined).success).map(([k]) => JSON.stringify(k))
    return required.length > 0 ? required.join(' | ') : 'never'
  }
  const seen = new Set<string>()
  for (const [id, def] of entries) {
    const ref = doc.paths[DOOR_PREFIX[def.doors[0] as Door] + def.path]?.[def.method.toLowerCase()]?.requestBody?.content?.['application/json']?.schema?.$ref
    if (!def.body || typeof ref !== 'string' || seen.has(ref)) continue
    seen.add(ref)
    const keys = keysOf(def.body)
    const type = `components['schemas'][${JSON.stringify(ref.split('/').pop())}]`
    const shapes = def.body.meta() as {oneOf?: unknown; anyOf?: unknown} | undefined
    // A body of several shapes is a union; its members are checked by the values below.
    if (keys && !shapes?.oneOf && !shapes?.anyOf) lines.push(`same<RequiredKeys<${type}>, ${keys}>(true) // ${id}`)
  }
  // Each shape of the session create, without the fields the gateway defaults (mode, quantity).
  lines.push(`export const sessions: components['schemas']['CheckoutSessionCreate'][] = [
  {line_items: [{name: 'Tea', amount: 500, currency: 'eur'}]},
  {amount: 1999, currency: 'eur', customer_name: 'Ada', customer_email: 'ada@example.com'},
  {mode: 'subscription', line_items: [{price_id: 'price_1'}]},
]`)
  lines.push(`export const evidence: components['schemas']['OrderEvidenceCreate'] = {note: 'Left at the door'}`)
  return lines.join('\n')
}

describe('OpenAPI document', () => {
  it('is committed as docs/openapi.json exactly as generated (run `npm run openapi` after changing the model)', () => {
    expect(readFileSync(COMMITTED, 'utf8')).to.equal(JSON.stringify(doc, null, 2) + '\n')
  })

  it('has every endpoint of the table under each of its doors, with its scope, credentials, errors and Idempotency-Key', () => {
    let operations = 0
    for (const [id, def] of entries) {
      for (const door of def.doors as readonly Door[]) {
        const op = doc.paths[DOOR_PREFIX[door] + def.path]?.[def.method.toLowerCase()]
        expect(op, `${def.method} ${DOOR_PREFIX[door]}${def.path} (${id})`).to.be.an('object')
        operations++
        expect(op.summary).to.equal(def.summary)
        const credentials = op.security.filter((r: Json) => Object.keys(r).length > 0)
        expect(credentials).to.have.length.above(0)
        for (const requirement of credentials) expect(Object.values(requirement)).to.deep.equal([[def.scope]])
        // Only a route a client secret may authorise admits a request without a credential.
        expect(op.security.length - credentials.length, `${id} anonymous`).to.equal(def.clientSecret ? 1 : 0)
        const statuses = Object.keys(op.responses).map(Number)
        expect(statuses).to.include.members([def.created ? 201 : 200, ...errorStatuses(def)])
        expect(op.responses[429].$ref).to.equal('#/components/responses/RateLimited')
        const idem = (op.parameters ?? []).some((p: Json) => p.$ref === '#/components/parameters/IdempotencyKey')
        expect(idem, `${id} Idempotency-Key`).to.equal(def.method === 'POST' || def.method === 'PATCH')
      }
    }
    const documented = Object.values(doc.paths).reduce((n: number, ops: any) => n + Object.keys(ops).length, 0)
    expect(documented).to.equal(operations)
  })

  it('describes lists with the list envelope, errors with the error envelope, and the three kinds of credential', () => {
    const list = doc.paths['/v1/app/products'].get
    const ref = list.responses[200].content['application/json'].schema.$ref
    expect(ref).to.equal('#/components/schemas/ProductList')
    expect(doc.components.schemas.ProductList.properties.data.items.$ref).to.equal('#/components/schemas/Product')
    expect(list.parameters.map((p: Json) => p.name)).to.deep.equal(['limit', 'offset', 'starting_after', 'expand'])
    expect(list.parameters[3].schema).to.deep.include({type: 'array', items: {type: 'string', enum: ['data.prices', 'data.option_groups', 'data.variants']}})
    expect(doc.components.responses.NotFound.content['application/json'].schema.$ref).to.equal('#/components/schemas/ErrorEnvelope')
    expect(doc.components.schemas.ErrorEnvelope.properties.error.required).to.include.members(['type', 'message', 'request_id'])
    expect(Object.keys(doc.components.securitySchemes)).to.have.members(['installationToken', 'secretKey', 'publishableKey'])
    expect(doc.paths['/v1/store/products'].get.security).to.deep.equal([{secretKey: ['products:read']}])
    // A publishable key is admitted on checkout session creation only.
    expect(doc.paths['/v1/checkout/sessions'].post.security).to.deep.equal([{secretKey: ['checkout:write']}, {publishableKey: ['checkout:write']}])
    expect(doc.paths['/v1/checkout/sessions'].get.security).to.deep.equal([{secretKey: ['checkout:write']}])
    // Request bodies are what a caller sends: strict, with defaults optional.
    const body = doc.components.schemas.ProductCreate
    expect(body.additionalProperties).to.equal(false)
    expect(body.required).to.deep.equal(['name'])
  })

  it('has a webhooks entry per event type with its envelope and data.object schema', () => {
    expect(Object.keys(doc.webhooks)).to.have.members(Object.keys(eventTypes))
    const completed = doc.webhooks['checkout.session.completed'].post.requestBody.content['application/json'].schema
    expect(completed.allOf).to.deep.equal([{$ref: '#/components/schemas/Event'}])
    expect(completed.properties.type).to.deep.equal({const: 'checkout.session.completed'})
    expect(completed.properties.data.properties.object.$ref).to.equal('#/components/schemas/CheckoutSession')
    expect(doc.components.schemas.Event.required).to.include.members(['id', 'object', 'type', 'livemode', 'created', 'data'])
  })

  it('limits the document to one door on request', () => {
    const app = openapiDocument({doors: ['app']}) as Json
    expect(Object.keys(app.paths).every((p) => p.startsWith('/v1/app/'))).to.equal(true)
    expect(Object.keys(app.paths)).to.include('/v1/app/subscription_links')
    const merchant = openapiDocument({doors: ['merchant']}) as Json
    expect(Object.keys(merchant.paths).every((p) => p.startsWith('/v1/') && !p.startsWith('/v1/app/') && !p.startsWith('/v1/store/'))).to.equal(true)
    expect(Object.keys(merchant.paths)).to.include.members([
      '/v1/checkout/sessions',
      '/v1/checkout/sessions/{id}',
      '/v1/checkout/sessions/{id}/expire',
      '/v1/refunds',
      '/v1/payments',
      '/v1/products',
      '/v1/subscriptions',
      '/v1/fraud_warnings/{id}',
    ])
    expect(merchant.paths['/v1/checkout/sessions/{id}'].get.parameters.map((p: Json) => p.name)).to.deep.equal(['id', 'cs'])
  })

  it('passes `redocly lint` (recommended rules) with zero errors', async function () {
    this.timeout(60_000)
    const file = join(tempHome(), 'openapi.json')
    writeFileSync(file, JSON.stringify(doc))
    // redocly exits non-zero on any error; its JSON report counts them.
    const out = await run(bin('redocly'), ['lint', file, '--format=json'], {cwd: ROOT, maxBuffer: 32 * 1024 * 1024}).catch((e) => e)
    const report = JSON.parse(out.stdout)
    const errors = report.problems.filter((p: Json) => p.severity === 'error')
    expect(errors.map((p: Json) => `${p.ruleId}: ${p.message}`)).to.deep.equal([])
    expect(report.totals.errors).to.equal(0)
  })

  it('turns into TypeScript types with openapi-typescript, and those type-check', async function () {
    this.timeout(90_000)
    const dir = tempHome()
    const file = join(dir, 'openapi.json')
    writeFileSync(file, JSON.stringify(doc))
    await run(bin('openapi-typescript'), [file, '-o', join(dir, 'api.d.ts')], {cwd: ROOT})
    writeFileSync(
      join(dir, 'use.ts'),
      `import type {components, paths, webhooks} from './api.js'
type List = paths['/v1/app/products']['get']['responses'][200]['content']['application/json']
const list: List = {object: 'list', has_more: false, data: []}
type Completed = webhooks['checkout.session.completed']['post']['requestBody']['content']['application/json']
export const status = (e: Completed): string => e.data.object.status
export const error = (e: components['schemas']['ErrorEnvelope']): string => e.error.request_id
export {list}
${requiredKeyChecks()}
`,
    )
    await run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '--strict', '--module', 'nodenext', '--skipLibCheck', join(dir, 'use.ts')], {cwd: dir})
  })

  it('says what the gateway enforces: amount bounds, the currency enum, image and URL formats, the refunds filter, binary uploads', () => {
    const checkout = doc.components.schemas.CheckoutSessionCreate
    expect(checkout.properties.amount).to.include({minimum: 250, maximum: 99_999_999})
    expect(checkout.properties.currency).to.deep.equal({$ref: '#/components/schemas/Currency'})
    expect(doc.components.schemas.Currency.enum).to.include.members(['eur', 'usd', 'jpy']).and.not.include('xyz')
    expect(checkout.properties.success_url.format).to.equal('uri')
    expect(checkout.properties.line_items.items.properties.image_url.format).to.equal('uri')
    const image = new RegExp(doc.components.schemas.ProductCreate.properties.images.items.pattern)
    expect(['https://cdn.example/a.png', 'files/mer_1/a.png'].every((s) => image.test(s))).to.equal(true)
    expect(['a.png', 'ftp://x/a.png', 'https://'].some((s) => image.test(s))).to.equal(false)
    const filter = doc.paths['/v1/refunds'].get.parameters.find((p: Json) => p.name === 'filter')
    expect(filter).to.include({in: 'query', required: true, style: 'form', explode: true})
    expect(filter.schema.oneOf.map((s: Json) => s.required)).to.deep.equal([['charge'], ['payment_intent']])
    expect(doc.paths['/v1/app/files'].post.requestBody.content['multipart/form-data'].schema.properties.file.format).to.equal('binary')
  })

  it('leaves immutable fields out of update bodies (strict bodies then refuse them, as the gateway does)', () => {
    for (const [name, fields] of [
      ['PriceUpdate', ['currency', 'unit_amount', 'recurring', 'type', 'product']],
      ['VariantUpdate', ['options']],
      ['SubscriptionLinkUpdate', ['amount', 'currency', 'interval', 'interval_count']],
    ] as const) {
      const body = doc.components.schemas[name]
      expect(body.additionalProperties, name).to.equal(false)
      for (const field of fields) expect(body.properties, `${name}.${field}`).to.not.have.property(field)
    }
  })

  describe('response conformance hook', () => {
    it('finds a wrong body, an undocumented status and an error outside the envelope', () => {
      expect(checkResponse('GET', '/v1/app/products/:id', 200, 'application/json', '{"id":1}')).to.match(/does not match/)
      expect(checkResponse('GET', '/v1/app/products', 418, 'application/json', '{}')).to.match(/status 418 is not documented/)
      expect(checkResponse('GET', '/nowhere', 404, 'application/json', '{"message":"no"}')).to.match(/not the error envelope/)
      const envelope = JSON.stringify({error: {type: 'not_found', code: 'resource_missing', message: 'No such product', request_id: 'req_1'}})
      expect(checkResponse('GET', '/v1/app/products/:id', 404, 'application/json', envelope)).to.equal(undefined)
    })

    it("runs on every test gateway's responses", async () => {
      const gw = await TestGateway.start()
      try {
        const account = await gw.account()
        await account.app('GET', '/products')
        expect(takeViolations()).to.deep.equal([])
        // A documented route answering an undocumented status is caught without any assertion in the test.
        gw.gw.platform.rateLimiter.hit = () => {
          throw Object.assign(new Error('teapot'), {statusCode: 418})
        }
        await account.app('GET', '/products')
        const found = takeViolations()
        expect(found.map((v) => v.problem)).to.deep.equal(['status 418 is not documented (documented: 200, 400, 401, 403, 429)'])
      } finally {
        await gw.close()
      }
    })
  })
})

describe('payapp openapi and GET /openapi.json', () => {
  it('prints the document, writes it with -o, and limits it with --door', async function () {
    this.timeout(60_000)
    const printed = await runCli(['openapi'])
    expect(printed.code, printed.stderr).to.equal(0)
    expect(printed.json()).to.deep.equal(doc)

    const file = join(tempHome(), 'app.json')
    const written = await runCli(['openapi', '--door', 'app', '-o', file, '--json'])
    expect(written.code, written.stderr).to.equal(0)
    const app = JSON.parse(readFileSync(file, 'utf8'))
    expect(written.json()).to.deep.equal({file, paths: Object.keys(app.paths).length, webhooks: Object.keys(eventTypes).length})
    expect(Object.keys(app.paths).every((p) => p.startsWith('/v1/app/'))).to.equal(true)

    const bad = await runCli(['openapi', '--door', 'nope'])
    expect(bad.code).to.equal(2)
  })

  it('is served by the gateway without a credential, naming the gateway as its server', async () => {
    const gw = await TestGateway.start()
    try {
      const res = await gw.request('GET', '/openapi.json')
      expect(res.status).to.equal(200)
      expect(res.headers.get('content-type')).to.match(/^application\/json/)
      expect(res.body.servers).to.deep.equal([{url: gw.url, description: 'The local gateway (payapp gateway start)'}])
      expect(res.body.paths).to.deep.equal(doc.paths)
    } finally {
      await gw.close()
    }
  })
})
