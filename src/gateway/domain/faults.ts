/**
 * Fault injection, for apps that test their retry and error handling against the gateway: rules set
 * through the admin API (`/_admin/faults`) or `gateway start --faults FILE`.
 *
 * - `scope: "api"` (the default): matching API requests answer 429, 500 or 503 in the spec's envelope
 *   (with `Retry-After` on 429 and 503), or answer late. app.ts applies them in a hook before the route
 *   runs, so a faulted request writes nothing and never reaches its Idempotency-Key: a retry with the
 *   same key runs as if the fault had never happened.
 * - `scope: "webhooks"`: matching deliveries misbehave as the spec warns a receiver they may (not
 *   exactly-once, not in order, retried on failure): duplicated, held until the gateway clock has moved
 *   `delay_seconds`, reordered within their request or clock step, or failed for their first attempts.
 *   webhooks.ts asks `forDelivery` as it queues each delivery; the delivery log says what was injected.
 *
 * The rules are stored (process-state.ts `StoredFaults`), so every gateway process on a database strikes
 * with the same rules and counts. Each rule draws from its own seeded generator, so the same seed
 * strikes the same requests or deliveries every run.
 */
import type {z} from 'zod'

import {endpoints} from '@payapp/sdk/endpoints'
import {matchesEventType} from '@payapp/sdk/webhooks-node'
import {adminFaultCreate, type AdminFault} from '@payapp/sdk/schemas/admin'
import {ApiError, invalid, notFound} from '../errors.js'
import {newId} from '../ids.js'

export type FaultInput = z.input<typeof adminFaultCreate>

/** A rule as the admin API answers it: the SDK's type is the one definition. */
export type FaultRule = AdminFault

const DEFAULT_ERRORS: Record<number, {type: string; code: string; message: string}> = {
  429: {type: 'rate_limit_error', code: 'rate_limited', message: 'Too many requests'},
  500: {type: 'api_error', code: 'internal_error', message: 'The gateway failed to handle this request; retry with the same Idempotency-Key'},
  503: {type: 'api_error', code: 'service_unavailable', message: 'The service is temporarily unavailable; retry later'},
}

/**
 * A small seeded generator (mulberry32): the same seed gives the same sequence of draws. Its state is
 * stored with the rule, so every process sharing the rules continues one sequence.
 */
