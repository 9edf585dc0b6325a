/**
 * `payapp listen` loses nothing across gaps and keeps working across a secret rotation: the CLI as a
 * process, a real gateway over HTTP (restarted on the same database, or replaced by another), a real app.
 */
import {spawn} from 'node:child_process'

import {expect} from 'chai'

import {verifyWebhook} from '@payapp/sdk/webhooks-node'
import {BIN, cliEnv, ROOT, runCli, tempHome} from '../helpers/cli.js'
import {advanceClock} from '../helpers/commerce.js'
import {TestGateway, type Account} from '../helpers/gateway.js'
import {receiver, sleep, until as untilWithin, type Receiver} from '../helpers/receiver.js'
import {date} from '../../src/cli/output.js'

/** A CLI process on a busy machine: generous waits (they end as soon as the thing happens). */
const until = <T>(probe: () => T | undefined | false | Promise<T | undefined | false>, what: string, ms = 15_000) => untilWithin(probe, what, ms)

/** `payapp listen` as a process: its whole stdout and stderr, and a way to stop it. */
function listen(args: string[], home: string, env: Record<string, string>) {
  const child = spawn(process.execPath, [BIN, 'listen', ...args], {cwd: ROOT, env: cliEnv(home, env), stdio: ['ignore', 'pipe', 'pipe']})
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  let signal: string | null = null
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code, killedBy) => {
      signal = killedBy
      resolve(code)
    }),
  )
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    /** How it ended, for a failed exit-code assertion: the signal that ended it, if one did, and its stderr. */
    ending: () => `signal ${signal}; stderr:\n${stderr}`,
    lines: () => stdout.split('\n').filter(Boolean),
    exited,
    started: () => until(() => stderr.includes('Press Ctrl-C'), `listen to start: ${stderr}`, 20_000),
    stop() {
      if (child.exitCode === null) child.kill('SIGTERM')
      return exited
    },
  }
}

const product = (acct: Account, name: string) => acct.store('POST', '/products', {body: {name, price: {currency: 'eur', unit_amount: 900}}})

/** Each event id the app got, with how many times. */
function counts(rx: Receiver): Map<string, number> {
  const seen = new Map<string, number>()
  for (const got of rx.got) seen.set(got.event.id, (seen.get(got.event.id) ?? 0) + 1)
  return seen
}

