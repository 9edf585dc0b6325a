/**
 * On a terminal a missing required flag is asked for instead of failing (issue 10, item 1). The CLI runs
 * under a real pseudo-terminal: util-linux's `script` (Debian's bsdutils, always installed) gives it one.
 */
import {spawn} from 'node:child_process'

import {expect} from 'chai'

import {BIN, ROOT, cliEnv, tempHome} from '../helpers/cli.js'
import {gatewayForSuite} from '../helpers/gateway.js'

interface Exchange {
  /** What the terminal shows before the answer is typed. */
  prompt: RegExp
  answer: string
}

/** Runs `payapp ARGS` on a pseudo-terminal, typing each answer once its prompt shows; resolves with everything the terminal showed and the exit code. */
function onTerminal(args: string[], env: Record<string, string>, exchanges: Exchange[]): Promise<{screen: string; code: number | null}> {
  const command = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ')
  const child = spawn('script', ['-qec', command, '/dev/null'], {cwd: ROOT, env: cliEnv(tempHome(), {TERM: 'dumb', ...env}), stdio: ['pipe', 'pipe', 'pipe']})
  let screen = ''
  let next = 0
  let answeredAt = 0
  child.stdout.on('data', (d) => {
    screen += d
    const pending = exchanges[next]
    // Only what appeared since the last answer can be the next prompt.
    if (pending && pending.prompt.test(screen.slice(answeredAt))) {
      next++
      answeredAt = screen.length
      child.stdin.write(pending.answer + '\r')
    }
  })
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      child.stdin.end()
      resolve({screen, code})
    })
  })
}

describe('prompts for a missing required flag on a terminal', function () {
  this.timeout(60_000)
  const suite = gatewayForSuite()

  it('products create without --name asks for the name and creates the product with the answer', async () => {
    const {screen, code} = await onTerminal(['products', 'create'], {PAYAPP_BASE_URL: suite.gw.url, PAYAPP_TOKEN: suite.acct.token}, [{prompt: /name: $/, answer: 'Prompted mug'}])
    expect(code, screen).to.equal(0)
    expect(screen).to.match(/^name: Prompted mug\r?\r\n/)
    // One write (the human output then reads the product's prices for their amounts).
    expect(suite.requests.filter((r) => !r.startsWith('GET '))).to.deep.equal(['POST /v1/app/products'])
    const named = (await suite.acct.app('GET', '/products?limit=100')).body.data.filter((p: {name: string}) => p.name === 'Prompted mug')
    expect(named).to.have.length(1)
    expect(screen).to.include(named[0].id)
  })

  it('sessions create asks for each flag a raw amount needs, in order, and sends the session', async () => {
    const {screen, code} = await onTerminal(['sessions', 'create', '--amount', '1999', '--currency', 'eur'], {PAYAPP_BASE_URL: suite.gw.url, PAYAPP_SECRET_KEY: suite.acct.secretKey}, [
      {prompt: /customer name: $/, answer: 'Ada Buyer'},
      {prompt: /customer email: $/, answer: 'ada@example.com'},
    ])
    expect(code, screen).to.equal(0)
    expect(suite.requests).to.deep.equal(['POST /v1/checkout/sessions'])
    const session = (await suite.acct.v1('GET', '/checkout/sessions?limit=1')).body.data[0]
    // The platform refuses a raw amount without customer name and e-mail: the answers were sent.
    expect(session).to.include({amount: 1999, status: 'open'})
    expect(screen).to.include(session.id)
  })

  it('an empty answer is still a missing flag: exit 2 naming it, nothing sent', async () => {
    const {screen, code} = await onTerminal(['products', 'create'], {PAYAPP_BASE_URL: suite.gw.url, PAYAPP_TOKEN: suite.acct.token}, [{prompt: /name: $/, answer: ''}])
    expect(code).to.equal(2)
    expect(screen).to.include('Missing --name')
    expect(suite.requests).to.deep.equal([])
  })
})
