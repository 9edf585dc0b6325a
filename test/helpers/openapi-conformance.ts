/**
 * Every response a test gateway sends is checked against the generated OpenAPI document with ajv
 * (draft 2020-12, the dialect of OpenAPI 3.1): TestGateway.start installs `conformanceHook` on each
 * gateway, and the mocha root hook in test/helpers/root-hooks.ts fails the test that provoked a response
 * the document does not describe. A documented route must answer with a documented status and a body of
 * its schema; any other JSON answer (405, unknown route, admin API) must still be the error envelope or
 * a 2xx outside the document.
 */
import {Ajv2020, type ValidateFunction} from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type {FastifyInstance, FastifyReply, FastifyRequest} from 'fastify'

import {openapiDocument} from '@payapp/sdk/openapi'

type Json = Record<string, any>

export interface Violation {
  request: string
  status: number
  problem: string
}

const violations: Violation[] = []

/** Violations since the last call, emptied. */
export function takeViolations(): Violation[] {
  return violations.splice(0)
}

let compiled: {doc: Json; ajv: Ajv2020; byRoute: Map<string, Json>; envelope: ValidateFunction} | undefined
const validators = new Map<Json, ValidateFunction>()

function load() {
  if (compiled) return compiled
  const doc = openapiDocument()
  const ajv = new Ajv2020({strict: false, allErrors: false, validateFormats: true})
  addFormats.default(ajv)
  // The components as one schema document, so `#/components/schemas/X` refs resolve.
  ajv.addSchema({$id: 'openapi.json', components: doc.components}, 'openapi.json')
  const byRoute = new Map<string, Json>()
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(ops)) byRoute.set(`${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`, op)
  }
  const envelope = ajv.compile({$ref: 'openapi.json#/components/schemas/ErrorEnvelope'})
  compiled = {doc, ajv, byRoute, envelope}
  return compiled
}

function validatorFor(ajv: Ajv2020, schema: Json): ValidateFunction {
  let v = validators.get(schema)
  if (!v) {
    // Refs inside the operation point at the components document.
    const rewritten = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi.json#/components/'))
    v = ajv.compile(rewritten)
    validators.set(schema, v)
  }
  return v
}

/** A validator of any schema of the document (its `#/components/` refs resolved), compiled once per schema. */
export const documentValidator = (schema: Json): ValidateFunction => validatorFor(load().ajv, schema)

const resolve = (doc: Json, node: Json): Json => (typeof node.$ref === 'string' ? (node.$ref.slice(2).split('/').reduce((n: Json, k: string) => n[k], doc) as Json) : node)

export function checkResponse(method: string, route: string | undefined, status: number, contentType: string, body: string): string | undefined {
  const {doc, ajv, byRoute, envelope} = load()
  const isJson = contentType.startsWith('application/json')
  let parsed: unknown
  if (isJson) {
    try {
      parsed = body === '' ? undefined : JSON.parse(body)
    } catch {
      return 'the body is not JSON although labelled application/json'
    }
  }
  const op = route ? byRoute.get(`${method} ${route}`) : undefined
  if (!op) {
    // Outside the document: a JSON error is still the envelope (pages for a browser are HTML).
    if (status >= 400 && !contentType.startsWith('text/html') && (!isJson || !envelope(parsed))) return `an error outside the document that is not the error envelope: ${ajv.errorsText(envelope.errors)}`
    return undefined
  }
  const declared = op.responses[String(status)] ?? op.responses[`${String(status)[0]}XX`]
  // 5xx are the gateway failing, which other assertions catch; the document only promises their envelope.
  if (!declared) return status >= 500 ? undefined : `status ${status} is not documented (documented: ${Object.keys(op.responses).join(', ')})`
  const media = resolve(doc, declared).content?.['application/json']
  if (!media) return undefined
  if (!isJson) return `documented as application/json, sent ${contentType || 'no content type'}`
  const validate = validatorFor(ajv, media.schema)
  if (!validate(parsed)) return `body does not match the documented schema: ${ajv.errorsText(validate.errors, {dataVar: 'body'})}`
  return undefined
}

/** Installs the check on a gateway's fastify instance (before it listens). */
export function conformanceHook(app: FastifyInstance): void {
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (typeof payload === 'string' || Buffer.isBuffer(payload)) {
      const problem = checkResponse(request.method, request.routeOptions.url, reply.statusCode, String(reply.getHeader('content-type') ?? ''), payload.toString())
      if (problem) violations.push({request: `${request.method} ${request.url}`, status: reply.statusCode, problem})
    }
    return payload
  })
}
