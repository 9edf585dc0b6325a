/**
 * The OpenAPI 3.1 document of the platform, generated from the endpoint table (endpoints.ts), the
 * event table (events.ts) and the zod model; nothing in it is written by hand. Schemas come from
 * zod's own JSON Schema output (draft 2020-12, the dialect of OpenAPI 3.1): request bodies as a caller
 * sends them (`io: 'input'`), responses as the platform returns them (`io: 'output'`).
 *
 * Generic over doors: every door in DOOR_PREFIX gets its paths, with the credentials DOOR_AUTH names.
 * Loaded lazily (by `payapp openapi` and the gateway's `GET /openapi.json`), never at CLI start-up.
 */
import * as z from 'zod'

import {DOOR_PREFIX, endpoints, pathParams, type Door, type EndpointDef} from './endpoints.js'
import {eventTypes, type EventDef} from './events.js'
import * as billing from './schemas/billing.js'
import * as catalog from './schemas/catalog.js'
import * as commerce from './schemas/commerce.js'
import * as common from './schemas/common.js'
import {SDK_VERSION} from './transport.js'
import {DEFAULT_TOLERANCE_SECONDS, SIGNATURE_HEADER} from './webhooks-web.js'

type Json = Record<string, unknown>

export interface OpenApiOptions {
  /** Doors to include (default: every door). */
  doors?: readonly Door[]
  /** The server URL the document names (default: the local gateway's default address). */
  serverUrl?: string
}

/** The platform's interface version (spec: Versioning). */
export const API_VERSION = '2026-01-01'

/** The credentials each kind of key is, as OpenAPI security schemes. */
const SECURITY_SCHEMES = {
  installationToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'app_live_… / app_test_…',
    description: 'A per-installation App API token, distinct for live and test. Scopes are those the merchant granted the app.',
  },
  secretKey: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'sk_live_… / sk_test_…',
    description: 'A merchant secret key: server-side only; a request carrying a browser Origin header is refused (403 origin_forbidden).',
  },
  publishableKey: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'pk_live_… / pk_test_…',
    description:
      'A merchant publishable key: only from a browser whose Origin is on the key\'s allow-list (else 403 origin_not_allowed), and only for creating checkout sessions with line_items.',
  },
} as const
type SchemeName = keyof typeof SECURITY_SCHEMES

interface DoorInfo {
  title: string
  description: string
  /** Security schemes that admit a request on this door (any one of them). */
  schemes: readonly SchemeName[]
}

/** What each door is; a door added to DOOR_PREFIX must be described here (TypeScript checks it). */
const DOOR_INFO: Record<Door, DoorInfo> & Partial<Record<string, DoorInfo>> = {
  app: {title: 'App API', description: 'For installed apps, with an installation token.', schemes: ['installationToken']},
  store: {title: 'Store API', description: "The merchant's store catalogue, with a secret key.", schemes: ['secretKey']},
  // Publishable keys are admitted only where the table says `publishable` (checkout session creation).
  merchant: {title: 'Merchant API', description: 'Checkout sessions, products and prices, refunds and payments, with a secret key.', schemes: ['secretKey']},
}

/** The error statuses and what they mean (spec: Errors). */
const ERROR_RESPONSES: Record<number, {name: string; description: string}> = {
  400: {name: 'BadRequest', description: 'Bad input: the envelope names the field in `param` and a stable `code`.'},
  401: {name: 'Unauthenticated', description: 'Missing, malformed, revoked or wrong-mode credential.'},
  402: {name: 'PaymentRequired', description: 'Payment declined, or a plan limit.'},
  403: {name: 'Forbidden', description: 'The credential lacks the scope, or a secret key came with a browser Origin.'},
  404: {name: 'NotFound', description: 'No such object under this merchant.'},
  409: {name: 'Conflict', description: 'A conflict: `idempotency_key_reused`, `idempotency_in_flight`, or the route’s own codes.'},
  410: {name: 'Gone', description: 'The object expired.'},
  413: {name: 'PayloadTooLarge', description: 'The upload is larger than the limit.'},
  422: {name: 'InvalidState', description: 'Semantically invalid in the object’s current state.'},
  429: {name: 'RateLimited', description: 'The rate-limit bucket is spent: retry after `Retry-After` seconds with the same Idempotency-Key.'},
}

