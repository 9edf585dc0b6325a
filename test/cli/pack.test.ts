import {execFileSync, spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, readdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {expect} from 'chai'

import {ROOT, tempHome} from '../helpers/cli.js'

// The CLI runs from a build-time bundle (dist/bundle) and its loader: a package without them would
// pass every other test (they run the work tree) and fail for every user.
describe('the packed CLI', () => {
  it('installs from `npm pack` into an empty project and answers --help and --version', function () {
    this.timeout(180_000)
    if (!existsSync(join(ROOT, 'dist', 'bundle', 'payapp.cjs'))) throw new Error('dist/ is not built: run npm run build')
    const home = tempHome()
    const npm = (args: string[], cwd: string) => execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], {cwd, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8'})
    // --ignore-scripts: pack what `npm run build` made (the test command builds first) instead of building again.
    npm(['pack', '--ignore-scripts', '--pack-destination', home], ROOT)
    const tarball = join(home, readdirSync(home).find((name) => name.endsWith('.tgz'))!)
    const project = join(home, 'project')
    mkdirSync(project)
    writeFileSync(join(project, 'package.json'), JSON.stringify({name: 'uses-payapp', version: '1.0.0', private: true}))
    // Offline from npm's cache (filled by the install of this repository); no native builds needed for these commands.
    npm(['install', '--offline', '--ignore-scripts', tarball], project)

    const bin = join(project, 'node_modules', 'payapp', 'bin', 'run.js')
    const env = {PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, 'config'), PAYAPP_KEYCHAIN: 'off', NO_COLOR: '1'}
    const help = spawnSync(process.execPath, [bin, '--help'], {cwd: project, env, encoding: 'utf8'})
    expect(help.status, help.stderr).to.equal(0)
    expect(help.stdout).to.include('USAGE').and.include('$ payapp [COMMAND]').and.include('products')
    const topic = spawnSync(process.execPath, [bin, 'products', 'list', '--help'], {cwd: project, env, encoding: 'utf8'})
    expect(topic.status, topic.stderr).to.equal(0)
    expect(topic.stdout).to.include('$ payapp products list')
    const version = spawnSync(process.execPath, [bin, '--version'], {cwd: project, env, encoding: 'utf8'})
    expect(version.stdout).to.match(/^payapp\/\d+\.\d+\.\d+ /)
  })
})
