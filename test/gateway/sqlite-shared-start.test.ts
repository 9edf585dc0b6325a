/**
 * Several gateway processes starting together on one new SQLite file (a shared gateway restarted, a cluster
 * test's `startCluster`) all open it: none fails with "database is locked". Each round, every process waits
 * at a barrier (a file per process, spun on) and then opens the round's new file as `gateway start --db`
 * does (openStorage: WAL, schema, reader) and closes it; many rounds, since one start meets the race rarely.
 */
import {spawn} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {expect} from 'chai'

const OPEN = fileURLToPath(new URL('../../src/gateway/storage/open.ts', import.meta.url))

/** One process: for each round, mark itself ready, spin until all are, open the round's file, close it. */
const CHILD = `
import {existsSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
const {openStorage} = await import(${JSON.stringify(OPEN)})
const [dir, id, processes, rounds] = process.argv.slice(1)
const failures = []
for (let r = 0; r < Number(rounds); r++) {
  writeFileSync(join(dir, 'ready-' + r + '-' + id), '')
  for (let p = 0; p < Number(processes); p++) while (!existsSync(join(dir, 'ready-' + r + '-' + p))) {}
  try {
    const storage = await openStorage(join(dir, 'gateway-' + r + '.sqlite'))
    await storage.reads.meta('schema')
    storage.close()
  } catch (error) {
    failures.push('round ' + r + ': ' + error.code + ' ' + error.message)
  }
}
process.stdout.write(JSON.stringify(failures))
`

function run(dir: string, id: number, processes: number, rounds: number): Promise<string[]> {
  const child = spawn(process.execPath, ['--conditions=payapp-source', '--import', 'tsx', '--input-type=module', '-e', CHILD, dir, String(id), String(processes), String(rounds)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (err += d))
  return new Promise((resolve, reject) =>
    child.once('exit', (code) => {
      try {
        if (code !== 0) throw new Error(`exit ${code}: ${err}`)
        resolve(JSON.parse(out) as string[])
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)))
      }
    }),
  )
}

describe('SQLite storage: processes starting together on one new file', function () {
  this.timeout(120_000)

  it('opens in every one of 4 processes, round after round, with no "database is locked"', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'payapp-shared-start-'))
    try {
      const PROCESSES = 4
      const ROUNDS = 150
      const failures = (await Promise.all(Array.from({length: PROCESSES}, (_, id) => run(dir, id, PROCESSES, ROUNDS)))).flat()
      expect(failures).to.deep.equal([])
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
