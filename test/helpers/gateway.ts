/**
 * Test harness: a real gateway over HTTP on 127.0.0.1 (port 0), with helpers to set up merchants and
 * credentials through the admin API exactly as a user's test suite would.
 */
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {SCOPES, type Scope} from '@payapp/sdk/schemas/common'
import {conformanceHook} from './openapi-conformance.js'
import {freshPostgresUrl, onPostgres, prepareDatabase} from './test-db.js'
import {startGateway, type GatewayOptions, type RunningGateway} from '../../src/gateway/server.js'

export const ALL_SCOPES: Scope[] = [...SCOPES]

export interface HttpResult<T = any> {
  status: number
  headers: Headers
  body: T
  text: string
}

export interface CallOptions {
  token?: string
  body?: unknown
  rawBody?: string | Buffer | FormData
  headers?: Record<string, string>
  idempotencyKey?: string
}

/**
 * A gateway reached over HTTP at `url` with its admin key: the in-process one a test starts
 * (`TestGateway`) or a process, or a load balancer in front of several (test/helpers/cluster.ts).
 */
export class HttpGateway {
  constructor(
    readonly url: string,
    readonly adminKey: string,
  ) {}

  async request<T = any>(method: string, path: string, opts: CallOptions = {}): Promise<HttpResult<T>> {
    const headers: Record<string, string> = {...opts.headers}
    if (opts.token) headers.authorization = `Bearer ${opts.token}`
    if (opts.idempotencyKey) headers['idempotency-key'] = opts.idempotencyKey
    let body: string | Buffer | FormData | undefined
    if (opts.rawBody !== undefined) body = opts.rawBody
    else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body)
      headers['content-type'] ??= 'application/json'
    }
    const res = await fetch(this.url + path, {method, headers, body})
    const text = await res.text()
    let parsed: unknown
    try {
      parsed = text ? JSON.parse(text) : undefined
    } catch {
      parsed = text
    }
    return {status: res.status, headers: res.headers, body: parsed as T, text}
  }

  admin<T = any>(method: string, path: string, body?: unknown, idempotencyKey?: string) {
    return this.request<T>(method, `/_admin${path}`, {token: this.adminKey, body, idempotencyKey})
  }

  async merchant(body: Record<string, unknown> = {}): Promise<{id: string; store: {id: string}}> {
    const res = await this.admin('POST', '/merchants', body)
    if (res.status !== 201) throw new Error(`merchant: ${res.status} ${res.text}`)
    return res.body
  }

  async installation(merchant: string, env: 'live' | 'test' = 'test', scopes: Scope[] = ALL_SCOPES): Promise<{id: string; token: string}> {
    const res = await this.admin('POST', '/installations', {merchant, env, scopes})
    if (res.status !== 201) throw new Error(`installation: ${res.status} ${res.text}`)
    return res.body
  }

  async secretKey(merchant: string, mode: 'live' | 'test' = 'test', scopes: Scope[] = ALL_SCOPES): Promise<{id: string; secret_key: string}> {
    const res = await this.admin('POST', '/keys', {merchant, mode, scopes})
    if (res.status !== 201) throw new Error(`key: ${res.status} ${res.text}`)
    return res.body
  }

  /** A merchant (`merchantBody`: its create's body, e.g. a plan) with an all-scope test installation and test secret key: the common starting point. */
  async account(env: 'live' | 'test' = 'test', merchantBody: Record<string, unknown> = {}) {
    const merchant = await this.merchant(merchantBody)
    const inst = await this.installation(merchant.id, env)
    const key = await this.secretKey(merchant.id, env)
    const app = (method: string, path: string, opts: Omit<CallOptions, 'token'> = {}) => this.request(method, `/v1/app${path}`, {token: inst.token, ...opts})
    const store = (method: string, path: string, opts: Omit<CallOptions, 'token'> = {}) => this.request(method, `/v1/store${path}`, {token: key.secret_key, ...opts})
    /** The merchant API (`/v1/...`, full path) with the secret key. */
    const api = (method: string, path: string, opts: Omit<CallOptions, 'token'> = {}) => this.request(method, path, {token: key.secret_key, ...opts})
    /** The merchant API with the secret key, paths relative to `/v1`. */
    const v1 = (method: string, path: string, opts: Omit<CallOptions, 'token'> = {}) => this.request(method, `/v1${path}`, {token: key.secret_key, ...opts})
    return {merchant, token: inst.token, secretKey: key.secret_key, secretKeyId: key.id, installation: inst, app, store, api, v1}
  }
}

