/**
 * The types a namespace method is written in (resources/*.ts) and the clients are built from: per-call
 * options, the call's arguments and result derived from the endpoint table, and `define`.
 */
import type {z} from 'zod'

import type {BodyOf, Door, Endpoint, EndpointId, ResultOf} from './endpoints.js'
import type {PagePromise, PageParams} from './pagination.js'
import type {RequestOptions as TransportRequest} from './transport.js'

/** Per-call options; every namespace method takes them last. */
export interface RequestOptions extends Pick<TransportRequest, 'timeout' | 'maxRetries' | 'signal' | 'headers'> {
  /** Sent as `Idempotency-Key` on POST and PATCH; a repeat returns the original result. Default: a fresh UUID per call. */
  idempotencyKey?: string
}

// ---------------------------------------------------------------- types derived from the table

/** Endpoint ids served under a door. */
export type EndpointIdFor<D extends Door> = {[Id in EndpointId]: D extends Endpoint<Id>['doors'][number] ? Id : never}[EndpointId]

type QuerySchemaOf<Id extends EndpointId> = Endpoint<Id> extends {query?: infer Q} ? (NonNullable<Q> extends z.ZodType ? Partial<z.output<NonNullable<Q>>> : unknown) : unknown

/** `{limit, offset}` plus the endpoint's own filters (e.g. payments `status`). */
export type ListParams<Id extends EndpointId> = PageParams & QuerySchemaOf<Id>

export type QueryOf<Id extends EndpointId> = Endpoint<Id> extends {list: true}
  ? ListParams<Id>
  : NonNullable<Endpoint<Id> extends {query?: infer Q} ? Q : undefined> extends z.ZodType
    ? QuerySchemaOf<Id>
    : never

export interface CallArgs<Id extends EndpointId> extends RequestOptions {
  /** Values for the path's `{name}` parameters. */
  params?: Record<string, string | number>
  body?: BodyOf<Id>
  query?: QueryOf<Id>
  /** Multipart body, for uploads. */
  form?: FormData
}

/** A list endpoint answers with a PagePromise of its items; any other with a promise of its object. */
export type CallResult<Id extends EndpointId> = Endpoint<Id> extends {list: true} ? PagePromise<ResultOf<Id>> : Promise<ResultOf<Id>>

/** `call` with the endpoint already chosen: what a namespace method wraps. */
export type BoundCall<Id extends EndpointId> = (args?: CallArgs<Id>) => CallResult<Id>

/** A namespace method, tagged with the endpoint it calls so clients can keep only their door's. */
export type Method<Id extends EndpointId, F> = F & {readonly endpoint: Id}

export type DefineMethod = <Id extends EndpointId, F extends (...args: never[]) => unknown>(
  id: Id,
  make: (call: BoundCall<Id>) => F,
) => Method<Id, F>
