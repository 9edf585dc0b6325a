/**
 * The typed clients. One generic `call(endpointId, args)` turns a row of the endpoint table into an
 * HTTP request through the Transport and parses the answer with the row's response schema; every
 * namespace method (resources/*.ts) is a one-line wrapper around it. Which methods a client has is
 * derived from each endpoint's `doors`: AppClient gets the 'app' ones, StoreClient the 'store' ones.
 */

import {DOOR_PREFIX, endpoints, type Door, type Endpoint, type EndpointDef, type EndpointId, type ResultOf} from './endpoints.js'
import {InvalidRequestError} from './errors.js'
import {PagePromise, type PageParams} from './pagination.js'
import {parsePage, parseResponse} from './parse.js'
import {fillPath} from './path.js'
import {catalogResources} from './resources/catalog.js'
import {commerceResources} from './resources/commerce.js'
import {merchantResources} from './resources/merchant.js'
import {Transport, transportOptions, type QueryValue, type RequestOptions as TransportRequest, type TransportOption, type TransportOptions} from './transport.js'
import type {CallArgs, CallResult, DefineMethod, EndpointIdFor} from './types.js'

export type {BoundCall, CallArgs, CallResult, DefineMethod, EndpointIdFor, ListParams, Method, QueryOf, RequestOptions} from './types.js'

// ---------------------------------------------------------------- options

export interface ClientOptions extends Pick<TransportOptions, TransportOption> {
  /** The platform's `{base_url}`, e.g. `http://127.0.0.1:4242`; the client appends `/v1/app` or `/v1/store`. */
  baseUrl: string
}

export interface AppClientOptions extends ClientOptions {
  /** The installation's access token (live or test). */
  token: string
}

export interface StoreClientOptions extends ClientOptions {
  /** A secret key (`sk_live_…` / `sk_test_…`); server-side only. */
  secretKey: string
}

/** The merchant API takes either key: a secret key server-side, or a publishable key in a browser. */
export type MerchantClientOptions = ClientOptions &
  (
    | {/** A secret key (`sk_live_…` / `sk_test_…`); server-side only. */ secretKey: string; publishableKey?: undefined}
    | {/** A publishable key (`pk_…`): only from an allow-listed origin, only `checkout.sessions.create` with line items. */ publishableKey: string; secretKey?: undefined}
  )

/** The namespace tree with only the methods of door D, and no namespace left empty. */
export type NamespacesFor<T, D extends Door> = {
  [K in keyof T as Serves<T[K], D> extends true ? K : never]: T[K] extends {endpoint: EndpointId} ? T[K] : NamespacesFor<T[K], D>
}
type Serves<V, D extends Door> = V extends {endpoint: infer Id extends EndpointId}
  ? D extends Endpoint<Id>['doors'][number]
    ? true
    : false
  : keyof NamespacesFor<V, D> extends never
    ? false
    : true

/** Every namespace of both APIs; each client keeps the part its door serves. */
function allNamespaces(define: DefineMethod) {
  return {...catalogResources(define), ...commerceResources(define)}
}
export type AllNamespaces = ReturnType<typeof allNamespaces>
export type MerchantNamespaces = ReturnType<typeof merchantResources>

// ---------------------------------------------------------------- the call core

function toQuery(query: object | undefined): Record<string, QueryValue> | undefined {
  if (!query) return undefined
  const out: Record<string, QueryValue> = {}
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue
    // Objects would serialise as "[object Object]"; nothing in the table takes one. An array repeats the parameter.
    const scalars = Array.isArray(value) ? value : [value]
    if (scalars.some((v) => v === null || typeof v === 'object')) {
      throw new InvalidRequestError({message: `query parameter ${name} must be a string, number or boolean, or an array of them`, code: 'invalid_query', param: name})
    }
    out[name] = value as QueryValue
  }
  return out
}

const API_NAME: Record<Door, string> = {app: 'App API', store: 'store API', merchant: 'merchant API'}

/** The one function every namespace method runs through. */
export class ApiCore<D extends Door> {
  constructor(
    readonly door: D,
    readonly transport: Transport,
  ) {}

  call<Id extends EndpointIdFor<D>>(id: Id, args: CallArgs<Id> = {}): CallResult<Id> {
    const def = endpoints[id] as EndpointDef | undefined
    let request: TransportRequest
    try {
      request = this.#request(id, def, args)
    } catch (err) {
      // A bad argument fails the returned promise, as an API error would, rather than throwing at the call site.
      return (def?.list ? new PagePromise(() => Promise.reject(err)) : Promise.reject(err)) as CallResult<Id>
    }
    if (def!.list) {
      const fetchPage = async (page: PageParams) => {
        const res = await this.transport.request({...request, query: toQuery(page)})
        return parsePage<ResultOf<Id>>(def!.response, res.data, id)
      }
      return new PagePromise(fetchPage, {...(args.query as object)}, this.door === 'merchant') as CallResult<Id>
    }
    return this.transport.request(request).then((res) => parseResponse(def!.response, res.data, id) as ResultOf<Id>) as CallResult<Id>
  }

