import {expect} from 'chai'
import {cpSync, mkdirSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {appEnv, installScratch, localSqlitePrebuilds, pendingInstallScripts, ROOT, runCli, runProcess} from '../helpers/cli.js'

/**
 * What a CI runner gets: an app made by `payapp init` (default: payapp and its SDK packed into vendor/), copied
 * alone to another folder, with no path back to the payapp that made it, then `npm install` and `npm test` as the
 * template's workflow runs them. Slow (a full install of payapp's dependencies from npm's cache): about a minute.
 */
describe('payapp init: the app installs and passes its tests away from the machine that scaffolded it', function () {
  this.timeout(300_000)
  const scratch = installScratch('payapp-vendored-')

  it('catalog-sync: scaffold, copy the app alone, install as its workflow does, npm test', async function () {
    const tmp = scratch()
    const made = join(tmp, 'made')
    const init = await runCli(['init', 'shop-catalog', '--template', 'catalog-sync', '--dir', made, '--json'])
    expect(init.code, init.stderr).to.equal(0)
    const pkgText = readFileSync(join(made, 'package.json'), 'utf8')
    expect(pkgText, 'the app must not name a folder of this machine').not.to.include(ROOT).and.not.include(tmpdir())

    const runner = join(tmp, 'runner', 'shop-catalog')
    mkdirSync(join(runner, '..'), {recursive: true})
    cpSync(made, runner, {recursive: true})
    rmSync(made, {recursive: true, force: true})

    // The workflow's install step, as written in the generated workflow.
    const workflow = readFileSync(join(runner, '.github', 'workflows', 'catalog.yml'), 'utf8')
    const step = /- run: (.*npm (?:ci|install).*)\n/.exec(workflow)
    expect(step, workflow).to.not.equal(null)

    // better-sqlite3's prebuilt binary is downloaded on a runner; offline, this checkout's build of the same
    // version stands in for it (prebuild-install's local-prebuilds folder), so nothing compiles for minutes.
    const env = {...appEnv(tmp), npm_config_better_sqlite3_local_prebuilds: localSqlitePrebuilds(tmp), npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false'}

    const install = await runProcess('bash', ['-c', step![1]!], runner, env)
    expect(install.code, install.output).to.equal(0)
    expect(install.output).not.to.include('E404')
    const installed = JSON.parse(readFileSync(join(runner, 'node_modules', 'payapp', 'package.json'), 'utf8'))
    expect(installed.version).to.equal(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version)

    const test = await runProcess('npm', ['test'], runner, env)
    expect(test.code, test.output).to.equal(0)
    expect(test.output).to.match(/# pass [1-9]/)
    expect(test.output).to.match(/# fail 0/)
    // Last (an npm without the policy skips this check): the app's allowScripts covers its tree's install scripts, so
    // an npm that enforces it (12) still builds better-sqlite3.
    expect(await pendingInstallScripts(this, runner, env)).to.deep.equal([])
  })
})
