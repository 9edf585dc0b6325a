import {expect} from 'chai'
import fc from 'fast-check'

import {openapiDocument} from '@payapp/sdk/openapi'
import {optionedVariant, sale, sellable} from '../helpers/commerce.js'
import {TestGateway, type Account, type CallOptions, type HttpResult} from '../helpers/gateway.js'
import {documentValidator} from '../helpers/openapi-conformance.js'

/**
 * The OpenAPI document against the gateway, as an outside generator reads it (Schemathesis-like): for
 * every operation, fast-check builds requests from the document alone (path, query and body schemas,
 * `$ref`s, formats, patterns, bounds, one-ofs) and sends them to a seeded gateway over HTTP with the
 * operation's credential. A request the document allows must get a 2xx, or a 404 for an id the
 * generator could not know. Where an operation needs its object in a state (open, not canceled, without
 * variants yet) or ends that state (expire, cancel, delete, a status move), each request gets a fresh object
 * made as a user would (FRESH), so one run's cancel is not the next run's 409. The 409s left are the ones
 * the document cannot state, each listed with its reason (STATE_CONFLICTS). A 400 means the document is
 * looser than the gateway, a 5xx that the gateway failed on valid input.
 *
 * Runs per operation: CONTRACT_RUNS (default 12, so `npm test` stays well under a minute); a failure
 * prints fast-check's seed, which CONTRACT_SEED replays.
 */
type Json = Record<string, any>

const RUNS = Number(process.env.CONTRACT_RUNS ?? 12)
const doc = openapiDocument() as Json

/** Whether a value is one the document allows: the generator builds from the structure, ajv has the last word. */
const allows = (schema: Json, value: unknown): boolean => documentValidator(schema)(value)

/** Two schemas' constraints together (a oneOf branch into its object): properties and items merged deep, required joined. */
function merge(a: Json, b: Json): Json {
  const out: Json = {...a}
  for (const [key, value] of Object.entries(b)) {
    if (key === 'required') out.required = [...new Set([...(a.required ?? []), ...value])]
    else if (key === 'properties') out.properties = Object.fromEntries([...new Set([...Object.keys(a.properties ?? {}), ...Object.keys(value)])].map((k) => [k, merge(resolve(a.properties?.[k] ?? {}), value[k] ?? {})]))
    else if (key === 'items') out.items = merge(resolve(a.items ?? {}), value)
    else out[key] = value
  }
  return out
}

/**
 * Rules JSON Schema cannot state, by operation: what the gateway may still refuse a generated request
 * for, each with its reason. Every other refusal fails the test.
 */
const KNOWN_GAPS: Record<string, string[]> = {
  // Equality across array items (one currency for all lines and the session), a unique variant per
  // session, a total (amount × quantity summed) within the maximum, and a tracked variant alone:
  // relations between items, or the variant's stored state.
  // Whether a price_id is recurring is the price's, too.
  'POST /checkout/sessions': ['currency_mismatch', 'duplicate_variant', 'amount_too_large', 'variant_not_alone', 'price_not_recurring'],
  // The same relations for new line items; and a raw amount only on a session made with one (amount_derived):
  // how the session was made is its state.
  'PATCH /checkout/sessions/{id}': ['currency_mismatch', 'duplicate_variant', 'amount_too_large', 'variant_not_alone', 'amount_derived'],
  'POST /checkout/sessions/{id}/update': ['currency_mismatch', 'duplicate_variant', 'amount_too_large', 'variant_not_alone', 'amount_derived'],
  // One value of each of the product's option groups, and a price of the same product: stored state.
  'POST /products/{id}/variants': ['invalid_options', 'price_unavailable'],
  // Turning tracking on needs stock_qty unless the variant already has stock: the variant's state.
  'PATCH /variants/{id}': ['price_unavailable', 'stock_qty_required'],
  // A default price must be an active price of this product (any other id is 400 price_unavailable).
  'PATCH /products/{id}': ['price_unavailable'],
  // At most 10 option groups a product (a count of stored groups); values unique ignoring case and
  // surrounding spaces, where JSON Schema's uniqueItems compares exactly.
  'POST /products/{id}/options': ['too_many_option_groups', 'values_not_unique'],
  // Store checkouts sell one-time prices, and the total (the stored price × quantity) stays within the
  // maximum: the product's default price is stored state.
  'POST /checkouts': ['unsupported_price', 'amount_too_large'],
  // A refund is at most what is left of the payment: the payment's state.
  'POST /refunds': ['amount_too_large'],
  // The product's default price cannot be archived: which price is the default is stored state.
  'PATCH /products/{id}/prices/{price}': ['price_is_default'],
  'POST /products/{id}': ['price_unavailable'],
  'POST /products/{id}/default_price': ['price_unavailable'],
}