describe('payapp listen: catch-up, restarts, other credentials, secret rotation', function () {
  this.timeout(180_000)

  it('forwards every one of 1,000 events exactly once across a gateway restart in the middle', async () => {
    const db = TestGateway.tempDbFile()
    let gw = await TestGateway.start({db})
    const port = Number(new URL(gw.url).port)
    const acct = await gw.account('test')
    const app = await receiver()
    const proc = listen(['--forward-to', app.url, '--events', 'product.created', '--events', 'price.created'], tempHome(), {
      PAYAPP_BASE_URL: gw.url,
      PAYAPP_ADMIN_KEY: gw.gw.adminKey,
      PAYAPP_MERCHANT: acct.merchant.id,
    })
    try {
      await proc.started()
      // 500 products, each a product.created and a price.created: 1,000 events, ten requests at a time.
      // Keyed, so a request on a connection the restart closed is retried without making a second product.
      const create = async (i: number) => {
        const body = {name: `Mug ${i}`, price: {currency: 'eur', unit_amount: 900}}
        for (let attempt = 0; ; attempt++) {
          try {
            return await acct.store('POST', '/products', {body, idempotencyKey: `listen-1000-${i}`})
          } catch (error) {
            if (attempt === 2) throw error
          }
        }
      }
      const make = async (from: number, to: number) => {
        for (let i = from; i < to; i += 10) await Promise.all(Array.from({length: Math.min(10, to - i)}, (_, k) => create(i + k)))
      }
      await make(0, 250)
      // The gateway stops with deliveries queued and in flight, and comes back on the same database.
      await gw.close()
      gw = await TestGateway.start({db, port})
      await make(250, 500)
      const logged = new Set(((await gw.admin('GET', `/events?merchant=${acct.merchant.id}&limit=1000`)).body.data as any[]).map((e) => e.id))
      expect(logged.size).to.equal(1000)
      await until(() => counts(app).size === 1000, 'all 1,000 events at the app', 60_000)
      await sleep(2500)
      const seen = counts(app)
      expect(new Set(seen.keys())).to.deep.equal(logged)
      expect([...seen.values()].filter((n) => n > 1), 'events forwarded twice').to.deep.equal([])
      expect(proc.lines()).to.have.length(1000)
    } finally {
      await proc.stop()
      await app.close()
      await gw.close()
    }
  })

  it('catches up what was logged while it was stopped, oldest first, each once; --no-catch-up skips; --since replays', async () => {
    const gw = await TestGateway.start()
    const acct = await gw.account('test')
    const app = await receiver()
    const home = tempHome()
    const env = {PAYAPP_BASE_URL: gw.url, PAYAPP_ADMIN_KEY: gw.gw.adminKey, PAYAPP_MERCHANT: acct.merchant.id}
    const args = ['--forward-to', app.url, '--events', 'product.created']
    const names = () => app.got.map((g) => g.event.data.object.name as string)
    try {
      let proc = listen(args, home, env)
      await proc.started()
      await product(acct, 'Live 1')
      await until(() => app.got.length === 1, 'the live event')
      expect(await proc.stop(), proc.ending()).to.equal(0)

      for (const name of ['Away 1', 'Away 2', 'Away 3']) await product(acct, name)
      proc = listen(args, home, env)
      await proc.started()
      expect(proc.stderr()).to.include('Caught up 3 events emitted while listen was away')
      await product(acct, 'Live 2')
      await until(() => app.got.length === 5, 'the caught-up events and the new one')
      expect(names()).to.deep.equal(['Live 1', 'Away 1', 'Away 2', 'Away 3', 'Live 2'])
      // Caught-up events are signed with listen's secret, as the gateway signs: the app verifies them alike.
      const secret = /export PAYAPP_WEBHOOK_SECRET=(whsec_\w+)/.exec(proc.stderr())![1]
      for (const got of app.got) verifyWebhook(got.body, got.signature, secret)
      expect(proc.lines().slice(0, 3).every((l) => l.endsWith('→ 200 (caught up)'))).to.equal(true)
      expect(await proc.stop(), proc.ending()).to.equal(0)

      // Restarted again with nothing missed: nothing forwarded twice.
      proc = listen(args, home, env)
      await proc.started()
      expect(proc.stderr()).not.to.include('Caught up')
      expect(await proc.stop(), proc.ending()).to.equal(0)

      await product(acct, 'Skipped')
      proc = listen([...args, '--no-catch-up'], home, env)
      await proc.started()
      await sleep(300)
      expect(names()).not.to.include('Skipped')
      expect(await proc.stop(), proc.ending()).to.equal(0)

      const live1 = app.got[0].event.id as string
      proc = listen([...args, '--since', live1, '--json'], home, env)
      await proc.started()
      expect(proc.stderr()).to.include(`Caught up 5 events since ${live1}.`)
      expect(proc.lines().map((l) => JSON.parse(l).caught_up)).to.deep.equal([true, true, true, true, true])
      expect(names().slice(-5)).to.deep.equal(['Away 1', 'Away 2', 'Away 3', 'Live 2', 'Skipped'])
      expect(await proc.stop(), proc.ending()).to.equal(0)
    } finally {
      await app.close()
      await gw.close()
    }
  })

  it('stops cleanly when signalled the instant its prompt appears (as a script that reads it does), leaving no endpoint', async () => {
    const gw = await TestGateway.start()
    const acct = await gw.account('test')
    const app = await receiver()
    const env = {PAYAPP_BASE_URL: gw.url, PAYAPP_ADMIN_KEY: gw.gw.adminKey, PAYAPP_MERCHANT: acct.merchant.id}
    try {
      for (const signal of ['SIGTERM', 'SIGINT', 'SIGTERM', 'SIGINT', 'SIGTERM', 'SIGINT'] as const) {
        const child = spawn(process.execPath, [BIN, 'listen', '--forward-to', app.url], {cwd: ROOT, env: cliEnv(tempHome(), env), stdio: ['ignore', 'ignore', 'pipe']})
        let stderr = ''
        // Signalled from the data event itself, not a poll: the prompt's write and the signal are as close as they get.
        child.stderr.on('data', (d) => {
          stderr += d
          if (stderr.includes('Press Ctrl-C') && child.exitCode === null && !child.killed) child.kill(signal)
        })
        const [code, killedBy] = await new Promise<[number | null, string | null]>((resolve) => child.on('exit', (c, s) => resolve([c, s])))
        expect([code, killedBy], `${signal}; stderr:\n${stderr}`).to.deep.equal([0, null])
      }
      expect((await gw.admin('GET', `/webhook_endpoints?merchant=${acct.merchant.id}`)).body.data).to.deep.equal([])
    } finally {
      await app.close()
      await gw.close()
    }
  })

  it('reports at once a gateway that came back with other credentials, and says what to do', async () => {
    let gw = await TestGateway.start()
    const port = Number(new URL(gw.url).port)
    const acct = await gw.account('test')
    const app = await receiver()
    const proc = listen(['--forward-to', app.url], tempHome(), {PAYAPP_BASE_URL: gw.url, PAYAPP_ADMIN_KEY: gw.gw.adminKey, PAYAPP_MERCHANT: acct.merchant.id})
    try {
      await proc.started()
      await gw.close()
      // A re-seeded in-memory gateway on the same port: another admin key.
      gw = await TestGateway.start({port})
      const code = await Promise.race([proc.exited, sleep(10_000).then(() => 'still running')])
      expect(code).to.equal(3)
      expect(proc.stderr()).to.include("refuses listen's admin key").and.include('Run listen again with its new admin key')
      expect(proc.stderr()).not.to.include('waiting for it to come back')
    } finally {
      await proc.stop()
      await app.close()
      await gw.close()
    }
  })

  it('keeps forwarding across --rotate-secret, which prints the new secret once; the app verifies with either during the overlap', async () => {
    const gw = await TestGateway.start()
    const acct = await gw.account('test')
    const app = await receiver()
    const home = tempHome()
    const env = {PAYAPP_BASE_URL: gw.url, PAYAPP_ADMIN_KEY: gw.gw.adminKey, PAYAPP_MERCHANT: acct.merchant.id}
    const proc = listen(['--forward-to', app.url, '--events', 'product.created'], home, env)
    try {
      await proc.started()
      const old = /export PAYAPP_WEBHOOK_SECRET=(whsec_\w+)/.exec(proc.stderr())![1]
      const rotated = await runCli(['listen', '--rotate-secret', '--expire-previous-in', '3600'], {home, env})
      expect(rotated.code, rotated.stderr).to.equal(0)
      const fresh = rotated.stdout.trim()
      expect(fresh).to.match(/^whsec_\w+$/).and.not.equal(old)
      expect(rotated.stderr).to.include('1 running listen endpoint').and.not.include(fresh)
      await until(() => proc.stderr().includes('The signing secret was rotated (now whsec_…'), 'the running listen to notice', 10_000)
      expect(proc.stderr()).to.include(`now whsec_…${fresh.slice(-4)}`)
      expect(proc.stderr().split(fresh)).to.have.length(1)
      expect((await runCli(['listen', '--print-secret'], {home})).stdout.trim()).to.equal(fresh)

      await product(acct, 'During')
      await until(() => app.got.length === 1, 'the event during the overlap')
      for (const secret of [old, fresh]) verifyWebhook(app.got[0].body, app.got[0].signature, secret)

      await advanceClock(gw, 3600)
      await product(acct, 'After')
      await until(() => app.got.length === 2, 'the event after the overlap')
      verifyWebhook(app.got[1].body, app.got[1].signature, fresh)
      expect(() => verifyWebhook(app.got[1].body, app.got[1].signature, old)).to.throw(/signature/i)
      expect(await proc.stop(), proc.ending()).to.equal(0)
    } finally {
      await proc.stop()
      await app.close()
      await gw.close()
    }
  })

  it("prints each event at its time on the gateway clock, not the wall clock's", async () => {
    const gw = await TestGateway.start()
    const acct = await gw.account('test')
    const app = await receiver()
    const proc = listen(['--forward-to', app.url, '--events', 'product.created'], tempHome(), {PAYAPP_BASE_URL: gw.url, PAYAPP_ADMIN_KEY: gw.gw.adminKey, PAYAPP_MERCHANT: acct.merchant.id})
    try {
      await proc.started()
      await advanceClock(gw, 40 * 86_400)
      await product(acct, 'Future')
      await until(() => proc.lines().length === 1, 'the line')
      const created = app.got[0].event.created as number
      expect(created - Date.now() / 1000).to.be.greaterThan(39 * 86_400)
      expect(proc.lines()[0]).to.equal(`${date(created)} product.created ${app.got[0].event.id} → 200`)
    } finally {
      await proc.stop()
      await app.close()
      await gw.close()
    }
  })
})
