import {captureOutput} from '@oclif/test'
import {expect} from 'chai'
import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {BaseCommand} from '../../src/cli/base-command.js'
import {ExitCode, exitCodeFor, missingCredentialError, usageError} from '../../src/cli/exit-codes.js'
import ProfilesUse from '../../src/commands/profiles/use.js'
import {ConnectionError, ResponseValidationError, SignatureVerificationError, errorFromResponse} from '@payapp/sdk/errors'

const root = fileURLToPath(new URL('../..', import.meta.url))
const apiError = (status: number, type?: string) =>
  errorFromResponse(status, {error: {type, code: 'some_code', message: 'Nope', request_id: 'req_123'}})

/** A command with a required input that may be prompted for. */
class NeedsTokenCommand extends BaseCommand<typeof NeedsTokenCommand> {
  static override id = 'needs-token'
  async run(): Promise<string> {
    return this.requireFlag('token', undefined, {envVar: 'PAYAPP_TOKEN', secret: true})
  }
}

/** A command that fails the way an API call would. */
class FailingCommand extends BaseCommand<typeof FailingCommand> {
  static override id = 'failing'
  async run(): Promise<void> {
    throw apiError(404, 'not_found')
  }
}

describe('exit codes', function () {
  it('maps each HTTP status family to its documented code', function () {
    const cases: Array<[number, number]> = [
      [400, 6], [401, 3], [402, 6], [403, 4], [404, 5], [405, 6], [409, 6], [410, 6], [413, 6], [422, 6], [429, 7], [500, 7], [502, 7], [503, 7],
    ]
    for (const [status, code] of cases) expect(exitCodeFor(apiError(status)), `HTTP ${status}`).to.equal(code)
    expect(exitCodeFor(apiError(409, 'idempotency_error'))).to.equal(ExitCode.CONFLICT)
    expect(exitCodeFor(apiError(503, 'rate_limit_error'))).to.equal(ExitCode.UNAVAILABLE)
  })

  it('maps failures without a response', function () {
    expect(exitCodeFor(new ConnectionError({message: 'ECONNREFUSED'}))).to.equal(7)
    expect(exitCodeFor(Object.assign(new Error('connect ECONNREFUSED'), {code: 'ECONNREFUSED'}))).to.equal(7)
    expect(exitCodeFor(new SignatureVerificationError({message: 'bad signature'}))).to.equal(6)
    expect(exitCodeFor(new ResponseValidationError({message: 'bad shape'}))).to.equal(1)
  })

  it('maps CLI errors: usage 2, missing credential 3, anything else 1', function () {
    expect(exitCodeFor(usageError('Missing --token'))).to.equal(2)
    expect(exitCodeFor(missingCredentialError('No test installation token'))).to.equal(3)
    expect(exitCodeFor(Object.assign(new Error('Unexpected argument: x'), {oclif: {exit: 2}}))).to.equal(2)
    expect(exitCodeFor(new TypeError('x is undefined'))).to.equal(1)
    expect(exitCodeFor('a string')).to.equal(1)
  })

  describe('what a user sees when a command fails', function () {
    let xdg: string | undefined
    let dir: string
    beforeEach(async function () {
      xdg = process.env.XDG_CONFIG_HOME
      dir = await mkdtemp(join(tmpdir(), 'payapp-exit-'))
      process.env.XDG_CONFIG_HOME = dir
    })
    afterEach(async function () {
      if (xdg === undefined) delete process.env.XDG_CONFIG_HOME
      else process.env.XDG_CONFIG_HOME = xdg
      await rm(dir, {recursive: true, force: true})
    })

    it('prints "code: message (request_id)" on stderr, nothing on stdout, and exits with the mapped code', async function () {
      const {stdout, stderr, error} = await captureOutput(() => FailingCommand.run([], root))
      expect(error?.oclif?.exit).to.equal(ExitCode.NOT_FOUND)
      expect(stderr).to.equal('some_code: Nope (req_123)\n')
      expect(stdout).to.equal('')
    })

    it('under --json prints only the error envelope on stdout', async function () {
      const {stdout, stderr, error} = await captureOutput(() => FailingCommand.run(['--json'], root))
      expect(error?.oclif?.exit).to.equal(ExitCode.NOT_FOUND)
      expect(JSON.parse(stdout)).to.deep.equal({
        error: {type: 'not_found', code: 'some_code', param: null, message: 'Nope', request_id: 'req_123', status: 404},
      })
      expect(stderr).to.equal('')
    })

    it('shows the stack trace only with --verbose', async function () {
      const {stderr} = await captureOutput(() => FailingCommand.run(['--verbose'], root))
      expect(stderr).to.match(/^some_code: Nope \(req_123\)\n.*NotFoundError/s)
    })

    it('never prompts without a terminal: fails at once with exit 2 naming the flag', async function () {
      const wasTTY = process.stdin.isTTY
      process.stdin.isTTY = false
      try {
        const {stderr, error} = await captureOutput(() => NeedsTokenCommand.run([], root))
        expect(error?.oclif?.exit).to.equal(ExitCode.USAGE)
        expect(stderr).to.contain('Missing --token or set PAYAPP_TOKEN (not prompting: stdin is not a terminal)')
      } finally {
        process.stdin.isTTY = wasTTY
      }
    })

    it('exits 2 with the message for a bad flag value or argument', async function () {
      const badFlag = await captureOutput(() => ProfilesUse.run(['default', '--env', 'prod'], root))
      expect(badFlag.error?.oclif?.exit).to.equal(ExitCode.USAGE)
      expect(badFlag.stderr).to.contain('Expected --env=prod to be one of: live, test')

      const unknownProfile = await captureOutput(() => ProfilesUse.run(['nope', '--json'], root))
      expect(unknownProfile.error?.oclif?.exit).to.equal(ExitCode.USAGE)
      expect(JSON.parse(unknownProfile.stdout).error).to.include({type: 'usage_error', param: 'NAME'})
    })
  })
})
