import {expect} from 'chai'

import {DOOR_PREFIX, endpoints, type Door, type EndpointDef} from '../../src/sdk/endpoints.js'
import {SCOPES, type Scope} from '../../src/sdk/schemas/common.js'
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