const isWrite = (def: EndpointDef) => def.method === 'POST' || def.method === 'PATCH'

/** The error statuses a route can answer with: what every route can give, plus what its shape and table entry add. */
export function errorStatuses(def: EndpointDef): number[] {
  const statuses = new Set([400, 401, 403, 429])
  if (pathParams(def.path).length > 0) statuses.add(404)
  if (isWrite(def)) statuses.add(409)
  if (def.multipart) statuses.add(413)
  for (const status of def.errors ?? []) statuses.add(status)
  return [...statuses].sort((a, b) => a - b)
}

/** `products.variants` → `ProductsVariants`. */
const pascal = (s: string) => s.replace(/(^|[._\-\s])(\w)/g, (_m, _sep, c: string) => c.toUpperCase())

/** Exported model schemas by identity, so a schema the table uses becomes a named component. */
function modelNames(): Map<z.ZodType, string> {
  const names = new Map<z.ZodType, string>()
  for (const mod of [common, catalog, commerce, billing]) {
    for (const [key, value] of Object.entries(mod)) {
      if (value instanceof z.ZodType && !names.has(value)) names.set(value, pascal(key))
    }
  }
  return names
}

/** JSON Schema formats every validator knows; zod's own (`starts_with`, …) travel as `pattern` already. */
const STANDARD_FORMATS = new Set(['date-time', 'date', 'time', 'duration', 'email', 'uri', 'uri-reference', 'uuid', 'ipv4', 'ipv6', 'hostname', 'regex'])

