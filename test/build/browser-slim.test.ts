/**
 * The SDK's browser build (packages/sdk/scripts/browser-slim.js): it leaves out request schemas and documentation
 * texts, and must keep everything a client runs on: every endpoint's response schema, its path, method and doors.
 * Read from the built files (`npm run build`), compared with the Node build of the same table.
 */
import {expect} from 'chai'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

import {ROOT} from '../helpers/cli.js'

type Table = Record<string, {method: string; path: string; doors: readonly string[]; response: {safeParse(v: unknown): {success: boolean}}; body?: unknown; query?: unknown; summary: string}>

const load = async (file: string) => (await import(pathToFileURL(join(ROOT, 'packages/sdk/dist', file)).href)) as {endpoints: Table}

describe('build: the SDK for browsers leaves out request schemas and docs, never what a client runs on', () => {
  it('keeps every endpoint with its method, path, doors and a working response schema; drops bodies, queries and summaries', async () => {
    const browser = (await load('browser/endpoints.js')).endpoints
    const node = (await load('endpoints.js')).endpoints
    expect(Object.keys(browser)).to.deep.equal(Object.keys(node))
    for (const [id, def] of Object.entries(node)) {
      const slim = browser[id]!
      expect({method: slim.method, path: slim.path, doors: slim.doors}, id).to.deep.equal({method: def.method, path: def.path, doors: def.doors})
      expect(slim.response.safeParse({id: 42}).success, `${id}: the response schema still validates`).to.equal(def.response.safeParse({id: 42}).success)
      expect([slim.body, slim.query, slim.summary], id).to.deep.equal([undefined, undefined, ''])
    }
    expect(Object.values(node).some((def) => def.body !== undefined)).to.equal(true)
  })

  it("keeps the response schemas' rules: a wrong type on a known field still fails in the browser build", async () => {
    const {schemas} = (await import(pathToFileURL(join(ROOT, 'packages/sdk/dist/browser/index.js')).href)) as {schemas: {product: {safeParse(v: unknown): {success: boolean}}}}
    expect(schemas.product.safeParse({id: 'prod_1', object: 'product', name: 7}).success).to.equal(false)
  })
})
