import {expect} from 'chai'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {ROOT} from './runtimes.js'

/** docs/sdk.md's browser, edge and Lambda examples are the files the runtime matrix runs, word for word. */
describe('runtimes: docs/sdk.md shows the files the matrix runs', () => {
  const doc = readFileSync(join(ROOT, 'docs/sdk.md'), 'utf8')
  const blocks = [...doc.matchAll(/<!-- (test\/runtimes\/[\w.-]+) -->\n```\w*\n([\s\S]*?)\n```/g)]

  it('has the browser, Worker and Lambda examples', () => {
    expect(blocks.map((b) => b[1])).to.deep.equal(['test/runtimes/page.mjs', 'test/runtimes/worker.mjs', 'test/runtimes/lambda.mjs'])
  })

  it('each is its file as the matrix runs it', () => {
    for (const [, file, code] of blocks) expect(code, file).to.equal(readFileSync(join(ROOT, file!), 'utf8').trimEnd())
  })
})
