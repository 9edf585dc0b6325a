/**
 * `GET /openapi.json`: the platform's OpenAPI document, without authentication, naming this gateway
 * as its server. Generated on the first request (the generator is loaded lazily) and kept.
 */
import type {FastifyInstance} from 'fastify'

import type {Platform} from '../platform.js'

export function registerOpenApi(app: FastifyInstance, platform: Platform): void {
  let document: Promise<string> | undefined
  app.get('/openapi.json', async (_request, reply) => {
    document ??= import('@payapp/sdk/openapi').then(({openapiDocument}) => JSON.stringify(openapiDocument({serverUrl: platform.baseUrl})))
    return reply.type('application/json').send(await document)
  })
}
