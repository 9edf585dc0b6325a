import {expect} from 'chai'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, resolve} from 'node:path'

import {appEnv, ROOT, runCli, runProcess} from '../helpers/cli.js'

const VERSION = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version
const SDK_VERSION = JSON.parse(readFileSync(join(ROOT, 'packages', 'sdk', 'package.json'), 'utf8')).version
// payapp and its SDK, packed into the app: nothing is on the npm registry yet.
const VENDOR = [`vendor/payapp-${VERSION}.tgz`, `vendor/payapp-sdk-${SDK_VERSION}.tgz`]
const VENDORED = {'@payapp/sdk': `file:vendor/payapp-sdk-${SDK_VERSION}.tgz`, payapp: `file:vendor/payapp-${VERSION}.tgz`}
const FILES = ['.env.example', '.gitignore', 'README.md', 'package.json', 'src/app.ts', 'src/handlers.ts', 'src/inbox.ts', 'src/server.ts', 'test/app.test.ts', 'tsconfig.json']
const MINIMAL_FILES = ['.env.example', '.gitignore', 'README.md', 'package.json', 'src/catalogue.js', 'src/index.js', 'test/catalogue.test.js']
const CATALOG_FILES = ['.env.example', '.github/workflows/catalog.yml', '.gitignore', 'README.md', 'catalog.yaml', 'package.json', 'test/catalog.test.js']

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
      template: 'webhook-app',
      files: [...FILES, ...VENDOR].sort(),
      dry_run: false,
      next_steps: [`cd ${dir}`, 'npm install', 'npm test'],
    })
    for (const file of [...FILES, ...VENDOR]) expect(existsSync(join(dir, file)), file).to.equal(true)

    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
    expect(pkg).to.include({name: 'my-shop-app', type: 'module'})
    expect(pkg.scripts.test).to.equal('tsc -p . && node --test dist/test/')
    // The tarballs in vendor/, relative: the app installs wherever it is copied, a CI runner included.
    expect(pkg.dependencies).to.deep.equal(VENDORED)

    // Non-.hbs files are copied byte for byte; .hbs ones are rendered with nothing left unreplaced.
    expect(readFileSync(join(dir, 'src/app.ts'))).to.deep.equal(readFileSync(join(ROOT, 'templates/webhook-app/src/app.ts')))
    // .env.example carries placeholders only, never a real credential.
    const envExample = readFileSync(join(dir, '.env.example'), 'utf8')
    expect(envExample).to.include('PAYAPP_TOKEN=app_test_replace_me')
    expect(envExample).not.to.match(/(app|sk)_(test|live)_[A-Za-z0-9]{20,}|whsec_[A-Za-z0-9]{20,}/)
    const readme = readFileSync(join(dir, 'README.md'), 'utf8')
    expect(readme).to.match(/^# my-shop-app\n/)
    expect(readme).not.to.include('{{')
    expect(readme).to.include('`vendor/` holds payapp and its SDK as the tarballs this app installs')
  })

  it('human output: the files written and the next steps', async () => {
    const dir = join(tmp, 'human')
    const res = await runCli(['init', 'human-app', '--dir', dir])
    expect(res.code, res.stderr).to.equal(0)
    expect(res.stdout).to.equal(
      [
        `Created human-app in ${dir} (template webhook-app):`,
        ...[...FILES, ...VENDOR].sort().map((f) => `  ${f}`),
        '',
        'Next steps:',
        `  cd ${dir} && npm install && npm test`,
        'Then run it against a local gateway: see README.md (payapp gateway start, payapp listen, payapp trigger).',
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

    // --sdk-version: nothing to pack (the tests above pack), so --force is all this run is about.
    const forced = await runCli(['init', 'occupied', '--dir', dir, '--force', '--sdk-version', '^0.1.0', '--json'])
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
    expect(res.stderr).to.equal('Error: Unknown template "nope"; available: catalog-sync, minimal, webhook-app, or a folder (./path)\n')
  })

  it('--dry-run lists the files and writes nothing', async () => {
    const dir = join(tmp, 'dry')
    const res = await runCli(['init', 'dry-app', '--template', 'minimal', '--dir', dir, '--dry-run', '--json'])
    expect(res.code, res.stderr).to.equal(0)
    expect(res.json()).to.include({dry_run: true, template: 'minimal'})
    expect(res.json().files).to.deep.equal([...MINIMAL_FILES, ...VENDOR].sort())
    expect(existsSync(dir)).to.equal(false)
    const human = await runCli(['init', 'dry-app', '--dir', dir, '--dry-run'])
    expect(human.stdout.split('\n')[0]).to.equal(`Would create dry-app in ${dir} (template webhook-app; --dry-run, nothing written):`)
    expect(existsSync(dir)).to.equal(false)
  })

  it('--template ./folder renders a local folder of .hbs files; a missing folder is exit 2', async () => {
    const source = join(tmp, 'my-template')
    mkdirSync(join(source, 'src'), {recursive: true})
    mkdirSync(join(source, 'node_modules', 'left-over'), {recursive: true})
    writeFileSync(join(source, 'package.json.hbs'), '{"name": "{{name}}", "dependencies": {"payapp": {{json payappDependency}} } }\n')
    writeFileSync(join(source, 'src', '__name__.js'), 'export const answer = 42\n')
    writeFileSync(join(source, 'node_modules', 'left-over', 'index.js'), '')
    const dir = join(tmp, 'from-folder')
    const res = await runCli(['init', 'folder-app', '--template', source, '--dir', dir, '--json'])
    expect(res.code, res.stderr).to.equal(0)
    expect(res.json().files).to.deep.equal(['package.json', 'src/folder-app.js', ...VENDOR])
    expect(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))).to.deep.equal({name: 'folder-app', dependencies: {payapp: VENDORED.payapp}})

    const missing = await runCli(['init', 'x-app', '--template', './no-such-folder', '--dir', join(tmp, 'x2'), '--json'])
    expect(missing.code).to.equal(2)
    expect(missing.json().error).to.include({param: '--template'})
  })

  it('a failed npm pack (no npm on PATH) exits 1 naming pack_failed and the flags that need no packing, and writes nothing', async () => {
    const dir = join(tmp, 'no-npm')
    const res = await runCli(['init', 'no-npm-app', '--template', 'minimal', '--dir', dir, '--json'], {env: {PATH: join(tmp, 'no-such-bin')}})
    expect(res.code).to.equal(1)
    expect(res.json().error).to.include({code: 'pack_failed'})
    expect(res.json().error.message).to.include('--sdk-version or --sdk-path')
    expect(existsSync(dir)).to.equal(false)
  })

  it('--sdk-version depends on a registry version, --sdk-path links another copy', async () => {
    const v = await runCli(['init', 'v-app', '--template', 'minimal', '--dir', join(tmp, 'v-app'), '--sdk-version', '^0.2.0', '--json'])
    expect(v.code, v.stderr).to.equal(0)
    expect(JSON.parse(readFileSync(join(tmp, 'v-app', 'package.json'), 'utf8')).dependencies).to.deep.equal({payapp: '^0.2.0'})
    expect(readFileSync(join(tmp, 'v-app', 'README.md'), 'utf8')).not.to.include('vendor/')
    expect(existsSync(join(tmp, 'v-app', 'vendor'))).to.equal(false)
    const p = await runCli(['init', 'p-app', '--template', 'minimal', '--dir', join(tmp, 'p-app'), '--sdk-path', tmp, '--json'])
    expect(p.code, p.stderr).to.equal(0)
    expect(JSON.parse(readFileSync(join(tmp, 'p-app', 'package.json'), 'utf8')).dependencies).to.deep.equal({payapp: `file:${resolve(tmp)}`})
    const both = await runCli(['init', 'b-app', '--dir', join(tmp, 'b-app'), '--sdk-path', tmp, '--sdk-version', '1.0.0', '--json'])
    expect(both.code).to.equal(2)
  })

  for (const [template, files] of [['webhook-app', FILES], ['minimal', MINIMAL_FILES], ['catalog-sync', CATALOG_FILES]] as const) {
    it(`the ${template} template installs and its own tests pass against a real gateway`, async function () {
      this.timeout(240_000)
      if (!existsSync(join(ROOT, 'dist', 'testing', 'index.js'))) throw new Error('dist/ is not built: run npm run build')
      const dir = join(tmp, `e2e-${template}`)
      // --sdk-path links this checkout (fast: nothing to install for payapp); the vendored default is the scratch test below.
      const init = await runCli(['init', `e2e-${template}`, '--template', template, '--dir', dir, '--sdk-path', ROOT, '--json'])
      expect(init.code, init.stderr).to.equal(0)
      expect(init.json().files).to.deep.equal(files)

      // As a user runs it, scripts included: npm runs a linked package's `prepare`, whose build starts with
      // `rm -rf dist`; payapp's builds only in its own checkout's install, so the linked one is left as it is.
      // --prefer-offline: the TypeScript template's dev tools come from npm's cache when it has them.
      const built = statSync(join(ROOT, 'dist', 'bundle', 'payapp.cjs')).mtimeMs
      const install = await runProcess('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], dir, appEnv(tmp))
      expect(install.code, install.output).to.equal(0)
      expect(existsSync(join(dir, 'node_modules', 'payapp', 'package.json'))).to.equal(true)
      expect(statSync(join(ROOT, 'dist', 'bundle', 'payapp.cjs')).mtimeMs, 'payapp was rebuilt by the app\'s npm install').to.equal(built)

      const test = await runProcess('npm', ['test'], dir, appEnv(tmp))
      expect(test.code, test.output).to.equal(0)
      expect(test.output).to.match(/# pass [1-9]/)
      expect(test.output).to.match(/# fail 0/)
    })
  }

})