/**
 * Conflicts with stored state that no schema can rule out, by operation: the 409 codes a generated request may
 * still get, each with its reason. Any other 409, 410 or 422 fails the test.
 */
const STATE_CONFLICTS: Record<string, string[]> = {
  // An order is valued at the product's one-time price; a product_id from the lists may name one with recurring
  // prices only (the referenced product's state).
  'POST /orders': ['price_unavailable'],
  // A store checkout sells the variant at its active price; a product_id from the lists may name one whose
  // default variant has none left (archived prices). It reserves stock: a quantity the document allows may be
  // more than a tracked variant has left (the variant's state; seen with seed -502060920).
  'POST /checkouts': ['price_unavailable', 'out_of_stock'],
  // Values are unique in their group: whether a generated value is taken is the group's state.
  'POST /options/{id}/values': ['value_exists'],
  // Group names are unique in their product: whether a generated name is taken is the product's state.
  'PATCH /options/{id}': ['option_exists'],
  // A product without option groups has its default variant only; with groups, a variant per combination.
  'POST /products/{id}/variants': ['variant_exists', 'sku_exists'],
  // SKUs are unique in a catalogue: whether a generated SKU is taken is the catalogue's state.
  'PATCH /variants/{id}': ['sku_exists'],
  // One active price per lookup_key: whether a generated key is held is the merchant's state.
  'POST /products': ['lookup_key_exists'],
  'POST /products/{id}/prices': ['lookup_key_exists'],
  'PATCH /products/{id}/prices/{price}': ['lookup_key_exists'],
  // `revision` is a compare-and-set against the session's current revision, which only a read tells.
  'PATCH /checkout/sessions/{id}': ['revision_conflict'],
  'POST /checkout/sessions/{id}/update': ['revision_conflict'],
}

/** The seeded merchant as `Account` for the commerce helpers, in one environment. */
type Seeded = Pick<Account, 'app' | 'store' | 'api'>

/**
 * Operations whose path ids get a fresh object per request (a path id the generator knows becomes one), each
 * made through the API as a user would before the call: what the operation needs the object to be.
 */
