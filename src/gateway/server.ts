/**
 * Starting and stopping the gateway: storage, platform rules, routes, admin API, optional seed.
 */
import {homedir} from 'node:os'
import {join} from 'node:path'

import type {FastifyInstance} from 'fastify'

import {buildApp, type Timeouts} from './app.js'
import type {FaultInput} from './domain/faults.js'
import {randomText} from './ids.js'
import {Platform, type RateLimitConfig} from './platform.js'
import {registerHostedCheckout} from './routes/hosted-checkout.js'
import {registerHostedSubscription} from './routes/hosted-subscription.js'
import {registerOpenApi} from './routes/openapi.js'
import {registerStorefront} from './routes/storefront.js'
import {adminHandlers, handlers, jobHandlers} from './routes/index.js'
import {seedDemo, type SeedResult} from './seeds/index.js'

/** The gateway's entry is all the CLI and payapp/testing may import of it (lint: cli-gateway-entry-only). */
export type {RateLimitConfig}

export interface GatewayOptions {
  host?: string
  /** 0 picks a free port. */
  port?: number
  /** SQLite file, ':memory:' to keep nothing, or a PostgreSQL URL (`postgres://user:pass@host:port/db`). Default: an SQLite file in the user's data directory. */
  db?: string
  adminKey?: string
  rateLimit?: boolean
  /** Limits and window other than the spec's (with rateLimit on). */
  rateLimits?: RateLimitConfig
  seed?: boolean
  logger?: boolean
  /** Request, header, idle and keep-alive deadlines against slow clients (see `Timeouts`). */
  timeouts?: Timeouts
  /** Fault-injection rules to start with (`gateway start --faults FILE`); more through `/_admin/faults`. */
  faults?: FaultInput[]
  /** Adds hooks or routes to the gateway's fastify instance before it listens (for suites that embed it). */
  configure?: (app: FastifyInstance) => void
  /** Lines for whoever runs the gateway: its database going away and coming back (`gateway start` writes them to stderr). */
  notice?: (line: string) => void
}

export interface RunningGateway {
  url: string
  adminKey: string
  db: string
  platform: Platform
  app: FastifyInstance
  seed?: SeedResult
  close(): Promise<void>
}

export function defaultDbFile(): string {
  const base = process.env.XDG_DATA_HOME || join(homedir(), '.local', 'share')
  return join(base, 'payapp', 'gateway.sqlite')
}

export async function startGateway(opts: GatewayOptions = {}): Promise<RunningGateway> {
  const db = opts.db ?? defaultDbFile()
  const platform = await Platform.open({db, rateLimit: opts.rateLimit ?? true, rateLimits: opts.rateLimits})
  for (const [kind, handler] of Object.entries(jobHandlers())) platform.scheduler.handle(kind, handler)
  // A file database keeps its generated admin key, so scripts keep working across restarts.
  const adminKey = opts.adminKey ?? (await platform.storage.reads.meta('admin_key')) ?? `adm_${randomText(32)}`
  if (!opts.adminKey) await platform.write((tx) => tx.setMeta('admin_key', adminKey))

  const {notice} = opts
  if (notice) {
    const where = platform.storage.location
    platform.storage.onAvailability?.((change) =>
      notice(
        change.available
          ? `${new Date().toISOString()} database ${where} ${change.readOnly ? 'takes writes' : 'reachable'} again, after ${(change.downMs / 1000).toFixed(1)} s`
          : change.readOnly
            ? `${new Date().toISOString()} database ${where} takes no writes (${change.reason}): writes answer 503 database_unavailable until it takes them again`
            : `${new Date().toISOString()} database ${where} unreachable (${change.reason}): requests answer 503 database_unavailable until it is back`,
      ),
    )
  }
  await platform.start(opts.faults)
  const app = await buildApp({
    platform,
    adminKey,
    handlers,
    adminHandlers,
    logger: opts.logger,
    timeouts: opts.timeouts,
    // The buyer's pages (hosted checkout, embed, storefront), the OpenAPI document, and the caller's own.
    extra: (fastify, p) => {
      registerHostedCheckout(fastify, p)
      registerHostedSubscription(fastify, p)
      registerOpenApi(fastify, p)
      registerStorefront(fastify, p)
      opts.configure?.(fastify)
    },
  })
  const address = await app.listen({host: opts.host ?? '127.0.0.1', port: opts.port ?? 4242})
  const url = address.replace('://[::1]', '://localhost')
  platform.baseUrl = url
  // Seeded only once the address is known: seeded checkout URLs point at this gateway.
  const seed = opts.seed ? await seedDemo(platform) : undefined
  platform.webhooks.start()
  platform.scheduler.start()
  let closing: Promise<void> | undefined
  return {
    url,
    adminKey,
    // A PostgreSQL URL without its password: callers print it.
    db: platform.storage.location,
    platform,
    app,
    seed,
    close() {
      // Fastify answers the requests in flight and the webhook worker stops before the database closes.
      closing ??= app
        .close()
        .then(() => platform.scheduler.stop())
        .then(() => platform.webhooks.stop())
        .then(() => platform.close())
      return closing
    },
  }
}
