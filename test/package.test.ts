import {execFileSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {expect} from 'chai'
import semver from 'semver'

import {ROOT} from './helpers/cli.js'

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))

describe('the published package', () => {
  it('ships run.js, dist, templates, the manifest and LICENSE, never bin/dev.js', function () {
    this.timeout(60_000)
    const [packed] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore']}))
    const files: string[] = packed.files.map((f: {path: string}) => f.path)
    expect(files).to.include.members(['bin/run.js', 'bin/package.json', 'LICENSE', 'package.json', 'oclif.manifest.json', 'dist/sdk/index.js', 'dist/sdk/index.d.ts'])
    expect(files).not.to.include('bin/dev.js')
    expect(files.filter((f) => f.startsWith('src/') || f.startsWith('test/'))).to.deep.equal([])
    expect(readFileSync(join(ROOT, 'LICENSE'), 'utf8')).to.match(/^MIT License/)
    expect(pkg.license).to.equal('MIT')
    for (const field of ['repository', 'homepage', 'bugs']) expect(pkg[field], field).to.not.equal(undefined)
  })

  it('claims in engines no Node older than every production dependency accepts', function () {
    this.timeout(60_000)
    const oldest = semver.minVersion(pkg.engines.node)!
    // Every installed production package, one directory a line (the first line is this package).
    const dirs = execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], {cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore']})
      .trim()
      .split('\n')
      .slice(1)
    const seen = new Set(dirs)
    const refusing: string[] = []
    for (const dir of seen) {
      const dep = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
      const range = dep.engines?.node
      if (range && !semver.satisfies(oldest, range)) refusing.push(`${dep.name}@${dep.version} wants node ${range}`)
    }
    expect(seen.size).to.be.above(50)
    expect(refusing, `engines.node ${pkg.engines.node}`).to.deep.equal([])
  })

  it('loads payapp/sdk with require() as well as import, and payapp/sdk/webhooks alone', () => {
    const required = execFileSync(process.execPath, ['-e', "const s = require('payapp/sdk'); console.log([typeof s.AppClient, typeof s.verifyWebhookAsync].join())"], {cwd: ROOT, encoding: 'utf8'})
    expect(required.trim()).to.equal('function,function')
    const edge = execFileSync(process.execPath, ['-e', "console.log(Object.keys(require('payapp/sdk/webhooks')).sort().join())"], {cwd: ROOT, encoding: 'utf8'})
    expect(edge.trim()).to.equal('DEFAULT_TOLERANCE_SECONDS,PayappError,SIGNATURE_HEADER,SignatureVerificationError,verifyWebhookAsync')
  })
})
