/**
 * docs/testing.md, "Testing your webhook handler like production": the section's code blocks are one
 * node:test file; joined in order and run as a user would run them, against the built package.
 */
import {execFile} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'
import {promisify} from 'node:util'

import {expect} from 'chai'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const SECTION = '## Testing your webhook handler like production'

/** The ```js blocks of the section, in order. */
export function sectionBlocks(markdown: string): string[] {
  const start = markdown.indexOf(SECTION)
  if (start < 0) throw new Error(`docs/testing.md has no "${SECTION}"`)
  const rest = markdown.slice(start + SECTION.length)
  const end = rest.search(/^## /m)
  const text = end < 0 ? rest : rest.slice(0, end)
  return [...text.matchAll(/^```js fragment\n([\s\S]*?)^```$/gm)].map((m) => m[1])
}

describe('docs/testing.md: testing a webhook handler like production', function () {
  this.timeout(60_000)
  before(function () {
    // `npm test` builds first; a bare mocha run without a build has nothing to import.
    if (!existsSync(join(ROOT, 'dist/testing/index.js'))) this.skip()
  })

  it('runs every example (one test per fault) and each passes', async () => {
    const blocks = sectionBlocks(readFileSync(join(ROOT, 'docs/testing.md'), 'utf8'))
    const tests = blocks.filter((b) => /^test\(/m.test(b)).length
    expect(tests).to.equal(5)
    // A folder of its own where `payapp` resolves to this checkout, as in an app that installed it.
    const dir = mkdtempSync(join(tmpdir(), 'payapp-docs-'))
    mkdirSync(join(dir, 'node_modules'))
    symlinkSync(ROOT, join(dir, 'node_modules', 'payapp'), 'dir')
    const file = join(dir, 'webhooks.test.mjs')
    writeFileSync(file, blocks.join('\n'))
    const {stdout} = await promisify(execFile)(process.execPath, ['--test', '--test-reporter=tap', file], {cwd: dir}).catch((error: {stdout: string; stderr: string}) => {
      throw new Error(`node --test failed:\n${error.stdout}\n${error.stderr}`)
    })
    expect(stdout).to.match(new RegExp(`# pass ${tests}\\b`))
    expect(stdout).to.match(/# fail 0/)
  })
})
