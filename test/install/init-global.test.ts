import {expect} from 'chai'
import {copyFileSync, mkdirSync, readFileSync, readdirSync} from 'node:fs'
import {join} from 'node:path'

import {appEnv, installScratch, localSqlitePrebuilds, ROOT, runProcess} from '../helpers/cli.js'
import {startSdkRegistry} from '../helpers/sdk-registry.js'

/**
 * A user's path: payapp installed globally (`npm install -g` of the packed tarball, into a temp prefix),
 * `payapp init`, then `npm install` of the generated app offline. payapp is not on npm, so the app must
 * get the installed payapp and its SDK, packed into its vendor/, rather than ask the registry for `payapp@^0.1.0` (E404).
 */
describe('payapp init from a globally installed payapp', function () {
  this.timeout(300_000)
  const scratch = installScratch('payapp-global-')

  it('packs, installs globally, generates an app that installs offline and passes its tests', async () => {
    const tmp = scratch()
    const env = appEnv(tmp)

    // npm test has built dist/ already: pack it as it is.
    const pack = await runProcess('npm', ['pack', '--ignore-scripts', '--pack-destination', tmp], ROOT, env)
    expect(pack.code, pack.output).to.equal(0)
    const packSdk = await runProcess('npm', ['pack', '--ignore-scripts', '--pack-destination', tmp, '-w', '@payapp/sdk'], ROOT, env)
    expect(packSdk.code, packSdk.output).to.equal(0)
    const tarball = join(tmp, readdirSync(tmp).find((f) => /^payapp-\d.*\.tgz$/.test(f))!)
    // payapp depends on @payapp/sdk, which users get from npm: a registry for the @payapp scope serves the packed one.
    const registry = await startSdkRegistry(join(tmp, readdirSync(tmp).find((f) => /^payapp-sdk-.*\.tgz$/.test(f))!))

    // payapp's own dependencies come from npm's cache where it has them (--prefer-offline). Install scripts
    // are skipped and SQLite's native module is copied from this checkout (same version, same Node) instead
    // of compiled again, which would take minutes on CI.
    const prefix = join(tmp, 'prefix')
    const global = await runProcess('npm', ['install', '-g', tarball, '--prefix', prefix, `--@payapp:registry=${registry.url}`, '--prefer-offline', '--ignore-scripts', '--omit=optional', '--no-audit', '--no-fund'], tmp, env)
    await registry.close()
    expect(global.code, global.output).to.equal(0)
    const installed = join(prefix, 'lib', 'node_modules', 'payapp')
    const native = join('node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node')
    mkdirSync(join(installed, native, '..'), {recursive: true})
    copyFileSync(join(ROOT, native), join(installed, native))

    const bin = join(prefix, 'bin', 'payapp')
    const dir = join(tmp, 'global-app')
    const init = await runProcess(bin, ['init', 'global-app', '--template', 'minimal', '--dir', dir, '--json'], tmp, env)
    expect(init.code, init.output).to.equal(0)
    const version = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')).version
    expect(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).dependencies).to.deep.equal({'@payapp/sdk': `file:vendor/payapp-sdk-${version}.tgz`, payapp: `file:vendor/payapp-${version}.tgz`})

    // What the user types: no --ignore-scripts, and --offline proves nothing is asked of the registry
    // (better-sqlite3's binary from this checkout's build, as a user downloads the prebuilt one).
    const install = await runProcess('npm', ['install', '--offline', '--no-audit', '--no-fund'], dir, {...env, npm_config_better_sqlite3_local_prebuilds: localSqlitePrebuilds(tmp)})
    expect(install.code, install.output).to.equal(0)
    expect(install.output).not.to.include('E404')

    const test = await runProcess('npm', ['test'], dir, env)
    expect(test.code, test.output).to.equal(0)
    expect(test.output).to.match(/# pass 2/)
  })
})
