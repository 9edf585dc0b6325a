import {expect} from 'chai'
import {spawn} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, resolve} from 'node:path'

import {ROOT, runCli} from '../helpers/cli.js'

const FILES = ['.gitignore', 'README.md', 'package.json', 'src/app.js', 'src/server.js', 'test/app.test.js']

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{code: number; output: string}> {
  return new Promise((done, fail) => {
    const child = spawn(cmd, args, {cwd, env, stdio: ['ignore', 'pipe', 'pipe']})
    let output = ''
    child.stdout.on('data', (d) => (output += d))
    child.stderr.on('data', (d) => (output += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000)
    child.on('error', fail)
    child.on('close', (code) => {
      clearTimeout(timer)
      done({code: code ?? -1, output})
    })
  })
}

describe('payapp init', () => {
  let tmp: string

  before(() => {
    tmp = mkdtempSync(join(tmpdir(), 'payapp-init-'))
  })
  after(() => rmSync(tmp, {recursive: true, force: true}))

  it('--json: writes the template and prints name, dir, template, files and next steps', async () => {
    const dir = join(tmp, 'my-shop-app')
    const res = await runCli(['init', 'my-shop-app', '--dir', dir, '--json'])
    expect(res.code, res.stderr).to.equal(0)
    expect(res.stderr).to.equal('')
    expect(res.json()).to.deep.equal({
      name: 'my-shop-app',
      dir,
      template: 'app',
      files: FILES,
      next_steps: [`cd ${dir}`, 'npm install', 'npm test'],
    })
    for (const file of FILES) expect(existsSync(join(dir, file)), file).to.equal(true)

    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
    expect(pkg).to.include({name: 'my-shop-app', type: 'module'})
    expect(pkg.scripts).to.include({test: 'node --test'})
    // A dev checkout is linked, so the app installs offline against the code under test.
    expect(pkg.dependencies).to.deep.equal({payapp: `file:${resolve(ROOT)}`})

    // Non-.hbs files are copied byte for byte; .hbs ones are rendered with nothing left unreplaced.
    expect(readFileSync(join(dir, 'src/app.js'))).to.deep.equal(readFileSync(join(ROOT, 'templates/app/src/app.js')))
    const readme = readFileSync(join(dir, 'README.md'), 'utf8')
    expect(readme).to.match(/^# my-shop-app\n/)
    expect(readme).not.to.include('{{')
  })

  it('human output: the files written and the next steps', async () => {
    const dir = join(tmp, 'human')
    const res = await runCli(['init', 'human-app', '--dir', dir])
    expect(res.code, res.stderr).to.equal(0)
    expect(res.stdout).to.equal(
      [
        `Created human-app in ${dir} (template app):`,
        ...FILES.map((f) => `  ${f}`),
        '',
        'Next steps:',
        `  cd ${dir} && npm install && npm test`,
        'Then run it against a local gateway: see README.md ("payapp gateway start --seed").',
        '',
      ].join('\n'),
    )
  })

  it('without NAME and without a TTY: exit 2 naming the argument, no prompt', async () => {
    const res = await runCli(['init', '--dir', join(tmp, 'unnamed')])
    expect(res.code).to.equal(2)
    expect(res.stderr).to.include('Missing NAME argument')
    expect(existsSync(join(tmp, 'unnamed'))).to.equal(false)

    const json = await runCli(['init', '--json'])
    expect(json.code).to.equal(2)
    expect(json.json().error).to.include({type: 'usage_error', param: 'NAME'})
  })

  it('refuses a non-empty directory (exit 6) unless --force', async () => {
    const dir = join(tmp, 'occupied')
    mkdirSync(dir)
    writeFileSync(join(dir, 'keep.txt'), 'mine')

    const res = await runCli(['init', 'occupied', '--dir', dir])
    expect(res.code).to.equal(6)
    expect(res.stderr).to.equal(`Error: ${dir} is not empty: choose another --dir, or pass --force to write the template's files into it\n`)
    expect(readdirSync(dir)).to.deep.equal(['keep.txt'])

    const json = await runCli(['init', 'occupied', '--dir', dir, '--json'])
    expect(json.code).to.equal(6)
    expect(json.json().error).to.include({code: 'directory_not_empty', param: '--dir'})

    const forced = await runCli(['init', 'occupied', '--dir', dir, '--force', '--json'])
    expect(forced.code, forced.stderr).to.equal(0)
    expect(readFileSync(join(dir, 'keep.txt'), 'utf8')).to.equal('mine')
    expect(existsSync(join(dir, 'package.json'))).to.equal(true)
  })

  it('rejects an invalid app name (exit 2) and writes nothing', async () => {
    for (const name of ['My-App', 'my app', '.app', 'payapp', '@scope']) {
      const res = await runCli(['init', name, '--dir', join(tmp, 'invalid'), '--json'])
      expect(res.code, name).to.equal(2)
      const {error} = res.json()
      expect(error.param, name).to.equal('NAME')
      expect(error.message, name).to.include(`Invalid app name "${name}"`)
    }
    expect(existsSync(join(tmp, 'invalid'))).to.equal(false)
  })

  it('rejects an unknown template (exit 2), listing the available ones', async () => {
    const res = await runCli(['init', 'x-app', '--template', 'nope', '--dir', join(tmp, 'x-app')])
    expect(res.code).to.equal(2)
    expect(res.stderr).to.equal('Error: Unknown template "nope"; available: app\n')
  })

  it("the scaffolded app installs offline and its own tests pass against a real gateway", async function () {
    this.timeout(180_000)
    if (!existsSync(join(ROOT, 'dist', 'sdk', 'index.js'))) throw new Error('dist/ is not built: run npx tsc -p tsconfig.json && npx oclif manifest')
    const dir = join(tmp, 'e2e-app')
    const init = await runCli(['init', 'e2e-app', '--dir', dir, '--json'])
    expect(init.code, init.stderr).to.equal(0)

    // A private config dir: the app's tests run the CLI, which must not touch the developer's profiles.
    const env: NodeJS.ProcessEnv = {...process.env, XDG_CONFIG_HOME: join(tmp, 'config'), XDG_DATA_HOME: join(tmp, 'data'), PAYAPP_KEYCHAIN: 'off', NO_COLOR: '1'}
    for (const key of Object.keys(env)) if (key.startsWith('PAYAPP_') && key !== 'PAYAPP_KEYCHAIN') delete env[key]

    // --ignore-scripts: npm runs a file: link's `prepare`, which would rebuild this checkout mid-test.
    const install = await run('npm', ['install', '--no-audit', '--no-fund', '--offline', '--ignore-scripts'], dir, env)
    expect(install.code, install.output).to.equal(0)
    expect(existsSync(join(dir, 'node_modules', 'payapp', 'package.json'))).to.equal(true)

    const test = await run('npm', ['test'], dir, env)
    expect(test.code, test.output).to.equal(0)
    expect(test.output).to.match(/pass [1-9]/)
    expect(test.output).to.match(/fail 0/)
  })
})