const FRESH: Record<string, (gw: TestGateway, acct: Seeded) => Promise<Record<string, string>>> = (() => {
  const ok = (res: HttpResult) => {
    expect(res.status, res.text).to.be.within(200, 299)
    return res.body
  }
  const unique = () => Math.random().toString(36).slice(2, 10)
  /** An active product without variants or option groups, with a one-time default price. */
  const product = async (acct: Seeded) => ({id: (await sellable(acct as Account, {name: `Fresh ${unique()}`})).product.id as string})
  /** A product with one option group of two values and no variants. */
  const group = async (acct: Seeded) => {
    const {id} = await product(acct)
    return ok(await acct.store('POST', `/products/${id}/options`, {body: {name: `Group ${unique()}`, values: [`a-${unique()}`, `b-${unique()}`]}}))
  }
  /** An open checkout session of the merchant API. */
  const session = async (_gw: TestGateway, acct: Seeded) => ({id: ok(await acct.api('POST', '/v1/checkout/sessions', {body: {line_items: [{name: 'Tea', quantity: 1, amount: 500, currency: 'eur'}]}})).id})
  return {
    'POST /checkout/sessions/{id}/expire': session,
    'PATCH /checkout/sessions/{id}': session,
    'POST /checkout/sessions/{id}/update': session,
    // An active subscription: cancel ends it.
    'POST /subscriptions/{id}/cancel': async (gw, acct) => {
      const {price} = await sellable(acct as Account, {recurring: true, name: `Plan ${unique()}`})
      const sub = ok(await acct.api('POST', '/v1/subscriptions', {body: {price_id: price, customer_name: 'Ada', customer_email: 'ada@example.com'}}))
      return {id: sub.id}
    },
    // A paid order with delivery evidence: every status a PATCH may set is a move forward from paid.
    'PATCH /orders/{id}': async (gw, acct) => {
      const {order} = await sale(gw, acct as Account, await sellable(acct as Account, {name: `Sold ${unique()}`}))
      ok(await acct.app('POST', `/orders/${order.id}/evidence`, {body: {note: 'Handed over'}}))
      return {id: order.id}
    },
    'POST /products/{id}/options': (_gw, acct) => product(acct),
    'POST /products/{id}/prices': (_gw, acct) => product(acct),
    // A second price of an active product: not the default, so it may be archived.
    'PATCH /products/{id}/prices/{price}': async (_gw, acct) => {
      const {id} = await product(acct)
      return {id, price: ok(await acct.store('POST', `/products/${id}/prices`, {body: {currency: 'eur', unit_amount: 900}})).id}
    },
    'PATCH /options/{id}': async (_gw, acct) => ({id: (await group(acct)).id}),
    'DELETE /options/{id}': async (_gw, acct) => ({id: (await group(acct)).id}),
    'POST /options/{id}/values': async (_gw, acct) => ({id: (await group(acct)).id}),
    'DELETE /values/{id}': async (_gw, acct) => ({id: (await group(acct)).values[0].id}),
    // A variant that is not its product's default.
    'DELETE /variants/{id}': async (_gw, acct) => ({id: (await optionedVariant(acct as Account, {name: `Shirt ${unique()}`, sku: `SKU-${unique()}`})).variant.id}),
  }
})()

/** Stands in a generated path for "an id of this kind the generator knows", when the operation is in FRESH. */
const FRESH_ID = 'fresh_00000000'

/** `POST /products/{id}/variants` for `POST /v1/store/products/{id}/variants`: the route without its door. */
const routeOf = (method: string, path: string) => `${method} ${path.replace(/^\/v1(\/app|\/store)?/, '')}`

const resolve = (node: Json): Json => (typeof node?.$ref === 'string' ? resolve(node.$ref.slice(2).split('/').reduce((n: Json, k: string) => n[k], doc)) : node)

/** An arbitrary of the values a JSON Schema (draft 2020-12, as the document writes it) allows. */
function arbitraryOf(node: Json, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolve(node)
  if (schema.const !== undefined) return fc.constant(schema.const)
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]))
  const branches = (schema.anyOf ?? schema.oneOf) as Json[] | undefined
  if (branches) {
    // A oneOf beside an object's own keywords narrows that object: generate each branch merged into it.
    const {anyOf: _a, oneOf: _o, ...rest} = schema
    const base = Object.keys(rest).some((k) => k !== 'description') ? rest : undefined
    return fc.oneof(...branches.map((b) => arbitraryOf(base ? merge(base, resolve(b)) : b, depth))).filter((v) => !base || allows(schema, v))
  }
  if (schema.allOf) throw new Error(`allOf in a request schema is not generated: ${JSON.stringify(schema).slice(0, 200)}`)
  switch (schema.type) {
    case 'null':
      return fc.constant(null)
    case 'boolean':
      return fc.boolean()
    case 'integer': {
      const min = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : -1_000_000)
      const max = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : 1_000_000_000)
      return fc.integer({min, max})
    }
    case 'number':
      return fc.double({
        min: schema.minimum ?? schema.exclusiveMinimum ?? -1e9,
        max: schema.maximum ?? schema.exclusiveMaximum ?? 1e9,
        minExcluded: schema.exclusiveMinimum !== undefined,
        maxExcluded: schema.exclusiveMaximum !== undefined,
        noNaN: true,
        noDefaultInfinity: true,
      })
    case 'string':
      return stringOf(schema)
    case 'array': {
      const maxLength = Math.min(schema.maxItems ?? 3, 3)
      const items = arbitraryOf(schema.items ?? {}, depth + 1)
      return fc.array(items, {minLength: schema.minItems ?? 0, maxLength: Math.max(maxLength, schema.minItems ?? 0)})
    }
    case 'object':
      return objectOf(schema, depth)
  }
  // `{}`: any JSON value.
  return fc.jsonValue({maxDepth: 2})
}