  #request(id: string, def: EndpointDef | undefined, args: CallArgs<EndpointId>): TransportRequest {
    // Plain-JS callers and casts can get here with another door's id; the server would only 404.
    if (!def || !def.doors.includes(this.door)) {
      throw new InvalidRequestError({
        message: `${id} is not an endpoint of the ${API_NAME[this.door]}`,
        code: 'unknown_endpoint',
        param: 'endpoint',
      })
    }
    const {params, body, query, form, idempotencyKey, timeout, maxRetries, signal, headers} = args
    return {
      method: def.method,
      path: fillPath(def.path, params),
      // Lists get their query per page from the PagePromise.
      query: def.list ? undefined : toQuery(query as object | undefined),
      body,
      form,
      idempotencyKey,
      timeout,
      maxRetries,
      signal,
      headers,
    }
  }
}

/** Keeps the methods whose endpoint the door serves, dropping namespaces left empty. */
function keepDoor(tree: Record<string, unknown>, door: Door): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(tree)) {
    if (typeof value === 'function') {
      const id = (value as {endpoint?: EndpointId}).endpoint
      if (id && (endpoints[id].doors as readonly Door[]).includes(door)) out[name] = value
    } else if (value && typeof value === 'object') {
      const inner = keepDoor(value as Record<string, unknown>, door)
      if (Object.keys(inner).length > 0) out[name] = inner
    }
  }
  return out
}

function requireCredential(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new InvalidRequestError({message: `${name} is required`, code: 'invalid_option', param: name})
  }
  return value.trim()
}

function requireBaseUrl(baseUrl: unknown, door: Door): string {
  if (typeof baseUrl !== 'string' || baseUrl.trim() === '') {
    throw new InvalidRequestError({message: 'baseUrl is required, e.g. http://127.0.0.1:4242', code: 'invalid_option', param: 'baseUrl'})
  }
  const trimmed = baseUrl.trim().replace(/\/+$/, '')
  // A base that already ends in the door's prefix is accepted as is rather than doubled.
  return trimmed.endsWith(DOOR_PREFIX[door]) ? trimmed : trimmed + DOOR_PREFIX[door]
}

abstract class ApiClient<D extends Door> {
  readonly #core: ApiCore<D>

  protected constructor(door: D, credential: string, opts: ClientOptions, namespaces: (define: DefineMethod) => object) {
    const transport = new Transport({...transportOptions(opts), baseUrl: requireBaseUrl(opts.baseUrl, door), authorization: `Bearer ${credential}`})
    const core = new ApiCore(door, transport)
    this.#core = core
    const define: DefineMethod = (id, make) => {
      const call = (args?: CallArgs<EndpointIdFor<D>>) => core.call(id as never, args)
      return Object.assign(make(call as never), {endpoint: id})
    }
    Object.assign(this, keepDoor(namespaces(define) as Record<string, unknown>, door))
  }

  /** Calls any endpoint of this client's API by its id in the endpoint table; the namespaces are built on it. */
  call<Id extends EndpointIdFor<D>>(id: Id, args?: CallArgs<Id>): CallResult<Id> {
    return this.#core.call(id, args)
  }
}

// Declaration merging gives each class the namespaces derived from the table, without restating them.
/* eslint-disable @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type */

/** The App API (`/v1/app`) with an installation token. */
export interface AppClient extends NamespacesFor<AllNamespaces, 'app'> {}
export class AppClient extends ApiClient<'app'> {
  constructor(opts: AppClientOptions) {
    super('app', requireCredential(opts?.token, 'token'), opts, allNamespaces)
  }
}

/** The store catalogue API (`/v1/store`) with a secret key; server-side only. */
export interface StoreClient extends NamespacesFor<AllNamespaces, 'store'> {}
export class StoreClient extends ApiClient<'store'> {
  constructor(opts: StoreClientOptions) {
    super('store', requireCredential(opts?.secretKey, 'secretKey'), opts, allNamespaces)
  }
}
/**
 * The merchant API (`/v1`): checkout sessions, products and prices, refunds, payments. With a secret key
 * server-side; with a publishable key in a browser of an allow-listed origin (sessions with line items only).
 */
export interface MerchantClient extends NamespacesFor<MerchantNamespaces, 'merchant'> {}
export class MerchantClient extends ApiClient<'merchant'> {
  constructor(opts: MerchantClientOptions) {
    if (opts?.secretKey !== undefined && opts.publishableKey !== undefined) {
      throw new InvalidRequestError({message: 'Pass secretKey or publishableKey, not both', code: 'invalid_option', param: 'publishableKey'})
    }
    const key = opts?.publishableKey !== undefined ? requireCredential(opts.publishableKey, 'publishableKey') : requireCredential(opts?.secretKey, 'secretKey')
    super('merchant', key, opts, merchantResources)
  }
}
/* eslint-enable @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type */
