import {expect} from 'chai'
import {build} from 'esbuild'
import {mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'

import {applyPatch, PATCHES, patchDependencies, type Patch} from '../../scripts/dependency-patches.js'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))

/** The installed copy of a patched package (npm hoists them all to the top). */
const installed = (name: string) => join(ROOT, 'node_modules', name)

describe('patches of dependencies (scripts/dependency-patches.js)', () => {
  it("each patched package is pinned in package.json to the `~` range its patch was written against", () => {
    for (const patch of PATCHES) {
      expect(patch.version, patch.name).to.match(/^~\d+\.\d+\.\d+$/)
      const pin = pkg.dependencies?.[patch.package] ?? pkg.overrides?.[patch.package]
      expect(pin, `${patch.name}: package.json's pin of ${patch.package} (dependencies, or overrides if transitive)`).to.equal(patch.version)
    }
  })

  it('each patch applies to the installed dependency, every replacement exactly as often as it says', () => {
    for (const patch of PATCHES) {
      const source = readFileSync(join(installed(patch.package), patch.file), 'utf8')
      const patched = applyPatch(patch, source)
      expect(patched, patch.name).not.to.equal(source)
    }
  })

  const patch: Patch = {
    name: 'two-edits',
    bundle: 'cli',
    package: 'fake-dep',
    version: '~1.2.0',
    file: 'lib/index.js',
    why: 'test',
    replacements: [
      {find: 'const a = 1', replace: 'const a = 2'},
      {find: /let (b) = 1/, replace: 'let $1 = 2'},
    ],
  }

  it('applies every replacement of a patch', () => {
    expect(applyPatch(patch, 'const a = 1\nlet b = 1\n')).to.equal('const a = 2\nlet b = 2\n')
  })

  it('refuses a patch that would half-apply: one replacement missing fails the whole patch', () => {
    expect(() => applyPatch(patch, 'const a = 1\nlet b = 3\n')).to.throw(/patch two-edits of fake-dep no longer applies[\s\S]*replacement 2 found 0×/)
  })

  it('refuses a replacement whose text occurs more often than it says', () => {
    expect(() => applyPatch(patch, 'const a = 1\nconst a = 1\nlet b = 1\n')).to.throw(/replacement 1 found 2× \(expected 1×\)/)
    expect(applyPatch({...patch, replacements: [{find: 'x', replace: 'y', count: 2}]}, 'x x')).to.equal('y y')
  })

  describe('in a build', function () {
    this.timeout(20_000)
    let dir: string
    const bundle = (version: string, source: string, entry = "require('fake-dep/lib/index.js')") => {
      rmSync(dir, {recursive: true, force: true})
      mkdirSync(join(dir, 'node_modules', 'fake-dep', 'lib'), {recursive: true})
      writeFileSync(join(dir, 'node_modules', 'fake-dep', 'package.json'), JSON.stringify({name: 'fake-dep', version}))
      writeFileSync(join(dir, 'node_modules', 'fake-dep', 'lib', 'index.js'), source)
      writeFileSync(join(dir, 'node_modules', 'fake-dep', 'lib', 'other.js'), 'module.exports = 0\n')
      return build({stdin: {contents: entry, resolveDir: dir}, bundle: true, write: false, platform: 'node', logLevel: 'silent', plugins: [patchDependencies('cli', [patch])]})
    }
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'payapp-patch-'))
    })
    afterEach(() => rmSync(dir, {recursive: true, force: true}))

    it('bundles the patched text', async () => {
      const result = await bundle('1.2.7', 'const a = 1\nlet b = 1\nmodule.exports = a + b\n')
      expect(result.outputFiles[0]!.text).to.match(/a = 2/).and.match(/b = 2/).and.not.match(/= 1/)
    })

    it('fails the build when a replacement no longer matches', async () => {
      const error = await bundle('1.2.7', 'const a = 1\nlet b = 9\n').then(() => undefined, (e: Error) => e)
      expect(error?.message).to.match(/patch two-edits of fake-dep no longer applies/)
    })

    it('fails the build when the installed version is outside the range the patch was written for', async () => {
      const error = await bundle('1.3.0', 'const a = 1\nlet b = 1\n').then(() => undefined, (e: Error) => e)
      expect(error?.message).to.match(/written for fake-dep@~1\.2\.0, installed is 1\.3\.0/)
    })

    it('fails the build when the patched file is no longer bundled', async () => {
      const error = await bundle('1.2.7', 'const a = 1\nlet b = 1\n', "require('fake-dep/lib/other.js')").then(() => undefined, (e: Error) => e)
      expect(error?.message).to.match(/patch two-edits: fake-dep\/lib\/index\.js was not in the bundle/)
    })
  })
})
