/**
 * Mocha root hooks (loaded by .mocharc.json for every test file): a test fails when a gateway response
 * it caused does not match the OpenAPI document (see openapi-conformance.ts). Each test's function is
 * wrapped once before the run, so a misfit fails that test alone; a failing afterEach would abort the run.
 * With PAYAPP_TEST_DB=postgres they also start the run's PostgreSQL server, and stop it at the end.
 */
import type {Context, Suite, Test} from 'mocha'

import {takeViolations} from './openapi-conformance.js'
import {stopTestDatabase} from './test-db.js'

function reportViolations() {
  const found = takeViolations()
  if (found.length === 0) return
  const lines = found.slice(0, 10).map((v) => `  ${v.request} → ${v.status}: ${v.problem}`)
  throw new Error(`${found.length} gateway response(s) do not match the OpenAPI document:\n${lines.join('\n')}`)
}

function wrapTests(suite: Suite) {
  for (const test of suite.tests as Test[]) {
    const fn = test.fn
    if (!fn || fn.length > 0) continue
    test.fn = async function (this: Context) {
      takeViolations() // What a before hook caused is not this test's doing; its own requests are.
      await (fn as (this: Context) => unknown).call(this)
      reportViolations()
    }
  }
  for (const child of suite.suites) wrapTests(child)
}

export const mochaHooks = {
  beforeAll(this: Context) {
    wrapTests(this.test!.parent!)
  },
  // PAYAPP_TEST_DB=postgres: the run's one private PostgreSQL server (started as test-db.ts loads) stops here.
  async afterAll() {
    await stopTestDatabase()
  },
}