function stringOf(schema: Json): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0
  const maxLength = schema.maxLength ?? 40
  const fits = (s: string) => [...s].length >= minLength && [...s].length <= maxLength
  const pattern = schema.pattern ? new RegExp(schema.pattern) : undefined
  let base: fc.Arbitrary<string>
  if (schema.format === 'uri') base = fc.webUrl({validSchemes: ['https', 'http']})
  else if (schema.format === 'email') base = fc.emailAddress()
  else if (schema.format === 'date-time') base = fc.date({min: new Date(0), max: new Date(4e12), noInvalidDate: true}).map((d) => d.toISOString())
  else if (pattern) {
    // An id field (`^prod_`): the seeded ids it allows too, as a generator that read the lists would send.
    const ids = [...seenIds].filter((id) => pattern.test(id))
    base = ids.length > 0 ? fc.oneof(fc.constantFrom(...ids), fc.stringMatching(pattern)) : fc.stringMatching(pattern)
  }
  else return fc.string({minLength, maxLength: Math.min(maxLength, Math.max(minLength, 40))})
  return base.filter((s) => fits(s) && (!pattern || pattern.test(s)))
}

function objectOf(schema: Json, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties = (schema.properties ?? {}) as Record<string, Json>
  const required = (schema.required ?? []) as string[]
  const model = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, arbitraryOf(v, depth + 1)]))
  const fixed = fc.record(model, {requiredKeys: required})
  const extra = schema.additionalProperties
  if (!extra || typeof extra !== 'object') return fixed
  // A map (metadata): keys as propertyNames says, a few of them.
  const keys = schema.propertyNames ? (arbitraryOf(schema.propertyNames) as fc.Arbitrary<string>) : fc.string({minLength: 1, maxLength: 20})
  return fc.tuple(fixed, fc.dictionary(keys.filter((k) => !(k in properties) && k !== '__proto__'), arbitraryOf(extra, depth + 1), {maxKeys: 3})).map(([a, b]) => ({...b, ...a}))
}

interface Operation {
  method: string
  path: string
  op: Json
}

function operations(): Operation[] {
  const out: Operation[] = []
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(ops)) out.push({method: method.toUpperCase(), path, op})
  }
  // Deletes last, so the objects they remove were there for every other operation.
  return [...out.filter((o) => o.method !== 'DELETE'), ...out.filter((o) => o.method === 'DELETE')]
}

interface GeneratedRequest {
  path: string
  query: URLSearchParams
  body?: unknown
  multipart?: boolean
}

/** Everything one request of an operation needs, as one arbitrary. */
/**
 * The ids a generator that has read the seeded gateway's lists may use, by the `object` they name. A
 * path parameter takes ids of the kind the document's `GET` of that path returns (its `object` const).
 */
/** Every id the seeded gateway showed (`KnownIds.all`), for id-shaped body fields. */
let seenIds: ReadonlySet<string> = new Set()

class KnownIds {
  readonly byKind = new Map<string, Set<string>>()
  readonly all = new Set<string>()

  /** Every object with an id and an object kind in a response, nested ones too (a group's values). */
  add(value: unknown): void {
    if (Array.isArray(value)) return value.forEach((v) => this.add(v))
    if (!value || typeof value !== 'object') return
    const {id, object} = value as Json
    if (typeof id === 'string' && typeof object === 'string') {
      if (!this.byKind.has(object)) this.byKind.set(object, new Set())
      this.byKind.get(object)!.add(id)
      this.all.add(id)
    }
    for (const v of Object.values(value)) if (v && typeof v === 'object') this.add(v)
  }

