/**
 * Mocha root hooks (loaded by .mocharc.json for every test file): a test fails when a gateway response
 * it caused does not match the OpenAPI document (see openapi-conformance.ts). Each test's function is
 * wrapped once before the run, so a misfit fails that test alone; a failing afterEach would abort the run.
 * With PAYAPP_TEST_DB=postgres they also start the run's PostgreSQL server, and stop it at the end.
 *
 * Every temporary directory the tests make (`os.tmpdir()`, and the processes they start with this environment)
 * goes under one directory of the run, removed at its end: databases of a few hundred megabytes each (the WAL
 * tests) must not pile up in /tmp run after run. PAYAPP_KEEP_TMP=1 keeps it (its path is printed) to look into.
 */
import {chmodSync, mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import type {Context, Suite, Test} from 'mocha'

import {takeViolations} from './openapi-conformance.js'
import {stopTestDatabase} from './test-db.js'

const runTmp = mkdtempSync(join(tmpdir(), 'payapp-test-'))
// Readable by others: the private PostgreSQL server runs as its own user in a directory under it.
chmodSync(runTmp, 0o755)
process.env.TMPDIR = runTmp

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
    if (process.env.PAYAPP_KEEP_TMP) console.log(`temporary files of the run kept in ${runTmp}`)
    else rmSync(runTmp, {recursive: true, force: true})
  },
}
