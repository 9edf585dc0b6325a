import {expect} from 'chai'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {createHmac} from 'node:crypto'

import {SignatureVerificationError} from '@payapp/sdk/errors'
import {computeSignature, signWebhookPayload, verifyWebhook, verifyWebhookAsync} from '@payapp/sdk/webhooks-node'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const SECRET = 'whsec_test_secret_1'
const NOW = 1_767_225_600
const event = {
  id: 'evt_1',
  object: 'event',
  type: 'fraud_warning.created',
  livemode: false,
  created: NOW,
  data: {object: {id: 'fw_1', object: 'fraud_warning', status: 'open'}},
}

function failure(fn: () => unknown): SignatureVerificationError {
  try {
    fn()
  } catch (err) {
    expect(err).to.be.instanceOf(SignatureVerificationError)
    return err as SignatureVerificationError
  }
  throw new Error('expected verification to fail')
}

describe('sdk/webhooks', () => {
  it('signs as the spec says: HMAC-SHA256 over "<t>.<raw body>", hex', () => {
    const body = '{"id":"evt_1"}'
    const expected = createHmac('sha256', SECRET).update(`${NOW}.${body}`).digest('hex')
    expect(computeSignature(SECRET, NOW, body)).to.equal(expected)
    expect(computeSignature(SECRET, NOW, Buffer.from(body))).to.equal(expected)
    expect(signWebhookPayload(body, SECRET, {timestamp: NOW})).to.deep.equal({header: `t=${NOW},v1=${expected}`, body, timestamp: NOW})
  })

  it('serialises an object payload and defaults the timestamp to now', () => {
    const signed = signWebhookPayload(event, SECRET)
    expect(JSON.parse(signed.body)).to.deep.equal(event)
    expect(Math.abs(signed.timestamp - Date.now() / 1000)).to.be.below(5)
  })

  it('verifies a string or Buffer body and returns the parsed event', () => {
    const {header, body} = signWebhookPayload(event, SECRET, {timestamp: NOW})
    expect(verifyWebhook(body, header, SECRET, {now: NOW})).to.deep.equal(event)
    expect(verifyWebhook(Buffer.from(body), header, SECRET, {now: NOW + 10})).to.deep.equal(event)
  })

  it('verifies against the raw bytes, whitespace included', () => {
    const body = '{\n  "id": "evt_1",  "object": "event"\n}'
    const {header} = signWebhookPayload(body, SECRET, {timestamp: NOW})
    expect(verifyWebhook(body, header, SECRET, {now: NOW}).id).to.equal('evt_1')
    const err = failure(() => verifyWebhook(JSON.stringify(JSON.parse(body)), header, SECRET, {now: NOW}))
    expect(err.code).to.equal('signature_mismatch')
    expect(err.message).to.include('raw bytes')
  })

  it('accepts any of several v1 values and any of several secrets (rotation)', () => {
    const {body} = signWebhookPayload(event, 'whsec_new', {timestamp: NOW})
    const oldSig = computeSignature('whsec_old', NOW, body)
    const newSig = computeSignature('whsec_new', NOW, body)
    const header = `t=${NOW},v1=${oldSig},v1=${newSig}`
    expect(verifyWebhook(body, header, 'whsec_new', {now: NOW}).id).to.equal('evt_1')
    expect(verifyWebhook(body, header, 'whsec_old', {now: NOW}).id).to.equal('evt_1')
    expect(verifyWebhook(body, `t=${NOW},v1=${newSig}`, ['whsec_old', 'whsec_new'], {now: NOW}).id).to.equal('evt_1')
    expect(failure(() => verifyWebhook(body, header, 'whsec_other', {now: NOW})).code).to.equal('signature_mismatch')
  })

  it('ignores unknown schemes and spaces in the header, and accepts it as an array', () => {
    const {body} = signWebhookPayload(event, SECRET, {timestamp: NOW})
    const sig = computeSignature(SECRET, NOW, body)
    expect(verifyWebhook(body, ` t=${NOW}, v0=abc, v1=${sig} `, SECRET, {now: NOW}).id).to.equal('evt_1')
    expect(verifyWebhook(body, [`t=${NOW},v1=${sig}`], SECRET, {now: NOW}).id).to.equal('evt_1')
  })

  it('rejects a tampered body or a signature from another secret', () => {
    const {header, body} = signWebhookPayload(event, SECRET, {timestamp: NOW})
    expect(failure(() => verifyWebhook(body.replace('open', 'closed'), header, SECRET, {now: NOW})).code).to.equal('signature_mismatch')
    expect(failure(() => verifyWebhook(body, header, 'whsec_wrong', {now: NOW})).code).to.equal('signature_mismatch')
  })

  it('rejects a signature whose timestamp was changed', () => {
    const {header, body} = signWebhookPayload(event, SECRET, {timestamp: NOW - 1000})
    const replayed = header.replace(`t=${NOW - 1000}`, `t=${NOW}`)
    expect(failure(() => verifyWebhook(body, replayed, SECRET, {now: NOW})).code).to.equal('signature_mismatch')
  })

  it('rejects stale and far-future timestamps, at the default 300 s or a custom tolerance', () => {
    const stale = signWebhookPayload(event, SECRET, {timestamp: NOW - 301})
    const future = signWebhookPayload(event, SECRET, {timestamp: NOW + 301})
    const edge = signWebhookPayload(event, SECRET, {timestamp: NOW - 300})
    expect(failure(() => verifyWebhook(stale.body, stale.header, SECRET, {now: NOW})).code).to.equal('timestamp_outside_tolerance')
    expect(failure(() => verifyWebhook(future.body, future.header, SECRET, {now: NOW})).code).to.equal('timestamp_outside_tolerance')
    expect(verifyWebhook(edge.body, edge.header, SECRET, {now: NOW}).id).to.equal('evt_1')
    expect(verifyWebhook(stale.body, stale.header, SECRET, {now: NOW, toleranceSeconds: 600}).id).to.equal('evt_1')
    const tight = signWebhookPayload(event, SECRET, {timestamp: NOW - 11})
    expect(failure(() => verifyWebhook(tight.body, tight.header, SECRET, {now: NOW, toleranceSeconds: 10})).code).to.equal(
      'timestamp_outside_tolerance',
    )
  })

  it('uses the real clock when no time is given', () => {
    const fresh = signWebhookPayload(event, SECRET)
    expect(verifyWebhook(fresh.body, fresh.header, SECRET).id).to.equal('evt_1')
    const old = signWebhookPayload(event, SECRET, {timestamp: Math.floor(Date.now() / 1000) - 3600})
    expect(failure(() => verifyWebhook(old.body, old.header, SECRET)).code).to.equal('timestamp_outside_tolerance')
  })

  it('rejects a missing header', () => {
    const {body} = signWebhookPayload(event, SECRET, {timestamp: NOW})
    for (const header of [undefined, '', '   ', []]) {
      expect(failure(() => verifyWebhook(body, header, SECRET, {now: NOW})).code).to.equal('signature_missing')
    }
  })

  it('rejects a garbled header', () => {
    const {body} = signWebhookPayload(event, SECRET, {timestamp: NOW})
    const sig = computeSignature(SECRET, NOW, body)
    for (const header of ['garbage', `v1=${sig}`, `t=${NOW}`, `t=soon,v1=${sig}`, `t=${NOW},v1=nothex`, `t=${NOW},v1=${sig.slice(2)}`]) {
      expect(failure(() => verifyWebhook(body, header, SECRET, {now: NOW})).code, header).to.equal('signature_malformed')
    }
  })

  it('explains what to do when handed the parsed JSON instead of the raw body', () => {
    const {header} = signWebhookPayload(event, SECRET, {timestamp: NOW})
    for (const parsed of [event, {}, undefined, null]) {
      const err = failure(() => verifyWebhook(parsed as unknown as string, header, SECRET, {now: NOW}))
      expect(err.code).to.equal('payload_not_raw')
      expect(err.message).to.include('pass the raw request body (string or Buffer), not the parsed JSON')
      expect(err.message).to.include("express.raw({type: 'application/json'})")
    }
    const message = (parsed: unknown) => failure(() => verifyWebhook(parsed as string, header, SECRET, {now: NOW})).message.split(':')[0]
    expect([event, 42, undefined, null].map(message)).to.deep.equal([
      'Webhook payload is an object',
      'Webhook payload is a number',
      'Webhook payload is undefined',
      'Webhook payload is null',
    ])
  })

  it('rejects a correctly signed body that is not a JSON object', () => {
    for (const body of ['not json', '[1,2]', '"evt"']) {
      const {header} = signWebhookPayload(body, SECRET, {timestamp: NOW})
      expect(failure(() => verifyWebhook(body, header, SECRET, {now: NOW})).code).to.equal('payload_invalid_json')
    }
  })

  it('refuses to verify without a secret (a server misconfiguration, not a bad request)', () => {
    const {header, body} = signWebhookPayload(event, SECRET, {timestamp: NOW})
    expect(() => verifyWebhook(body, header, '', {now: NOW})).to.throw(TypeError, 'no signing secret')
    expect(() => verifyWebhook(body, header, [], {now: NOW})).to.throw(TypeError, 'no signing secret')
  })

  describe('verifyWebhookAsync (Web Crypto, for edge runtimes)', () => {
    async function codeOf(promise: Promise<unknown>): Promise<string> {
      try {
        await promise
      } catch (err) {
        if (err instanceof TypeError) return `TypeError: ${err.message}`
        expect(err).to.be.instanceOf(SignatureVerificationError)
        return (err as SignatureVerificationError).code!
      }
      return 'ok'
    }
    const syncCodeOf = (fn: () => unknown): string => {
      try {
        fn()
      } catch (err) {
        if (err instanceof TypeError) return `TypeError: ${err.message.replace('verifyWebhook:', 'verifyWebhookAsync:')}`
        return (err as SignatureVerificationError).code!
      }
      return 'ok'
    }

    it('decides every case as verifyWebhook does', async () => {
      const {header, body} = signWebhookPayload(event, SECRET, {timestamp: NOW})
      const sig = computeSignature(SECRET, NOW, body)
      const cases: Array<[string, unknown, string | string[] | undefined, string | string[], {now?: number; toleranceSeconds?: number}]> = [
        ['string body', body, header, SECRET, {now: NOW}],
        ['bytes', Buffer.from(body), header, SECRET, {now: NOW}],
        ['rotation, second secret', body, `t=${NOW},v1=${computeSignature('old', NOW, body)},v1=${sig}`, ['nope', SECRET], {now: NOW}],
        ['tampered', body.replace('open', 'shut'), header, SECRET, {now: NOW}],
        ['wrong secret', body, header, 'whsec_other', {now: NOW}],
        ['stale', body, header, SECRET, {now: NOW + 301}],
        ['custom tolerance', body, header, SECRET, {now: NOW + 301, toleranceSeconds: 400}],
        ['missing header', body, undefined, SECRET, {now: NOW}],
        ['garbled header', body, `t=${NOW},v1=${sig.slice(1)}`, SECRET, {now: NOW}],
        ['parsed JSON', event, header, SECRET, {now: NOW}],
        ['no secret', body, header, [], {now: NOW}],
      ]
      for (const notJson of ['[1]', 'nope']) {
        const signed = signWebhookPayload(notJson, SECRET, {timestamp: NOW})
        cases.push([`signed ${notJson}`, signed.body, signed.header, SECRET, {now: NOW}])
      }
      for (const [name, raw, h, secret, opts] of cases) {
        const expected = syncCodeOf(() => verifyWebhook(raw as string, h, secret, opts))
        expect(await codeOf(verifyWebhookAsync(raw as string, h, secret, opts)), name).to.equal(expected)
      }
      expect(await verifyWebhookAsync(new TextEncoder().encode(body).buffer, header, SECRET, {now: NOW})).to.deep.equal(event)
    })

    it('runs where there is no node:crypto and no Buffer: payapp/sdk/webhooks imports neither', async function () {
      this.timeout(20_000)
      const {body, header} = signWebhookPayload(event, SECRET, {timestamp: NOW})
      // An edge-like runtime: no Buffer, and a loader hook that refuses every node: import.
      const script = `
        globalThis.Buffer = undefined
        const {verifyWebhookAsync} = await import('payapp/sdk/webhooks')
        const event = await verifyWebhookAsync(${JSON.stringify(body)}, ${JSON.stringify(header)}, ${JSON.stringify(SECRET)}, {now: ${NOW}})
        console.log(event.id)`
      const loader = `export async function resolve(spec, ctx, next) { if (spec.startsWith('node:')) throw new Error('edge runtime: no ' + spec); return next(spec, ctx) }`
      const {execFileSync} = await import('node:child_process')
      const out = execFileSync(
        process.execPath,
        ['--import', `data:text/javascript,${encodeURIComponent(`import {register} from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(loader)}`)})`)}`, '--input-type=module', '-e', script],
        {cwd: ROOT, encoding: 'utf8'},
      )
      expect(out.trim()).to.equal('evt_1')
    })
  })
})