export class TestGateway extends HttpGateway {
  private constructor(readonly gw: RunningGateway) {
    super(gw.url, gw.adminKey)
  }

  /** A gateway on a database of its own: in memory, or a fresh PostgreSQL schema with `PAYAPP_TEST_DB` (test-db.ts). */
  static async start(opts: GatewayOptions = {}): Promise<TestGateway> {
    const db = opts.db ?? (onPostgres ? freshPostgresUrl() : ':memory:')
    await prepareDatabase(db)
    // Every response is checked against the OpenAPI document (test/helpers/root-hooks.ts reports misfits).
    return new TestGateway(await startGateway({port: 0, rateLimit: false, configure: conformanceHook, ...opts, db}))
  }

  /** A client of a gateway running elsewhere (another process), by its URL and admin key. */
  static attach(url: string, adminKey: string): TestGateway {
    return new TestGateway({url, adminKey, close: async () => {}} as unknown as RunningGateway)
  }

  /** A fresh database that outlives a gateway, for tests of persistence: an SQLite file in a temp directory, or a PostgreSQL schema. */
  static tempDbFile(): string {
    return onPostgres ? freshPostgresUrl() : join(mkdtempSync(join(tmpdir(), 'payapp-gw-')), 'gateway.sqlite')
  }

  async close() {
    await this.gw.close()
  }

  /** Every request the gateway receives from now on, as `METHOD /path?query`: to prove a command sent none. */
  recordRequests(): string[] {
    const seen: string[] = []
    this.gw.app.server.on('request', (req: {method?: string; url?: string}) => seen.push(`${req.method} ${req.url}`))
    return seen
  }
}

/** A merchant with an all-scope installation and secret key, as `TestGateway.account()` makes it. */
export type Account = Awaited<ReturnType<HttpGateway['account']>>

/** Asserts the spec's error envelope and returns it. */
export function expectError(res: HttpResult, status: number, code?: string) {
  const detail = `${res.status} ${res.text}`
  if (res.status !== status) throw new Error(`expected ${status}${code ? ` ${code}` : ''}, got ${detail}`)
  const err = res.body?.error
  if (!err || typeof err.type !== 'string' || typeof err.message !== 'string' || typeof err.request_id !== 'string') {
    throw new Error(`not the error envelope: ${detail}`)
  }
  if (res.headers.get('x-request-id') !== err.request_id) throw new Error(`X-Request-Id ${res.headers.get('x-request-id')} != ${err.request_id}`)
  if (code !== undefined && err.code !== code) throw new Error(`expected code ${code}, got ${detail}`)
  return err as {type: string; code?: string; param?: string; message: string; request_id: string}
}

/**
 * Mocha hooks for a suite against one gateway and one test account: `requests` lists what the gateway
 * received ("POST /v1/app/products"), emptied before each test, so a test can assert nothing was sent.
 */
export function gatewayForSuite(): {gw: TestGateway; acct: Account; requests: string[]} {
  const suite = {requests: [] as string[]} as {gw: TestGateway; acct: Account; requests: string[]}
  before(async () => {
    suite.gw = await TestGateway.start()
    suite.acct = await suite.gw.account('test')
    suite.requests = suite.gw.recordRequests()
  })
  beforeEach(() => {
    suite.requests.length = 0
  })
  after(() => suite.gw?.close())
  return suite
}

/**
 * Holds the next call of `table[method]`, a read of an in-process gateway's storage: it reads at once
 * (`read` settles then) and answers only on `release()`. So a test can have a request or re-read that
 * began before a change answer after it, as a busy process would, and check what the gateway keeps of it.
 */
export function holdNextRead(table: object, method: string): {read: Promise<void>; release: () => void} {
  const calls = table as Record<string, (...args: unknown[]) => Promise<unknown>>
  const original = calls[method]!
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  let readDone!: () => void
  const read = new Promise<void>((resolve) => (readDone = resolve))
  calls[method] = async (...args: unknown[]) => {
    calls[method] = original
    const result = await original(...args)
    readDone()
    await released
    return result
  }
  return {read, release}
}