  /** Ids for the parameter that ends `prefix` (`/v1/app/products/{id}`): of the kind its GET returns, else any. */
  for(prefix: string): string[] {
    const ops = doc.paths[prefix] as Record<string, Json> | undefined
    const schema = ops && (ops.get ?? Object.values(ops)[0])?.responses?.['200']?.content?.['application/json']?.schema
    const kind = schema && resolve(schema).properties?.object?.const
    const ids = typeof kind === 'string' ? this.byKind.get(kind) : undefined
    return [...(ids && ids.size > 0 ? ids : this.all)]
  }
}

function requestOf({method, path, op}: Operation, known: KnownIds): fc.Arbitrary<GeneratedRequest> {
  const params = ((op.parameters ?? []) as Json[]).map(resolve)
  const pathParams = params.filter((p) => p.in === 'path')
  const queryParams = params.filter((p) => p.in === 'query')
  // An id: one the seed made, of the kind the path names, or one nobody could know.
  const unknown = fc.stringMatching(/^[a-z]{2,5}_[A-Za-z0-9]{6,16}$/)
  const fresh = FRESH[routeOf(method, path)] !== undefined
  const idFor = (name: string) => {
    const ids = fresh ? [FRESH_ID] : known.for(path.slice(0, path.indexOf(`{${name}}`) + name.length + 2))
    return ids.length > 0 ? fc.oneof({arbitrary: fc.constantFrom(...ids), weight: 3}, {arbitrary: unknown, weight: 1}) : unknown
  }
  const pathArb = fc.tuple(...pathParams.map((p) => idFor(p.name))).map((values) => pathParams.reduce((p, param, i) => p.replace(`{${param.name}}`, values[i] === FRESH_ID ? `{${param.name}}` : encodeURIComponent(values[i]!)), path))
  const queryArb = fc.tuple(
    ...queryParams.map((p) => {
      const value = arbitraryOf(p.schema)
      return p.required ? value.map((v) => [p, v] as const) : fc.option(value.map((v) => [p, v] as const), {nil: undefined, freq: 2})
    }),
  ).map((entries) => {
    const query = new URLSearchParams()
    for (const entry of entries) {
      if (!entry) continue
      const [param, value] = entry
      // form + explode (a query parameter's default): an array is the parameter repeated.
      if (Array.isArray(value)) for (const v of value) query.append(param.name, String(v))
      // form + explode: an object's properties are parameters of their own.
      else if (param.explode && value && typeof value === 'object') for (const [k, v] of Object.entries(value)) query.append(k, String(v))
      else query.append(param.name, String(value))
    }
    return query
  })
  const json = op.requestBody?.content?.['application/json']?.schema
  const multipart = op.requestBody?.content?.['multipart/form-data']
  // Built from the structure, kept only when the whole schema (if/then, not, dependentRequired…) allows it.
  const body = json && arbitraryOf(json).filter((v) => allows(json, v))
  const bodyArb: fc.Arbitrary<unknown> = body ? (op.requestBody.required ? body : fc.option(body, {nil: undefined})) : fc.constant(undefined)
  return fc.record({path: pathArb, query: queryArb, body: bodyArb}).map((r) => ({...r, multipart: multipart !== undefined}))
}

