import {expect} from 'chai'

import {expectError, TestGateway, type HttpResult} from '../helpers/gateway.js'

const monthly = {amount: 1900, currency: 'eur', interval: 'month'}

/** Runs `count` calls, `size` at a time, and returns every response. */
async function batches(count: number, call: () => Promise<HttpResult>, size = 50): Promise<HttpResult[]> {
  const out: HttpResult[] = []
  for (let done = 0; done < count; done += size) {
    out.push(...(await Promise.all(Array.from({length: Math.min(size, count - done)}, call))))
  }
  return out
}

describe('gateway rate limits (per credential, fixed one-minute windows)', () => {
  let gw: TestGateway
  before(async () => {
    gw = await TestGateway.start({rateLimit: true})
  })
  after(() => gw.close())

  const clock = async () => (await gw.admin('GET', '/clock')).body.now as number

  beforeEach(async () => {
    // Start each test at the first second of a window, so that a minute boundary cannot fall inside it.
    await gw.admin('POST', '/clock', {advance_seconds: 60 - ((await clock()) % 60)})
  })

  it('allows 300 reads a minute, then answers 429 rate_limited with Retry-After until the window ends', async () => {
    const acct = await gw.account('live')
    const reads = await batches(300, () => acct.app('GET', '/merchant'))
    expect(reads.map((r) => r.status)).to.deep.equal(Array(300).fill(200))

    const limited = await acct.app('GET', '/merchant')
    const err = expectError(limited, 429, 'rate_limited')
    expect(err.type).to.equal('rate_limit_error')
    const retryAfter = Number(limited.headers.get('retry-after'))
    const secondsLeft = 60 - ((await clock()) % 60)
    expect(retryAfter).to.be.within(Math.max(1, secondsLeft - 1), secondsLeft + 1)

    // Writes are their own bucket: the spent reads do not block them.
    expect((await acct.app('POST', '/subscription_links', {body: monthly})).status).to.equal(201)
  })

  it('allows 60 writes a minute; the 61st is 429', async () => {
    const acct = await gw.account('live')
    const writes = await batches(60, () => acct.app('POST', '/subscription_links', {body: monthly}))
    expect(writes.map((r) => r.status)).to.deep.equal(Array(60).fill(201))
    const limited = await acct.app('POST', '/subscription_links', {body: monthly})
    expectError(limited, 429, 'rate_limited')
    expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 60)
    expect((await acct.app('GET', '/subscription_links?limit=100')).body.data).to.have.length(60)
  })

  it('counts per credential: another token of the same merchant is unaffected', async () => {
    const acct = await gw.account('live')
    const second = await gw.installation(acct.merchant.id, 'live')
    await batches(301, () => acct.app('GET', '/merchant'))
    expectError(await acct.app('GET', '/merchant'), 429, 'rate_limited')
    expect((await gw.request('GET', '/v1/app/merchant', {token: second.token})).status).to.equal(200)
  })

  it('starts a fresh bucket in the next window', async () => {
    const acct = await gw.account('live')
    await batches(300, () => acct.app('GET', '/merchant'))
    await batches(60, () => acct.app('POST', '/subscription_links', {body: monthly}))
    expectError(await acct.app('GET', '/merchant'), 429, 'rate_limited')
    expectError(await acct.app('POST', '/subscription_links', {body: monthly}), 429, 'rate_limited')

    await gw.admin('POST', '/clock', {advance_seconds: 60})
    expect((await acct.app('GET', '/merchant')).status).to.equal(200)
    expect((await acct.app('POST', '/subscription_links', {body: monthly})).status).to.equal(201)
  })
})

describe('gateway rate limits: configured limits and X-RateLimit-* headers', () => {
  let gw: TestGateway
  before(async () => {
    gw = await TestGateway.start({rateLimit: true, rateLimits: {limits: {write: 3}}})
  })
  after(() => gw.close())

  it('sends Limit, Remaining and Reset for the request\'s bucket, and enforces the configured write limit', async () => {
    await gw.admin('POST', '/clock', {advance_seconds: 60 - ((await gw.admin('GET', '/clock')).body.now % 60)})
    const acct = await gw.account('test')
    const read = await acct.app('GET', '/products')
    expect(read.headers.get('x-ratelimit-limit')).to.equal('300')
    expect(read.headers.get('x-ratelimit-remaining')).to.equal('299')
    expect(Number(read.headers.get('x-ratelimit-reset'))).to.be.within(1, 60)

    const remaining: (string | null)[] = []
    for (let i = 0; i < 3; i++) remaining.push((await acct.app('POST', '/products', {body: {name: `P${i}`}})).headers.get('x-ratelimit-remaining'))
    expect(remaining).to.deep.equal(['2', '1', '0'])
    const limited = await acct.app('POST', '/products', {body: {name: 'one too many'}})
    expectError(limited, 429, 'rate_limited')
    expect(limited.headers.get('x-ratelimit-limit')).to.equal('3')
    expect(limited.headers.get('x-ratelimit-remaining')).to.equal('0')
    expect(limited.headers.get('x-ratelimit-reset')).to.equal(limited.headers.get('retry-after'))
  })

  it('sends no X-RateLimit headers when limits are off', async () => {
    const off = await TestGateway.start({rateLimit: false})
    try {
      const acct = await off.account('test')
      expect((await acct.app('GET', '/products')).headers.get('x-ratelimit-limit')).to.equal(null)
    } finally {
      await off.close()
    }
  })
})