const toJsonOptions = (io: 'input' | 'output') =>
  ({
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    uri: (id: string) => `#/components/schemas/${id}`,
    override: (ctx: {zodSchema: z.core.$ZodType; jsonSchema: Json}) => {
      const format = ctx.jsonSchema.format
      if (typeof format === 'string' && !STANDARD_FORMATS.has(format)) delete ctx.jsonSchema.format
      // z.int()'s safe-integer bounds say nothing a reader needs (and make mocks print -9007199254740991).
      if (ctx.jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete ctx.jsonSchema.minimum
      if (ctx.jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete ctx.jsonSchema.maximum
      if (io === 'input') asRequest(ctx.zodSchema, ctx.jsonSchema)
    },
  }) as const

/** Whether a string schema trims its input (`.trim()`): one of its overwrite checks turns ' a ' into 'a'. */
function trims(schema: z.core.$ZodType): boolean {
  if (!(schema instanceof z.ZodString)) return false
  return (schema._zod.def.checks ?? []).some((check) => {
    const def = check._zod.def as {check: string; tx?: (s: string) => unknown}
    return def.check === 'overwrite' && def.tx?.(' a ') === 'a'
  })
}

/**
 * A request schema as generators read it. A field the gateway fills in when absent keeps its default in
 * words only: openapi-typescript (default settings) makes every field with a `default` required, so valid
 * calls would not type-check. A field a request may never send (an immutable field of an update) is left
 * out, so a strict body refuses it as the gateway does, and named in the object's description. A trimmed
 * string's minimum length gets a pattern, since '  ' is too short once trimmed.
 */
function asRequest(schema: z.core.$ZodType, json: Json): void {
  // A trimmed string's minimum counts what is left after trimming: say it with a pattern too.
  const min = json.minLength
  if (typeof min === 'number' && min > 0 && json.pattern === undefined && trims(schema)) {
    json.pattern = min === 1 ? '\\S' : `^\\s*\\S[\\s\\S]{${min - 2},}\\S\\s*$`
  }
  if ('default' in json) {
    const text = typeof json.description === 'string' ? json.description : ''
    if (!/default/i.test(text)) json.description = `${text ? `${text}. ` : ''}Default: ${JSON.stringify(json.default)}`
    delete json.default
  }
  if (!(schema instanceof z.ZodObject) || typeof json.properties !== 'object' || json.properties === null) return
  const immutable = Object.entries(schema.shape as Record<string, z.ZodType>)
    .filter(([, field]) => catalog.isImmutable(field))
    .map(([name]) => name)
  if (immutable.length === 0) return
  const properties = json.properties as Json
  for (const name of immutable) delete properties[name]
  if (Array.isArray(json.required)) json.required = json.required.filter((name: string) => !immutable.includes(name))
  const text = typeof json.description === 'string' ? `${json.description}. ` : ''
  json.description = `${text}Immutable, refused with a 400: ${immutable.join(', ')}`
}

/** Collects the named components of one direction (input or output) and renders schemas against them. */
class Components {
  private readonly registry = z.registry<{id: string}>()
  private readonly inline = new Map<z.ZodType, Json>()

  constructor(
    private readonly io: 'input' | 'output',
    private readonly names: Map<z.ZodType, string>,
    private readonly taken: Set<string>,
    private readonly suffix: string,
  ) {}

  /** A `$ref` to the schema's component (named after its model export), or the schema inline. */
  ref(schema: z.ZodType, fallbackName?: string): Json {
    const existing = this.registry.get(schema)
    if (existing) return {$ref: `#/components/schemas/${existing.id}`}
    let name = this.names.get(schema) ?? fallbackName
    if (!name) return this.inlined(schema)
    if (this.taken.has(name)) name += this.suffix
    this.taken.add(name)
    this.registry.add(schema, {id: name})
    return {$ref: `#/components/schemas/${name}`}
  }

  inlined(schema: z.ZodType): Json {
    if (!this.inline.has(schema)) {
      const json = z.toJSONSchema(schema, toJsonOptions(this.io)) as Json
      delete json.$schema
      this.inline.set(schema, json)
    }
    return this.inline.get(schema)!
  }

  render(): Record<string, Json> {
    const out = z.toJSONSchema(this.registry, toJsonOptions(this.io)) as {schemas: Record<string, Json>}
    for (const schema of Object.values(out.schemas)) {
      delete schema.$schema
      delete schema.$id
    }
    return out.schemas
  }
}

/** The `oneOfQueryFields` of a query as one `form`-exploded parameter: each field alone, exactly one of them. */
function oneOfParameter(group: {name: string; fields: readonly string[]}, shape: Record<string, z.ZodType>, inputs: Components): Json {
  const description = `One of: ${group.fields.join(', ')}`
  const oneOf = group.fields.map((name) => ({
    type: 'object',
    properties: {[name]: inputs.inlined(shape[name]!)},
    required: [name],
    additionalProperties: false,
  }))
  return {name: group.name, in: 'query', required: true, style: 'form', explode: true, description, schema: {oneOf}}
}

const errorResponseRef = (status: number) => ({$ref: `#/components/responses/${ERROR_RESPONSES[status].name}`})

const operationId = (door: Door, id: string) => door + pascal(id)

/** The OpenAPI 3.1 document for the given doors. */
export function openapiDocument(opts: OpenApiOptions = {}): Json {
  const doors = opts.doors ?? (Object.keys(DOOR_PREFIX) as Door[])
  const names = modelNames()
  const taken = new Set<string>(['ErrorEnvelope', 'Event'])
  const outputs = new Components('output', names, taken, '')
  const inputs = new Components('input', names, taken, 'Input')
  // One component for the supported currencies, referenced by every request field that takes one.
  inputs.ref(common.currency)
  const listEnvelopes: Record<string, Json> = {}

  const listOf = (item: z.ZodType, fallback: string): Json => {
    const itemRef = outputs.ref(item, fallback)
    const itemName = typeof itemRef.$ref === 'string' ? itemRef.$ref.split('/').pop()! : fallback
    const name = `${itemName}List`
    listEnvelopes[name] ??= {
      type: 'object',
      description: `A page of ${itemName} objects, newest first`,
      properties: {object: {const: 'list'}, has_more: {type: 'boolean', description: 'Whether a further page exists'}, data: {type: 'array', items: itemRef}},
      required: ['object', 'has_more', 'data'],
    }
    return {$ref: `#/components/schemas/${name}`}
  }

  const paths: Record<string, Record<string, Json>> = {}
  const usedStatuses = new Set<number>()
  for (const door of doors) {
    const info = DOOR_INFO[door]
    for (const [id, def] of Object.entries(endpoints) as [string, EndpointDef][]) {
      if (!def.doors.includes(door)) continue
      const url = DOOR_PREFIX[door] + def.path

      const parameters: Json[] = pathParams(def.path).map((name) => ({name, in: 'path', required: true, schema: {type: 'string'}}))
      const query = def.list ? (def.query ? common.listQuery.extend(def.query.shape) : common.listQuery) : def.query
      const oneOf = def.query && common.oneOfQueryFields.get(def.query)
      for (const [name, field] of Object.entries(query?.shape ?? {}) as [string, z.ZodType][]) {
        if (oneOf?.fields.includes(name)) continue
        const schema = inputs.inlined(field)
        parameters.push({name, in: 'query', required: !field.safeParse(undefined).success, schema, ...(field.description ? {description: field.description} : {})})
      }
      // Fields of which a request sends one: one exploded object parameter (`?charge=…`) whose schema is a oneOf.
      if (oneOf && query) parameters.push(oneOfParameter(oneOf, query.shape as Record<string, z.ZodType>, inputs))
      if (isWrite(def)) parameters.push({$ref: '#/components/parameters/IdempotencyKey'})

      const success = def.created ? '201' : '200'
      const responseSchema = def.list ? listOf(def.response, pascal(id)) : outputs.ref(def.response, `${pascal(id)}Result`)
      const responses: Json = {
        [success]: {
          description: def.created ? 'Created' : 'OK',
          headers: {'X-Request-Id': {$ref: '#/components/headers/RequestId'}},
          content: {'application/json': {schema: responseSchema}},
        },
      }
      for (const status of errorStatuses(def)) {
        responses[status] = errorResponseRef(status)
        usedStatuses.add(status)
      }

      const notes = [`Scope: \`${def.scope}\`.`, `Rate-limit bucket: \`${def.bucket}\`.`]
      if (def.env) notes.push(def.env === 'live' ? 'Live credentials only.' : 'Sandbox (test) credentials only.')
      const operation: Json = {
        operationId: operationId(door, id),
        summary: def.summary,
        description: notes.join(' '),
        tags: [info.title],
        // A route that a client secret may authorise instead also admits a request with no credential.
        security: [
          ...info.schemes.map((scheme) => ({[scheme]: [def.scope]})),
          ...(def.publishable ? [{publishableKey: [def.scope]}] : []),
          ...(def.clientSecret ? [{}] : []),
        ],
        'x-payapp-scope': def.scope,
        'x-payapp-rate-limit-bucket': def.bucket,
        ...(def.env ? {'x-payapp-environment': def.env} : {}),
        ...(parameters.length > 0 ? {parameters} : {}),
        responses,
      }
      if (def.multipart) {
        operation.requestBody = {
          required: true,
          content: {
            'multipart/form-data': {
              schema: {
                type: 'object',
                // `format: binary` is what generators read as a file (a Blob); contentMediaType is 3.1's own word for it.
                properties: {file: {type: 'string', format: 'binary', contentMediaType: 'application/octet-stream', description: 'The file, at most 5 MB'}},
                required: ['file'],
              },
            },
          },
        }
      } else if (def.body) {
        // Required when the model refuses {}, or its JSON Schema names the shapes a body must take.
        const shapes = def.body.meta() as {oneOf?: unknown; anyOf?: unknown} | undefined
        operation.requestBody = {
          required: !def.body.safeParse({}).success || shapes?.oneOf !== undefined || shapes?.anyOf !== undefined,
          content: {'application/json': {schema: inputs.ref(def.body, `${pascal(id)}Body`)}},
        }
      }
      paths[url] ??= {}
      paths[url][def.method.toLowerCase()] = operation
    }
  }

  const webhooks: Record<string, Json> = {}
  for (const [type, def] of Object.entries(eventTypes) as [string, EventDef][]) {
    const object = outputs.ref(def.object, `${pascal(type)}Object`)
    webhooks[type] = {
      post: {
        operationId: `event${pascal(type)}`,
        summary: def.summary,
        description: `Sent to webhook endpoints that select \`${type}\`, \`${type.split('.')[0]}.*\` or \`*\`. Verify \`${SIGNATURE_HEADER}\` over the raw body before trusting it.`,
        tags: ['Events'],
        // The platform calls the app: the signature, not a credential, proves the sender.
        security: [],
        parameters: [{$ref: '#/components/parameters/ServiceSignature'}],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                allOf: [{$ref: '#/components/schemas/Event'}],
                properties: {type: {const: type}, data: {type: 'object', properties: {object}, required: ['object']}},
                required: ['type', 'data'],
              },
            },
          },
        },
        responses: {'2XX': {description: 'Acknowledged: answer promptly (within 15 s) or the delivery is retried, up to 7 attempts'}},
      },
    }
  }

  const envelope = outputs.inlined(common.errorEnvelope)
  const responsesComponents: Record<string, Json> = {}
  for (const [status, {name, description}] of Object.entries(ERROR_RESPONSES)) {
    if (!usedStatuses.has(Number(status))) continue
    responsesComponents[name] = {
      description,
      headers: {
        'X-Request-Id': {$ref: '#/components/headers/RequestId'},
        ...(status === '429' ? {'Retry-After': {description: 'Seconds until the bucket refills', schema: {type: 'integer', minimum: 0}}} : {}),
      },
      content: {'application/json': {schema: {$ref: '#/components/schemas/ErrorEnvelope'}}},
    }
  }
  const eventEnvelope = outputs.inlined(commerce.event)

  return {
    openapi: '3.1.0',
    info: {
      title: 'Payments and Billing Service',
      version: API_VERSION,
      description:
        `The platform's App, store and merchant APIs as payapp models them (payapp ${SDK_VERSION}). ` +
        'Generated from the SDK\'s endpoint table and zod model by `payapp openapi`; never edited by hand.',
      license: {name: 'MIT', identifier: 'MIT'},
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    servers: [{url: opts.serverUrl ?? 'http://127.0.0.1:4242', description: 'The local gateway (payapp gateway start)'}],
    tags: [
      ...doors.map((door) => ({name: DOOR_INFO[door].title, description: `${DOOR_INFO[door].description} Paths under \`${DOOR_PREFIX[door]}\`.`})),
      {name: 'Events', description: `Webhook deliveries, signed with \`${SIGNATURE_HEADER}: t=<unix>,v1=<hex HMAC-SHA256>\` (tolerance ${DEFAULT_TOLERANCE_SECONDS} s).`},
    ],
    paths,
    webhooks,
    components: {
      schemas: {
        ...outputs.render(),
        ...inputs.render(),
        ...listEnvelopes,
        ErrorEnvelope: envelope,
        Event: eventEnvelope,
      },
      responses: responsesComponents,
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description: 'Makes a retry safe: a repeat with the same key and body replays the first answer (24 h); a different body is 409 idempotency_key_reused.',
          schema: {type: 'string', minLength: 1, maxLength: 255},
        },
        ServiceSignature: {
          name: SIGNATURE_HEADER,
          in: 'header',
          required: true,
          description: '`t=<unix seconds>,v1=<hex>`: HMAC-SHA256 of `<t>.<raw body>` keyed with the endpoint\'s signing secret; several v1 values during rotation.',
          schema: {type: 'string'},
        },
      },
      headers: {RequestId: {description: 'The id of this request, also in an error envelope\'s `request_id`', schema: {type: 'string'}}},
      securitySchemes: SECURITY_SCHEMES,
    },
  }
}
