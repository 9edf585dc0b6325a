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

import {minimatch} from 'minimatch'
import type {Context, Suite, Test} from 'mocha'

import {prepareRuntimes} from '../runtimes/runtimes.js'

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

let removed = false
/** Removes the run's temporary directory, once (PAYAPP_KEEP_TMP=1: says where it is instead). */
function removeRunTmp() {
  if (removed) return
  removed = true
  if (process.env.PAYAPP_KEEP_TMP) console.log(`temporary files of the run kept in ${runTmp}`)
  else rmSync(runTmp, {recursive: true, force: true})
}

/**
 * In mocha's parallel mode (`npm test`) each worker process runs this file's hooks once per test file, so what is
 * per run happens elsewhere there: a worker's directory (made as it loads this file, inside the main process's,
 * whose TMPDIR it inherits) goes when the worker exits, and the main process's, with whatever a killed worker
 * left in it, in the global teardown after every worker is done.
 */
const inWorker = process.env.MOCHA_WORKER_ID !== undefined
if (inWorker && !process.env.PAYAPP_KEEP_TMP) process.once('exit', () => rmSync(runTmp, {recursive: true, force: true}))

export const mochaHooks = {
  beforeAll(this: Context) {
    wrapTests(this.test!.parent!)
  },
  // PAYAPP_TEST_DB=postgres: the run's one private PostgreSQL server (started as test-db.ts loads) stops here.
  // (`npm run test:pg` runs serially: then this is the end of the run.)
  async afterAll() {
    if (inWorker) return
    await stopTestDatabase()
    removeRunTmp()
  },
}

/**
 * The start of a run, in the main process. In parallel mode only the workers load the test files, and a worker loads
 * the runtime matrix's file when it comes to it, minutes into the run: the main process starts the matrix's
 * installs and addon builds here instead (runtimes.ts), at the start, when the run's files include the matrix's,
 * and the matrix's tests in a worker wait for them. (A serial run has already loaded the matrix's file, which
 * started them.)
 */
export function mochaGlobalSetup() {
  const matrix = 'test/runtimes/matrix.test.ts'
  const specs = process.argv.slice(2).filter((arg) => !arg.startsWith('-'))
  if (specs.some((spec) => minimatch(matrix, spec) || matrix.startsWith(`${spec.replace(/\/$/, '')}/`))) prepareRuntimes()
}

/** The end of a parallel run, in the main process (and of a serial one, after `afterAll` did it). */
export function mochaGlobalTeardown() {
  if (!inWorker) removeRunTmp()
}