function random(state: {a: number}): () => number {
  return () => {
    state.a = (state.a + 0x6d2b79f5) >>> 0
    let t = state.a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

interface Matcher {
  endpoint?: string
  method?: string
  /** Fastify route patterns (`/v1/app/products/:id`) this rule matches, or a concrete path. */
  paths?: string[]
}

/** `products.create`, or `METHOD /path` with the path under one door, both doors, or the merchant API. */
function compileRoute(route: string | undefined): Matcher {
  if (route === undefined) return {}
  if (route in endpoints) return {endpoint: route}
  const match = /^(GET|POST|PATCH|DELETE|\*) (\/\S*)$/.exec(route.trim())
  if (!match) {
    throw invalid('parameter_invalid', `route: "${route}" is neither an endpoint id (e.g. products.create) nor "METHOD /path" (e.g. POST /v1/app/products)`, 'route')
  }
  const path = match[2].replace(/\{(\w+)\}/g, ':$1').replace(/(.)\/$/, '$1')
  const paths = path.startsWith('/v1/') ? [path] : [`/v1/app${path}`, `/v1/store${path}`]
  return {method: match[1] === '*' ? undefined : match[1], paths}
}

interface Compiled {
  rule: FaultRule
  matcher: Matcher
  state: {a: number}
  draw: () => number
}

/** A rule as storage keeps it (storage.ts `FaultRow`): its JSON and its generator's state. */
export interface StoredFault {
  id: string
  rule: string
  draws: number
}

/** One delivery about to be queued, as a webhook rule matches it. */
export interface DeliveryTarget {
  merchant: string
  endpoint: string
  type: string
}

export class Faults {
  private readonly rules = new Map<string, Compiled>()

  constructor(private readonly now: () => number = () => Math.floor(Date.now() / 1000)) {}

  get size(): number {
    return this.rules.size
  }

  /** Validates and adds a rule (the admin API has checked the body's shape). */
  add(input: FaultInput): FaultRule {
    const body = adminFaultCreate.parse(input)
    const webhooks = body.scope === 'webhooks'
    // An unknown route is a 400 before anything is stored.
    if (!webhooks) compileRoute(body.route)
    const status = webhooks ? null : (body.status ?? (body.latency_ms !== undefined && body.error === undefined ? null : 500))
    const rule: FaultRule = {
      id: newId('flt', 16),
      object: 'fault',
      scope: body.scope,
      merchant: body.merchant ?? null,
      route: body.route ?? null,
      status,
      error: body.error ?? null,
      latency_ms: body.latency_ms ?? 0,
      probability: body.probability,
      count: body.count ?? null,
      remaining: body.count ?? null,
      retry_after: status === 429 || status === 503 ? (body.retry_after ?? 1) : null,
      seed: body.seed ?? null,
      endpoint: body.endpoint ?? null,
      event_type: webhooks ? (body.event_type ?? '*') : null,
      duplicate: body.duplicate ?? false,
      delay_seconds: body.delay_seconds ?? null,
      reorder: body.reorder ?? false,
      fail_attempts: body.fail_attempts ?? null,
      hits: 0,
      created: this.now(),
    }
    this.put(rule, (body.seed ?? Math.floor(Math.random() * 2 ** 32)) >>> 0)
    return rule
  }

  private put(rule: FaultRule, draws: number): void {
    const state = {a: draws}
    this.rules.set(rule.id, {rule, matcher: rule.scope === 'webhooks' ? {} : compileRoute(rule.route ?? undefined), state, draw: random(state)})
  }

  /** The rules as stored, oldest first (a strike changes a rule's counts and its generator's state). */
  static from(rows: readonly StoredFault[], now?: () => number): Faults {
    const faults = new Faults(now)
    for (const row of rows) faults.put(JSON.parse(row.rule) as FaultRule, row.draws)
    return faults
  }

  /** One rule as storage keeps it. */
  stored(id: string): StoredFault {
    const {rule, state} = this.rules.get(id)!
    return {id, rule: JSON.stringify(rule), draws: state.a}
  }

  /** Whether some rule applies to webhook deliveries. */
  get forWebhooks(): boolean {
    for (const c of this.rules.values()) if (c.rule.scope === 'webhooks') return true
    return false
  }

  list(): FaultRule[] {
    return [...this.rules.values()].map((c) => c.rule)
  }

  get(id: string): FaultRule | undefined {
    return this.rules.get(id)?.rule
  }

  remove(id: string): boolean {
    return this.rules.delete(id)
  }

  clear(): number {
    const n = this.rules.size
    this.rules.clear()
    return n
  }

  /** Whether any API rule exists (requests are checked only then). */
  get forApi(): boolean {
    for (const c of this.rules.values()) if (c.rule.scope === 'api') return true
    return false
  }

  /** Whether any API rule could need the request's merchant (so the credential is worth reading). */
  get byMerchant(): boolean {
    for (const c of this.rules.values()) if (c.rule.scope === 'api' && c.rule.merchant) return true
    return false
  }

  /** The first API rule that strikes this request, if any; it consumes the rule's draw and count. */
  strike(req: {method: string; pattern: string; path: string; endpoint?: string; merchant?: string}): FaultRule | undefined {
    for (const {rule, matcher, draw} of this.rules.values()) {
      if (rule.scope !== 'api' || rule.remaining === 0) continue
      if (rule.merchant && rule.merchant !== req.merchant) continue
      if (matcher.endpoint && matcher.endpoint !== req.endpoint) continue
      if (matcher.method && matcher.method !== req.method) continue
      if (matcher.paths && !matcher.paths.includes(req.pattern) && !matcher.paths.includes(req.path)) continue
      if (rule.probability < 1 && draw() >= rule.probability) continue
      if (rule.remaining !== null) rule.remaining--
      rule.hits++
      return rule
    }
    return undefined
  }

  /**
   * The first webhook rule that strikes this delivery (oldest rule first), if any; like `strike`, it
   * consumes the rule's draw and count, so a seed picks the same deliveries every run.
   */
  forDelivery(target: DeliveryTarget): FaultRule | undefined {
    for (const {rule, draw} of this.rules.values()) {
      if (rule.scope !== 'webhooks' || rule.remaining === 0) continue
      if (rule.merchant && rule.merchant !== target.merchant) continue
      if (rule.endpoint && rule.endpoint !== target.endpoint) continue
      if (!matchesEventType(rule.event_type ?? '*', target.type)) continue
      if (rule.probability < 1 && draw() >= rule.probability) continue
      if (rule.remaining !== null) rule.remaining--
      rule.hits++
      return rule
    }
    return undefined
  }
}

/** The error a rule answers with, in the spec's envelope. */
export function faultError(rule: FaultRule): ApiError {
  const status = rule.status!
  const base = DEFAULT_ERRORS[status]
  const headers = rule.retry_after !== null ? {'retry-after': String(rule.retry_after)} : undefined
  return new ApiError(status, rule.error?.type ?? base.type, rule.error?.code ?? base.code, `${base.message} (injected fault ${rule.id})`, undefined, headers)
}

/** The rule found by id, or the spec's 404. */
export function requireFault(rule: FaultRule | undefined, id: string): FaultRule {
  if (!rule) throw notFound('fault', id)
  return rule
}
