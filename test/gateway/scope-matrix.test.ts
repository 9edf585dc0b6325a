import {expect} from 'chai'

import {DOOR_PREFIX, endpoints, type Door, type EndpointDef} from '@payapp/sdk/endpoints'
import {SCOPES, type Scope} from '@payapp/sdk/schemas/common'
import {expectError, TestGateway} from '../helpers/gateway.js'

/**
 * The Done-means: for every endpoint on every door it has, a credential lacking exactly its
 * scope gets 403 insufficient_scope, and a credential holding only that scope gets past the scope check.
 */
describe('gateway scope matrix', () => {
  let gw: TestGateway
  let merchant: string
  const tokens = new Map<string, string>()
  before(async () => {
    gw = await TestGateway.start()
    merchant = (await gw.merchant()).id
  })
  after(() => gw.close())

  async function credential(door: Door, env: 'live' | 'test', scopes: Scope[]): Promise<string> {
    const key = `${door}:${env}:${scopes.join(',')}`
    if (!tokens.has(key)) {
      tokens.set(key, door === 'app' ? (await gw.installation(merchant, env, scopes)).token : (await gw.secretKey(merchant, env, scopes)).secret_key)
    }
    return tokens.get(key)!
  }

  function call(def: EndpointDef, door: Door, token: string) {
    // Ids that exist nowhere: a 404 (or a 400 for the empty body) is what lies past the scope check.
    const path = DOOR_PREFIX[door] + def.path.replace(/\{(\w+)\}/g, (_, name: string) => `nonexistent_${name}`)
    const hasBody = def.method === 'POST' || def.method === 'PATCH'
    return gw.request(def.method, path, {token, body: hasBody ? {} : undefined})
  }

  for (const [id, def] of Object.entries(endpoints) as Array<[string, EndpointDef]>) {
    for (const door of def.doors) {
      it(`${id} on /v1/${door}: ${def.method} ${def.path} needs ${def.scope}`, async () => {
        const env = def.env ?? 'test'
        const without = await credential(door, env, SCOPES.filter((s) => s !== def.scope))
        const denied = expectError(await call(def, door, without), 403, 'insufficient_scope')
        expect(denied.type).to.equal('insufficient_scope')
        const allowed = await call(def, door, await credential(door, env, [def.scope]))
        expect(allowed.status, `${def.method} ${def.path} with ${def.scope}: ${allowed.text}`).to.not.equal(403)
        expect(allowed.status).to.not.equal(401)
      })
    }
  }
})

/**
 * The key-type matrix of the merchant API: every route on `/v1` against secret and publishable keys,
 * test and live, with and without a browser Origin, and an installation token.
 */
describe('merchant API key-type matrix', () => {
  let gw: TestGateway
  const keys: Record<string, string> = {}
  const ORIGIN = 'https://shop.example.com'
  before(async () => {
    gw = await TestGateway.start()
    const merchant = (await gw.merchant()).id
    for (const mode of ['test', 'live'] as const) {
      keys[`sk_${mode}`] = (await gw.secretKey(merchant, mode)).secret_key
      const pk = await gw.admin('POST', '/keys', {merchant, mode, scopes: [...SCOPES], type: 'publishable', allowed_origins: [ORIGIN]})
      keys[`pk_${mode}`] = pk.body.publishable_key
    }
    keys.app = (await gw.installation(merchant)).token
  })
  after(() => gw.close())

  const call = (def: EndpointDef, token: string, origin?: string, body: unknown = {}) =>
    gw.request(def.method, DOOR_PREFIX.merchant + def.path.replace(/\{(\w+)\}/g, (_, name: string) => `nonexistent_${name}`), {
      token,
      headers: origin ? {origin} : {},
      body: def.method === 'POST' || def.method === 'PATCH' ? body : undefined,
    })

  for (const [id, def] of Object.entries(endpoints) as Array<[string, EndpointDef]>) {
    if (!(def.doors as readonly Door[]).includes('merchant')) continue
    it(`${id}: ${def.method} /v1${def.path}`, async () => {
      for (const mode of ['test', 'live'] as const) {
        const secret = await call(def, keys[`sk_${mode}`]!)
        expect([401, 403], `${mode} secret key: ${secret.text}`).to.not.include(secret.status)
        expectError(await call(def, keys[`sk_${mode}`]!, ORIGIN), 403, 'origin_forbidden')
        expectError(await call(def, keys[`pk_${mode}`]!), 403, 'origin_not_allowed')
        expectError(await call(def, keys[`pk_${mode}`]!, 'https://other.example.com'), 403, 'origin_not_allowed')
        const browser = await call(def, keys[`pk_${mode}`]!, ORIGIN)
        if (!def.publishable) expectError(browser, 403, 'publishable_key_forbidden')
        else {
          // The one route a publishable key may call, and only with line_items.
          expectError(browser, 403, 'publishable_key_forbidden')
          const withItems = await call(def, keys[`pk_${mode}`]!, ORIGIN, {line_items: [{name: 'Tea', amount: 500, currency: 'eur'}]})
          expect(withItems.status, `${mode} publishable key: ${withItems.text}`).to.equal(201)
          expect(withItems.body.livemode).to.equal(mode === 'live')
        }
      }
      expectError(await call(def, keys.app!), 401, 'wrong_credential_type')
    })
  }
})
