/**
 * `GET /health`: whether this process can serve, for a load balancer's check (docs/shared-gateway.md). No
 * credential, no rate limit, no fault rule, and no database work while the database answers: 200
 * `{"object": "health", "database": "available"}` (or `"read_only"`: a database that takes no writes takes
 * none from any process, so another process would not do better). While this process finds its database
 * unreachable (a statement of its own could not reach it: a partition between it and the database, say), 503
 * `database_unavailable` in the envelope, so the balancer sends requests to processes that can reach it. Each
 * such check starts one read in the background (one at a time), and its answer ends the outage: the next
 * check is 200, and the balancer sends requests to the process again.
 */
import type {FastifyInstance} from 'fastify'

import {ApiError} from '../errors.js'
import type {Platform} from '../platform.js'

export const HEALTH_PATH = '/health'

export function registerHealth(app: FastifyInstance, platform: Platform): void {
  let down: {readOnly: boolean} | undefined
  platform.storage.onAvailability?.((change) => (down = change.available ? undefined : {readOnly: change.readOnly}))
  let probing = false
  const probe = () => {
    probing = true
    platform.storage.reads
      .meta('admin_key')
      .catch(() => {}) // still unreachable: told by the storage, and the next check probes again
      .finally(() => (probing = false))
  }
  app.get(HEALTH_PATH, async () => {
    if (down && !down.readOnly) {
      if (!probing) probe()
      throw new ApiError(503, 'api_error', 'database_unavailable', 'This gateway process cannot reach its database right now; another process may', undefined, {'retry-after': '1'})
    }
    return {object: 'health', database: down ? 'read_only' : 'available'}
  })
}
