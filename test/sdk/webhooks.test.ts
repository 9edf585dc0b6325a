import {expect} from 'chai'
import {createHmac} from 'node:crypto'

import {SignatureVerificationError} from '../../src/sdk/errors.js'
import {computeSignature, signWebhookPayload, verifyWebhook} from '../../src/sdk/webhooks.js'

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
})
