/**
 * What a domain rule reaches, and nothing else: the stored documents and tables of its unit of work
 * (typed by kind, every call asynchronous), the clock, events, due work and ids. A write handler gets
 * a `Tx` whose writes commit together; a read gets one whose write methods throw. The platform
 * (platform.ts) builds both; no domain module imports it (lint: domain-no-platform), so a second storage
 * engine or a shared process changes nothing here.
 */
import type {EventType} from '@payapp/sdk/events'
import type {Scope as ScopeName} from '@payapp/sdk/schemas/common'
import type {Env, EventDoc, Kind, Scope} from '../storage/documents.js'
import type {Job, Store} from '../storage/storage.js'
import type {WebhookEndpointDoc, Webhooks} from '../webhooks.js'

/** A value that is not a promise: an event's object must be awaited before it is logged. */
export type NotAPromise<T> = T extends PromiseLike<unknown> ? never : T

export interface Tx extends Store {
  /** True in a write unit; false in a read, whose write methods throw. */
  readonly writable: boolean
  /** Runs `fn` in a write unit: this one when it is one, else a unit of its own (a read that must expire sessions first). */
  writing<T>(fn: (tx: Tx) => Promise<T>): Promise<T>
  /** Unix seconds on the merchant's (test) clock: each merchant's time moves on its own. */
  now(scope: {merchant: string}): number
  /** Where the gateway is reachable (checkout URLs point there). */
  readonly baseUrl: string
  /** Appends an event to the merchant's log, with its webhook deliveries, in this unit. */
  emit<T>(scope: Scope, type: EventType, object: NotAPromise<T>): Promise<EventDoc>
  /** Makes `kind` due for `ref` at `due` (clock time), in this unit. */
  schedule(scope: Scope, kind: string, ref: string, due: number): Promise<void>
  /** Drops the pending jobs of `ref` (of one kind, or all). */
  cancelJobs(ref: string, kind?: string): Promise<void>
  /** The pending jobs of these objects, soonest first. */
  pendingJobs(refs: readonly string[]): Promise<Job[]>
  /** A read served from memory while no document of `kinds` was written since (reads of documents only, not of the clock). */
  cachedRead<T>(key: string, kinds: readonly Kind[], compute: () => Promise<T>): Promise<T>
  /** Whether `cachedRead` serves from memory between writes of its kinds (SQLite); else it computes every time (PostgreSQL). */
  readonly readsCached: boolean
  /** Issues a credential (shown in full once) and revokes one; a revoked token fails on its next request. */
  issueCredential(
    kind: 'installation' | 'secret_key' | 'publishable_key',
    merchant: string,
    env: Env,
    scopes: readonly ScopeName[],
    extra?: {appName?: string; origins?: readonly string[]},
  ): Promise<{id: string; token: string}>
  revokeCredential(id: string, kinds: readonly ('installation' | 'secret_key' | 'publishable_key')[]): Promise<boolean>
  /** Webhook endpoints and re-deliveries (webhooks.ts), in this unit. */
  readonly endpoints: EndpointOps
}

export interface EndpointOps {
  create(input: {merchant: string; env: Env; url: string; events: string[]; secret?: string; installation?: string}): Promise<WebhookEndpointDoc>
  get(id: string): Promise<WebhookEndpointDoc | undefined>
  list(merchant: string): Promise<WebhookEndpointDoc[]>
  remove(id: string): Promise<boolean>
  deliveries(id: string): ReturnType<Webhooks['deliveries']>
  resend(scope: Scope, event: EventDoc, endpoint?: string): Promise<number>
  /** A new signing secret; the replaced one keeps signing for `expirePreviousIn` seconds of clock time. */
  rotateSecret(id: string, expirePreviousIn: number, secret?: string): Promise<WebhookEndpointDoc | undefined>
}
