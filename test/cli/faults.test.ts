import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {expect} from 'chai'

import {runCli, startGatewayProcess, tempHome} from '../helpers/cli.js'
import {expectError, TestGateway} from '../helpers/gateway.js'

describe('payapp gateway faults add|list|clear, and gateway start --faults', function () {
  this.timeout(60_000)
  let gw: TestGateway
  let acct: Awaited<ReturnType<TestGateway['account']>>
  const admin = () => ({PAYAPP_BASE_URL: gw.url, PAYAPP_ADMIN_KEY: gw.gw.adminKey})

  before(async () => {
    gw = await TestGateway.start()
    acct = await gw.account('test')
  })
  after(() => gw.close())

  it('adds a rule from flags, lists it with its hits, and clears it', async () => {
    const add = await runCli(['gateway', 'faults', 'add', '--route', 'products.create', '--status', '429', '--retry-after', '3', '--count', '1', '--merchant', acct.merchant.id, '--json'], {env: admin()})
    expect(add.code, add.stderr).to.equal(0)
    const rule = add.json()
    expect(rule).to.include({object: 'fault', route: 'products.create', status: 429, retry_after: 3, remaining: 1, merchant: acct.merchant.id})

    const faulted = await acct.app('POST', '/products', {body: {name: 'x'}})
    expectError(faulted, 429, 'rate_limited')
    expect(faulted.headers.get('retry-after')).to.equal('3')

    const list = await runCli(['gateway', 'faults', 'list'], {env: admin()})
    expect(list.code, list.stderr).to.equal(0)
    expect(list.stdout).to.equal(`${rule.id}  429 on products.create of ${acct.merchant.id} (0 left, 1 hit)\n`)

    const clear = await runCli(['gateway', 'faults', 'clear'], {env: admin()})
    expect(clear.code, clear.stderr).to.equal(0)
    expect(clear.stdout).to.equal('Removed 1 fault rule\n')
    expect((await runCli(['gateway', 'faults', 'list', '--json'], {env: admin()})).json().data).to.deep.equal([])
  })

  it('adds a webhooks rule with --webhooks, lists it in the same table, and refuses an API field on it', async () => {
    const add = await runCli(
      ['gateway', 'faults', 'add', '--webhooks', '--event-type', 'product.*', '--duplicate', '--fail-attempts', '2', '--count', '3', '--merchant', acct.merchant.id, '--json'],
      {env: admin()},
    )
    expect(add.code, add.stderr).to.equal(0)
    const rule = add.json()
    expect(rule).to.include({object: 'fault', scope: 'webhooks', event_type: 'product.*', duplicate: true, fail_attempts: 2, remaining: 3, status: null})

    const list = await runCli(['gateway', 'faults', 'list'], {env: admin()})
    expect(list.stdout).to.equal(`${rule.id}  duplicate, fail 2 attempts on product.* webhooks of ${acct.merchant.id} (3 left, 0 hits)\n`)

    const refused = await runCli(['gateway', 'faults', 'add', '--webhooks', '--status', '500', '--duplicate', '--json'], {env: admin()})
    expect(refused.code).to.not.equal(0)
    expect(refused.json().error).to.include({param: 'status'})
    await runCli(['gateway', 'faults', 'clear'], {env: admin()})
  })

  it('refuses a bad rule with the platform\'s code and param', async () => {
    const res = await runCli(['gateway', 'faults', 'add', '--route', 'no.such.endpoint', '--json'], {env: admin()})
    expect(res.code).to.not.equal(0)
    expect(res.json().error).to.include({code: 'parameter_invalid', param: 'route'})
  })

  it('starts a gateway with the rules of a YAML file, and refuses a bad file naming --faults', async () => {
    const dir = tempHome()
    const good = join(dir, 'faults.yaml')
    writeFileSync(good, 'faults:\n  - route: GET /v1/app/store\n    status: 503\n    retry_after: 0\n  - scope: webhooks\n    event_type: "checkout.*"\n    reorder: true\n    delay_seconds: 60\n')
    const started = await startGatewayProcess(['--db', ':memory:', '--faults', good])
    try {
      const res = await fetch(`${started.url}/v1/app/store`, {headers: {authorization: `Bearer ${acct.token}`}})
      expect(res.status).to.equal(503)
      expect(((await res.json()) as any).error.code).to.equal('service_unavailable')
      const rules = await fetch(`${started.url}/_admin/faults`, {headers: {authorization: `Bearer ${started.adminKey}`}})
      expect(((await rules.json()) as any).data.map((f: any) => [f.scope, f.event_type, f.reorder, f.delay_seconds])).to.deep.equal([
        ['api', null, false, null],
        ['webhooks', 'checkout.*', true, 60],
      ])
    } finally {
      started.child.kill('SIGTERM')
    }

    const bad = join(dir, 'bad.json')
    writeFileSync(bad, JSON.stringify([{status: 404}]))
    const refused = await runCli(['gateway', 'start', '--port', '0', '--db', ':memory:', '--faults', bad])
    expect(refused.code).to.equal(2)
    expect(refused.stderr).to.include('--faults').and.include('status')
  })
})