describe('gateway: the OpenAPI document as a contract (generated requests)', function () {
  this.timeout(120_000)
  let gw: TestGateway
  const known = new KnownIds()
  const tokens: Record<string, Record<'test' | 'live', string>> = {}
  const seeded = {} as Record<'test' | 'live', Seeded>

  before(async () => {
    gw = await TestGateway.start({seed: true})
    const seed = gw.gw.seed!
    const secret = {test: seed.secret_keys.test.secret_key, live: seed.secret_keys.live.secret_key}
    tokens.installationToken = {test: seed.installations.test.token, live: seed.installations.live.token}
    tokens.secretKey = secret
    for (const env of ['test', 'live'] as const) {
      const as = (token: string, prefix: string) => (method: string, path: string, opts: Omit<CallOptions, 'token'> = {}) => gw.request(method, `${prefix}${path}`, {token, ...opts})
      seeded[env] = {app: as(tokens.installationToken[env], '/v1/app'), store: as(secret[env], '/v1/store'), api: as(secret[env], '')}
    }
    // The ids a user of the seeded gateway can see: every list's first page, and the lists under each
    // object of those (a product's prices), as far as one parameter.
    const lists = operations().filter(({method, op}) => method === 'GET' && op.responses['200']?.content?.['application/json']?.schema?.$ref?.endsWith('List'))
    const envOf = (op: Json) => (op['x-payapp-environment'] === 'live' ? 'live' : 'test')
    for (const {path, op} of lists.filter((l) => !l.path.includes('{'))) known.add((await gw.request('GET', path, {token: tokenFor(op, envOf(op))})).body?.data)
    for (const {path, op} of lists.filter((l) => (l.path.match(/\{/g) ?? []).length === 1)) {
      const name = /\{(\w+)\}/.exec(path)![1]!
      for (const id of known.for(path.slice(0, path.indexOf(`{${name}}`) + name.length + 2)).slice(0, 8)) {
        known.add((await gw.request('GET', path.replace(`{${name}}`, id), {token: tokenFor(op, envOf(op))})).body?.data)
      }
    }
    expect(known.all.size, 'the seed makes objects to address').to.be.above(10)
    seenIds = known.all
  })
  after(() => gw?.close())

  // Operations that answered at least one generated request with a 2xx: a generator that only ever
  // met refusals (404s, states) would prove little, so most operations must succeed at least once.
  const succeeded = new Set<string>()
  after(function () {
    if (this.currentTest?.state === 'failed' || RUNS < 12) return
    expect(succeeded.size / operations().length, `operations with a 2xx: ${succeeded.size} of ${operations().length}`).to.be.at.least(0.7)
  })

  function tokenFor(op: Json, env: 'test' | 'live'): string {
    const scheme = Object.keys((op.security as Json[]).find((r) => Object.keys(r).length > 0 && tokens[Object.keys(r)[0]!]) ?? {})[0]
    return tokens[scheme!]![env]
  }

  for (const operation of operations()) {
    const {method, path, op} = operation
    it(`${method} ${path}`, async () => {
      const env = op['x-payapp-environment'] === 'live' ? 'live' : 'test'
      const token = tokenFor(op, env)
      const documented = new Set(Object.keys(op.responses).map(Number))
      const route = routeOf(method, path)
      await fc.assert(
        fc.asyncProperty(requestOf(operation, known), async (req) => {
          let target = req.path
          if (target.includes('{')) {
            const made = await FRESH[route]!(gw, seeded[env])
            target = target.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(made[name]!))
          }
          const url = `${target}${req.query.size > 0 ? `?${req.query}` : ''}`
          let res
          if (req.multipart) {
            const form = new FormData()
            form.append('file', new Blob([new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3])], {type: 'application/octet-stream'}), 'contract.bin')
            res = await gw.request(method, url, {token, rawBody: form})
          } else {
            res = await gw.request(method, url, {token, body: req.body})
          }
          const code = String(res.body?.error?.code ?? '')
          if (res.status < 300) succeeded.add(`${method} ${path}`)
          const ok =
            (res.status >= 200 && res.status < 300) ||
            res.status === 404 ||
            // An id in the body or query that names nothing (a price_id, a file path, a cursor).
            (res.status === 400 && (code === 'resource_missing' || code.endsWith('_not_found'))) ||
            (res.status === 409 && documented.has(409) && (STATE_CONFLICTS[route]?.includes(code) ?? false)) ||
            (res.status === 400 && (KNOWN_GAPS[route]?.includes(code) ?? false))
          if (!ok) throw new Error(`${method} ${url} ${JSON.stringify(req.body)} → ${res.status} ${res.text.slice(0, 300)}`)
        }),
        {numRuns: RUNS, endOnFailure: true, ...(process.env.CONTRACT_SEED ? {seed: Number(process.env.CONTRACT_SEED)} : {})},
      )
    })
  }
})
