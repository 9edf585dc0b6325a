import {spawn} from 'node:child_process'
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'
import {createInterface} from 'node:readline'

import {expect} from 'chai'

import {verifyWebhook} from '@payapp/sdk/webhooks-node'
import {BIN, ROOT, runCli, startCli, tempHome} from '../helpers/cli.js'
import {sale, sellable} from '../helpers/commerce.js'
import {TestGateway} from '../helpers/gateway.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function until<T>(probe: () => T | undefined | false | Promise<T | undefined | false>, what: string, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await probe()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(25)
  }
}

/** The developer's app: records each webhook with its raw body and signature, answers `status`. */
async function app(status = 200) {
  const got: Array<{body: string; signature: string | undefined}> = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      got.push({body: Buffer.concat(chunks).toString('utf8'), signature: req.headers['service-signature'] as string | undefined})
      res.writeHead(status).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {got, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, close: () => new Promise<void>((r) => server.close(() => r()))}
}

describe('payapp listen and payapp trigger', function () {
  this.timeout(60_000)
  let gw: TestGateway
  before(async () => {
    gw = await TestGateway.start()
  })
  after(() => gw.close())

  it('forwards signed events to the app, prints one JSON line each, and removes its endpoint on SIGTERM', async () => {
    const acct = await gw.account('test')
    const target = await app()
    const home = tempHome()
    const child = spawn(
      process.execPath,
      [BIN, 'listen', '--forward-to', target.url, '--events', 'checkout.session.completed', '--events', 'payment.succeeded', '--json', '--merchant', acct.merchant.id, '--base-url', gw.url],
      {cwd: ROOT, env: {PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: `${home}/config`, PAYAPP_KEYCHAIN: 'off', PAYAPP_ADMIN_KEY: gw.gw.adminKey}, stdio: ['ignore', 'pipe', 'pipe']},
    )
    const lines: any[] = []
    createInterface({input: child.stdout}).on('line', (line) => lines.push(JSON.parse(line)))
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    try {
      const secret = (await until(() => /export PAYAPP_WEBHOOK_SECRET=(whsec_\w+)/.exec(stderr) ?? undefined, 'the signing secret on stderr'))[1]
      const endpoints = (await gw.admin('GET', `/webhook_endpoints?merchant=${acct.merchant.id}`)).body.data
      expect(endpoints).to.have.length(1)
      expect(endpoints[0]).to.include({env: 'test'})
      expect(endpoints[0].url).to.match(/^http:\/\/127\.0\.0\.1:\d+\//)

      const {session, payment} = await sale(gw, acct, await sellable(acct))
      await until(() => target.got.length >= 2 && lines.length >= 2, 'two forwarded events')
      const events = target.got.map((r) => verifyWebhook(r.body, r.signature, secret))
      expect(events.map((e) => [e.type, e.data.object.id])).to.deep.equal([
        ['checkout.session.completed', session.id],
        ['payment.succeeded', payment.id],
      ])
      expect(lines.map((l) => [l.type, l.id, l.status])).to.deep.equal(events.map((e) => [e.type, e.id, 200]))
      expect(lines[0].received).to.match(/^\d{4}-\d\d-\d\dT/)

      child.kill('SIGTERM')
      expect(await exited).to.equal(0)
      expect((await gw.admin('GET', `/webhook_endpoints?merchant=${acct.merchant.id}`)).body.data).to.deep.equal([])
      expect(stderr).not.to.include(gw.gw.adminKey)
    } finally {
      child.kill('SIGKILL')
      await target.close()
    }
  })

  it('prints a human line per event and the masked secret when one is given', async () => {
    const acct = await gw.account('test')
    const target = await app(500)
    const secret = 'whsec_ReusedSecretForTheApp1234'
    const home = tempHome()
    const child = spawn(process.execPath, [BIN, 'listen', '--forward-to', target.url, '--events', 'product.created'], {
      cwd: ROOT,
      env: {PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: `${home}/config`, PAYAPP_KEYCHAIN: 'off', PAYAPP_ADMIN_KEY: gw.gw.adminKey, PAYAPP_MERCHANT: acct.merchant.id, PAYAPP_BASE_URL: gw.url, PAYAPP_WEBHOOK_SECRET: secret},
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    try {
      await until(() => stderr.includes('Ctrl-C'), 'listen to start')
      expect(stderr).to.include('Signing with your secret whsec_…1234')
      expect(stderr).not.to.include(secret)
      const product = await acct.store('POST', '/products', {body: {name: 'Relay Mug', price: {currency: 'eur', unit_amount: 900}}})
      await until(() => stdout.includes('\n'), 'the event line')
      // The app's 500 is what the gateway sees, and what listen reports.
      const event = verifyWebhook(target.got[0].body, target.got[0].signature, secret)
      expect(event.data.object).to.include({id: product.body.id})
      // The CLI's one date format, as everywhere else in human output (JSON keeps ISO 8601).
      expect(stdout).to.match(new RegExp(`^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC product\\.created ${event.id} → 500\\n$`))
      child.kill('SIGINT')
      expect(await exited).to.equal(0)
    } finally {
      child.kill('SIGKILL')
      await target.close()
    }
  })

  it('fails at once naming the missing flag, without prompting', async () => {
    const res = await runCli(['listen', '--merchant', 'mch_x'], {env: {PAYAPP_BASE_URL: gw.url, PAYAPP_ADMIN_KEY: gw.gw.adminKey}})
    expect(res.code).to.equal(2)
    expect(res.stderr).to.match(/^Error: Missing --forward-to/)
    const noKey = await runCli(['listen', '--forward-to', 'http://127.0.0.1:9/x', '--merchant', 'mch_x', '--json'], {env: {PAYAPP_BASE_URL: gw.url}})
    expect(noKey.code).to.equal(2)
    expect(noKey.json().error).to.include({type: 'usage_error', param: '--admin-key'})
  })

  it('trigger checkout.session.completed pays a real checkout and prints the events it caused', async () => {
    const acct = await gw.account('test')
    const env = {PAYAPP_BASE_URL: gw.url, PAYAPP_ADMIN_KEY: gw.gw.adminKey, PAYAPP_MERCHANT: acct.merchant.id, PAYAPP_SECRET_KEY: acct.secretKey}
    const res = await runCli(['trigger', 'checkout.session.completed', '--json'], {env})
    expect(res.code, res.stderr).to.equal(0)
    const out = res.json()
    const logged = (await gw.admin('GET', `/events?merchant=${acct.merchant.id}&limit=1000`)).body.data
    const types = out.events.map((e: any) => e.type)
    expect(types).to.include.members(['checkout.session.completed', 'payment.succeeded', 'store.order.created'])
    expect(types).not.to.include('product.created')
    // Exactly the events the sale caused, as the gateway logged them.
    expect(out.events).to.deep.equal(logged.slice(0, out.events.length).reverse())
    expect(out.steps[0]).to.match(/^Created product prod_\w+ with a 20\.00 EUR price$/)
    const sessionId = /^Created checkout session (\S+)$/.exec(out.steps[1])![1]
    expect(out.events.find((e: any) => e.type === 'checkout.session.completed').data.object).to.include({id: sessionId, status: 'complete'})

    // A second run reuses the fixture product, and human output lists the event ids.
    const again = await runCli(['trigger', 'checkout.session.completed'], {env})
    expect(again.code, again.stderr).to.equal(0)
    const lines = again.stdout.trimEnd().split('\n')
    expect(lines[0]).to.match(/^Using product prod_\w+ \(payapp trigger fixture\)$/)
    const newest = (await gw.admin('GET', `/events?merchant=${acct.merchant.id}&type=checkout.session.completed`)).body.data[0]
    expect(again.stdout).to.include(`  ${newest.id}  checkout.session.completed\n`)
    expect(res.stdout + res.stderr + again.stdout + again.stderr).not.to.include(acct.secretKey)
  })

  it('--print-secret prints the profile\'s signing secret and exits without a gateway; listen signs with it', async () => {
    const home = tempHome()
    const printed = await runCli(['listen', '--print-secret', '--base-url', 'http://127.0.0.1:9'], {home})
    expect(printed.code, printed.stderr).to.equal(0)
    expect(printed.stdout).to.match(/^whsec_\w{20,}\n$/)
    expect((await runCli(['listen', '--print-secret', '--json'], {home})).json()).to.deep.equal({secret: printed.stdout.trim(), profile: 'default', env: 'test'})
    const live = await runCli(['listen', '--print-secret', '--env', 'live'], {home})
    expect(live.stdout).not.to.equal(printed.stdout)
  })

  it('says when the gateway goes away, registers again when it is back, and removes endpoints stale runs left', async () => {
    const db = TestGateway.tempDbFile()
    let g = await TestGateway.start({db})
    const port = Number(new URL(g.url).port)
    const acct = await g.account('test')
    const merchant = acct.merchant.id
    const closed = await app()
    await closed.close()
    const stale = (await g.admin('POST', '/webhook_endpoints', {merchant, env: 'test', url: closed.url.replace('/webhooks', '/payapp-listen/webhooks')})).body
    const theirs = (await g.admin('POST', '/webhook_endpoints', {merchant, env: 'test', url: 'http://127.0.0.1:9/their-app'})).body
    const target = await app()
    const proc = startCli(['listen', '--forward-to', target.url, '--merchant', merchant, '--base-url', g.url], tempHome(), {PAYAPP_ADMIN_KEY: g.gw.adminKey})
    const endpoints = async () => (await g.admin('GET', `/webhook_endpoints?merchant=${merchant}`)).body.data as Array<{id: string; url: string}>
    try {
      await until(() => proc.stderr().includes('Press Ctrl-C'), 'listen to start')
      expect(proc.stderr()).to.include(`Removed 1 webhook endpoint(s) left by earlier listen runs: ${stale.id}\n`)
      const ids = (await endpoints()).map((e) => e.id)
      expect(ids).to.include(theirs.id).and.not.include(stale.id)
      expect(ids).to.have.length(2)

      await g.close()
      await until(() => proc.stderr().includes(`Lost the gateway at ${g.url}`), 'the lost-gateway line')
      g = await TestGateway.start({db, port})
      await until(() => proc.stderr().includes(`The gateway at ${g.url} is back.`), 'the gateway-is-back line')

      // Removed behind its back (a reset, a fresh database): registered again, with the same secret.
      const mine = (await endpoints()).find((e) => e.url.includes('/payapp-listen/'))!
      await g.admin('DELETE', `/webhook_endpoints/${mine.id}`)
      await until(() => proc.stderr().includes('again (same signing secret); forwarding resumes.'), 'the re-registration line')
      const secret = /export PAYAPP_WEBHOOK_SECRET=(whsec_\w+)/.exec(proc.stderr())![1]!
      const {session} = await sale(g, acct, await sellable(acct))
      // Every forwarded event verifies with the secret printed at start, the sale's completion among them.
      const completed = () => target.got.map((r) => verifyWebhook(r.body, r.signature, secret)).find((e) => e.type === 'checkout.session.completed')
      expect((await until(completed, 'the sale forwarded')).data.object).to.include({id: session.id})
      expect(await proc.stop()).to.equal(0)
      expect((await endpoints()).map((e) => e.id)).to.deep.equal([theirs.id])
    } finally {
      await proc.stop()
      await target.close()
      await g.close()
    }
  })
})
