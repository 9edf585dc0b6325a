/**
 * `payapp/testing`: the reference gateway inside a test suite. One call starts it in this process on a
 * free port with in-memory storage (no child process, no file), and hands back what a test needs:
 * typed admin access, merchants, credentials with their SDK clients, the test clock, and `close()`.
 *
 * ```ts
 * import {startGateway} from 'payapp/testing'
 * const gw = await startGateway()
 * const {client: store} = await gw.secretKey()
 * await store.products.create({name: 'Mug', price: {currency: 'eur', unit_amount: 1200}})
 * await gw.close()
 * ```
 */
import {GatewayAdmin, type AdminInstallation, type AdminMerchant, type AdminSecretKey} from '@payapp/sdk/admin'
import {AppClient, StoreClient} from '@payapp/sdk/client'
import type {AdminMerchantCreate} from '@payapp/sdk/schemas/admin'
import {SCOPES, type Environment, type Scope} from '@payapp/sdk/schemas/common'
import {loadGateway} from '../gateway/load.js'
import type {RunningGateway} from '../gateway/server.js'

export interface StartOptions {
  /** Seed the demo merchant, catalogue and history (as `payapp gateway start --seed`). Default false. */
  seed?: boolean
  /** Apply the platform's rate limits. Default false: a suite's setup writes faster than 60 a minute. */
  rateLimit?: boolean
  /** A fixed admin key; default a fresh random one. */
  adminKey?: string
  /** Retries of the SDK clients this gateway hands out. Default 0: a local failure is a test failure. */
  maxRetries?: number
  /**
   * Where the gateway keeps its data: `:memory:` (the default: nothing kept), an SQLite file, or a PostgreSQL
   * URL (`postgres://user:pass@host:port/db`) that gateways in several processes or test files may share.
   */
  db?: string
}

export interface CredentialOptions {
  /** Default: the gateway's default merchant, created on first use. */
  merchant?: string
  /** Default every scope. */
  scopes?: Scope[]
}

export interface TestInstallation extends AdminInstallation {
  /** An AppClient with this installation's token. */
  client: AppClient
}

export interface TestSecretKey extends AdminSecretKey {
  /** A StoreClient with this secret key. */
  client: StoreClient
}

export interface TestGateway {
  /** e.g. `http://127.0.0.1:39127`. */
  url: string
  adminKey: string
  /** The admin API: merchants, credentials, clock, the buyer (`checkouts.complete`), refunds, events, webhooks. */
  admin: GatewayAdmin
  /** A new merchant (live, approved store unless `store` says otherwise). */
  merchant(input?: AdminMerchantCreate): Promise<AdminMerchant>
  /** An app installation with its AppClient; default the default merchant, env `test`, every scope. */
  installation(opts?: CredentialOptions & {env?: Environment}): Promise<TestInstallation>
  /** A store secret key with its StoreClient; default the default merchant, mode `test`, every scope. */
  secretKey(opts?: CredentialOptions & {mode?: Environment}): Promise<TestSecretKey>
  /** The merchant `installation()` and `secretKey()` use when none is given. */
  defaultMerchant(): Promise<AdminMerchant>
  /**
   * The test clock. Each merchant has its own: `{merchant}` moves or reads that one (e.g. the merchant
   * of this test, so tests sharing a gateway never move each other's time); without it, every clock.
   */
  clock: {
    /** Moves time forward (and resolves when everything due happened): sessions expire, renewals and webhook retries fall due. */
    advance(seconds: number, opts?: {merchant?: string}): Promise<number>
    /** The clock's current time, Unix seconds. */
    now(opts?: {merchant?: string}): Promise<number>
  }
  /** What `--seed` created, when `seed: true`. */
  seed?: RunningGateway['seed']
  close(): Promise<void>
}

// The gateway's code loads with this module (bundled with V8's code cache when built, see gateway/load.ts), so
// the first startGateway() only starts one.
const gateway = loadGateway()
// A failure to load surfaces where it is awaited, in startGateway(), not as an unhandled rejection at import.
gateway.catch(() => undefined)

export async function startGateway(opts: StartOptions = {}): Promise<TestGateway> {
  const {startGateway: startServer} = await gateway
  const running = await startServer({
    port: 0,
    host: '127.0.0.1',
    db: opts.db ?? ':memory:',
    rateLimit: opts.rateLimit ?? false,
    seed: opts.seed ?? false,
    adminKey: opts.adminKey,
    logger: false,
  })
  const {url, adminKey} = running
  const maxRetries = opts.maxRetries ?? 0
  const admin = new GatewayAdmin({baseUrl: url, adminKey})
  let defaultMerchant: Promise<AdminMerchant> | undefined
  const merchantOf = async (given?: string) => given ?? (await gw.defaultMerchant()).id

  const gw: TestGateway = {
    url,
    adminKey,
    admin,
    seed: running.seed,
    merchant: (input = {}) => admin.merchants.create(input),
    defaultMerchant: () => (defaultMerchant ??= admin.merchants.create({company: 'Test Merchant', store: {display_name: 'Test Store'}})),
    async installation({merchant, env = 'test', scopes = [...SCOPES]} = {}) {
      const inst = await admin.installations.create({merchant: await merchantOf(merchant), env, scopes})
      return {...inst, client: new AppClient({baseUrl: url, token: inst.token, maxRetries})}
    },
    async secretKey({merchant, mode = 'test', scopes = [...SCOPES]} = {}) {
      const key = await admin.keys.create({merchant: await merchantOf(merchant), mode, scopes})
      return {...key, client: new StoreClient({baseUrl: url, secretKey: key.secret_key, maxRetries})}
    },
    clock: {
      advance: async (seconds, {merchant} = {}) => (await admin.clock.advance(seconds, {merchant})).now,
      now: async ({merchant} = {}) => (await admin.clock.retrieve({merchant})).now,
    },
    close: () => running.close(),
  }
  return gw
}

export {GatewayAdmin}
export type {AdminInstallation, AdminMerchant, AdminSecretKey}
