import {expect} from 'chai'

import {expectError, holdNextRead, TestGateway} from '../helpers/gateway.js'

describe('gateway platform rules', () => {
  let gw: TestGateway
  before(async () => {
    gw = await TestGateway.start()
  })
  after(() => gw.close())

  it('answers the store to its installation and its secret key alike', async () => {
    const acct = await gw.account()
    const viaApp = await acct.app('GET', '/store')
    const viaKey = await acct.store('GET', '/store')
    expect(viaApp.status).to.equal(200)
    expect(viaApp.body).to.include({object: 'store', livemode: false, status: 'live', approval: 'approved'})
    expect(viaKey.body).to.deep.equal(viaApp.body)
    expect(viaApp.headers.get('x-request-id')).to.match(/^req_/)
  })

  it('rejects missing, malformed, unknown and revoked credentials with 401', async () => {
    const acct = await gw.account()
    expectError(await gw.request('GET', '/v1/app/store'), 401, 'missing_credential')
    expectError(await gw.request('GET', '/v1/app/store', {headers: {authorization: 'Token x'}}), 401)
    expectError(await gw.request('GET', '/v1/app/store', {token: 'app_test_nope'}), 401, 'invalid_api_key')
    expectError(await gw.request('GET', '/v1/app/store', {token: acct.secretKey}), 401, 'wrong_credential_type')
    expectError(await gw.request('GET', '/v1/store/store', {token: acct.token}), 401, 'wrong_credential_type')
    const revoked = await gw.admin('DELETE', `/installations/${acct.installation.id}`)
    expect(revoked.status).to.equal(200)
    expectError(await acct.app('GET', '/store'), 401, 'invalid_api_key')
  })

  it('fails a revoked credential on its very next request, though the process cached it as valid', async () => {
    const acct = await gw.account()
    // Both tokens answer once, so each process-local credential cache holds them as valid.
    expect((await acct.app('GET', '/store')).status).to.equal(200)
    expect((await acct.store('GET', '/store')).status).to.equal(200)
    expect((await gw.admin('DELETE', `/keys/${acct.secretKeyId}`)).status).to.equal(200)
    expectError(await acct.store('GET', '/store'), 401, 'invalid_api_key')
    expect((await acct.app('GET', '/store')).status).to.equal(200)
    expect((await gw.admin('DELETE', `/installations/${acct.installation.id}`)).status).to.equal(200)
    expectError(await acct.app('GET', '/store'), 401, 'invalid_api_key')
  })

  it('fails a key revoked while a request with it was reading it from storage, on the next request', async () => {
    const acct = await gw.account()
    // The key is not cached yet: the request reads it, as it was before the revocation, and answers after it.
    const held = holdNextRead(gw.gw.platform.storage.reads.credentials, 'byTokenHash')
    const first = acct.store('GET', '/store')
    await held.read
    expect((await gw.admin('DELETE', `/keys/${acct.secretKeyId}`)).status).to.equal(200)
    held.release()
    expect((await first).status, 'began before the revocation').to.equal(200)
    expectError(await acct.store('GET', '/store'), 401, 'invalid_api_key')
  })

  it('answers a missing scope with 403 insufficient_scope', async () => {
    const m = await gw.merchant()
    const inst = await gw.installation(m.id, 'test', ['products:read'])
    const err = expectError(await gw.request('GET', '/v1/app/store', {token: inst.token}), 403)
    expect(err.type).to.equal('insufficient_scope')
  })

  it('rejects secret keys sent from a browser', async () => {
    const acct = await gw.account()
    expectError(await acct.store('GET', '/store', {headers: {origin: 'https://shop.example'}}), 403, 'origin_forbidden')
  })

  it("answers a load balancer's health check without a credential: 200, the database available (a process cut off from it: test/cluster/database-restart.test.ts)", async () => {
    const res = await gw.request('GET', '/health')
    expect({status: res.status, body: res.body}).to.deep.equal({status: 200, body: {object: 'health', database: 'available'}})
    expect(res.headers.get('x-request-id')).to.match(/^req_/)
  })

  it('answers unknown paths with 404 and unsupported methods with 405, in the envelope', async () => {
    const acct = await gw.account()
    expectError(await acct.app('GET', '/nope'), 404, 'route_not_found')
    expectError(await acct.app('DELETE', '/store'), 405, 'method_not_allowed')
    const put = await gw.request('PUT', '/v1/app/products')
    expectError(put, 405, 'method_not_allowed')
    // With the Allow header HTTP requires of a 405: what the URL takes.
    expect(put.headers.get('allow')).to.equal('GET, HEAD, POST')
    // Path parameters, a trailing slash and HEAD follow the same table.
    expectError(await acct.store('PUT', '/products/prod_123/variants/'), 405, 'method_not_allowed')
    expect((await gw.request('HEAD', '/v1/store/checkouts', {token: acct.secretKey})).status).to.equal(405)
    expect((await gw.request('HEAD', '/v1/app/store', {token: acct.token})).status).to.equal(200)
    // A method the URL supports, on an id the route does not know, stays a 404.
    expectError(await acct.app('GET', '/products/prod_nope'), 404)
    // Routes outside the endpoint table too: the health check, the OpenAPI document.
    const post = await gw.request('POST', '/health')
    expectError(post, 405, 'method_not_allowed')
    expect(post.headers.get('allow')).to.equal('GET, HEAD')
    expectError(await gw.request('DELETE', '/openapi.json'), 405, 'method_not_allowed')
  })

  it('reads the event log with repeated query parameters without failing', async () => {
    const m = await gw.merchant()
    const res = await gw.admin('GET', `/events?merchant=${m.id}&merchant=${m.id}&type=a&type=b&limit=1&limit=2`)
    expect(res.status, res.text).to.equal(200)
    expect(res.body).to.include({object: 'list'})
  })

  it('keeps the admin API to the admin key', async () => {
    const acct = await gw.account()
    expectError(await gw.request('POST', '/_admin/merchants', {token: acct.token, body: {}}), 401)
    expectError(await gw.request('POST', '/_admin/merchants', {token: acct.secretKey, body: {}}), 401)
  })
})
