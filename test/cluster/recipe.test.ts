/**
 * docs/shared-gateway.md, run as written: its marked shell blocks (`<!-- recipe: NAME -->`) in bash with
 * `payapp` on the PATH, a private PostgreSQL server (or PAYAPP_TEST_DB's postgres:// URL) in place of the
 * doc's URL, free ports in place of 4300 to 4303 and the doc's haproxy.cfg with those ports. Then traffic
 * through the balancer with the CI job's credentials, a backup, and a restore read back by a new process.
 */
import {spawn, spawnSync, type ChildProcess} from 'node:child_process'
import {chmodSync, closeSync, mkdirSync, openSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {expect} from 'chai'

import {startGateway} from '../../scripts/cluster.js'
import {BIN, ROOT} from '../helpers/cli.js'
import {freePort, haproxyConfig, servedBy} from '../helpers/cluster.js'
import {HttpGateway} from '../helpers/gateway.js'

const DOC = join(ROOT, 'docs', 'shared-gateway.md')
const DOC_DB = 'postgres://payapp@127.0.0.1:5432/payapp'

/** The doc's shell blocks by their `<!-- recipe: NAME -->` marker. */
function recipeBlocks(): Map<string, string> {
  const doc = readFileSync(DOC, 'utf8')
  return new Map([...doc.matchAll(/<!-- recipe: ([\w-]+) -->\n```sh\n([\s\S]*?)\n```/g)].map((m) => [m[1]!, m[2]!]))
}

/**
 * Runs `script` in bash in its own process group (what it starts in the background stays in it, for
 * `stopGroup`), its output in a file: background processes keep writing there after the script ends.
 */
function bash(script: string, cwd: string, env: NodeJS.ProcessEnv, log: string, timeoutMs = 30_000): {child: ChildProcess; done: Promise<{code: number | null; output: string}>} {
  const fd = openSync(log, 'w')
  const child = spawn('bash', ['-euo', 'pipefail', '-c', script], {cwd, env, detached: true, stdio: ['ignore', fd, fd]})
  closeSync(fd)
  // The doc's wait for the balancer loops until it routes: a gateway that cannot start would keep it forever.
  let late = ''
  const timer = setTimeout(() => {
    late = `\n[test] still running after ${timeoutMs / 1000} s: stopped`
    child.kill('SIGKILL')
  }, timeoutMs)
  return {child, done: new Promise((resolve) => child.on('exit', (code) => (clearTimeout(timer), resolve({code, output: readFileSync(log, 'utf8') + late}))))}
}

/** Stops every process of a group: SIGTERM, then SIGKILL to what is left after 5 s. */
async function stopGroup(pgid: number): Promise<void> {
  const alive = () => {
    try {
      process.kill(-pgid, 0)
      return true
    } catch {
      return false
    }
  }
  if (!alive()) return
  process.kill(-pgid, 'SIGTERM')
  const deadline = Date.now() + 5000
  while (alive() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
  if (alive()) process.kill(-pgid, 'SIGKILL')
}

describe('docs/shared-gateway.md: the recipe runs as written', function () {
  this.timeout(120_000)
  const blocks = recipeBlocks()
  const cleanups: Array<() => unknown> = []
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup()
  })

  it('has the start, ci-job, backup and restore blocks, and the config the test runs is the doc’s file', () => {
    expect([...blocks.keys()]).to.deep.equal(['schedule', 'start', 'ci-job', 'backup', 'restore'])
    expect(blocks.get('start')).to.include('haproxy -db -f docs/shared-gateway/haproxy.cfg')
  })

  it('brings up PostgreSQL, three processes and HAProxy; a CI job gets a merchant and tokens; traffic goes through; a backup restores', async () => {
    // PAYAPP_TEST_DB=postgres (not a URL) asks for a private server too.
    let db = process.env.PAYAPP_TEST_DB ?? ''
    /** The private server's data directory (none for a server given by URL). */
    let data: string | undefined
    if (!/^postgres(ql)?:\/\//.test(db)) {
      const {startPostgres} = await import('../../scripts/postgres-server.js')
      // Under the default policy, so that the doc's scheduling block is what puts it under the batch one.
      const server = await startPostgres({schedule: 'normal'})
      cleanups.push(server.stop)
      db = server.url
      data = server.data
    }
    const work = mkdtempSync(join(tmpdir(), 'payapp-recipe-'))
    cleanups.push(() => rmSync(work, {recursive: true, force: true}))
    // `payapp` as an installed package puts it on the PATH.
    mkdirSync(join(work, 'bin'))
    writeFileSync(join(work, 'bin', 'payapp'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`)
    chmodSync(join(work, 'bin', 'payapp'), 0o755)
    const ports = await Promise.all([0, 1, 2, 3].map(() => freePort()))
    const config = join(work, 'haproxy.cfg')
    writeFileSync(config, haproxyConfig(ports[0]!, ports.slice(1)))
    // In one pass: replaced one after another, a free port put in for one that holds another (44302 holds 4302) was replaced
    // again, and a process was told to listen on 425859.
    const local = (script: string) =>
      script
        .replace(/\b430[0-3]\b/g, (port) => String(ports[Number(port) - 4300]))
        .replaceAll('docs/shared-gateway/haproxy.cfg', config)
        .replaceAll(DOC_DB, db)
    const env: NodeJS.ProcessEnv = {
      PATH: `${join(work, 'bin')}:${process.env.PATH}`,
      HOME: work,
      XDG_CONFIG_HOME: join(work, 'config'),
      XDG_DATA_HOME: join(work, 'data'),
      PAYAPP_KEYCHAIN: 'off',
      NO_COLOR: '1',
    }

    // The start and CI-job blocks as one script; what the job exported is printed for this test to use.
    const exported = ['PAYAPP_GATEWAY_DB', 'PAYAPP_ADMIN_KEY', 'PAYAPP_BASE_URL', 'PAYAPP_MERCHANT', 'PAYAPP_TOKEN', 'PAYAPP_SECRET_KEY']
    const script = `${local(blocks.get('start')!)}\n${local(blocks.get('ci-job')!)}\nnode -e 'console.log("EXPORTED " + JSON.stringify(process.env))'\n`
    const run = bash(script, work, env, join(work, 'start.log'))
    cleanups.push(() => stopGroup(run.child.pid!))
    const {code, output} = await run.done
    expect(code, output).to.equal(0)
    const vars = JSON.parse(/^EXPORTED (.*)$/m.exec(output)![1]!) as Record<string, string>
    for (const name of exported) expect(vars[name], name).to.be.a('string').and.not.equal('')
    expect(vars.PAYAPP_BASE_URL).to.equal(`http://127.0.0.1:${ports[0]}`)
    // `payapp products list --json` of the job printed the new merchant's empty catalogue.
    expect(output).to.match(/"data": \[\]/)

    // Traffic through the balancer with the job's credentials, spread over the three processes.
    const gw = new HttpGateway(vars.PAYAPP_BASE_URL!, vars.PAYAPP_ADMIN_KEY!)
    const made = await Promise.all(
      Array.from({length: 9}, (_, i) => gw.request('POST', '/v1/app/products', {token: vars.PAYAPP_TOKEN, body: {name: `Recipe ${i}`, price: {currency: 'eur', unit_amount: 1000 + i}}})),
    )
    expect(made.map((r) => r.status)).to.deep.equal(Array(9).fill(201))
    expect(servedBy(made)).to.deep.equal(['gw1', 'gw2', 'gw3'])

    // The scheduling block, on the private server while the gateways are connected: the postmaster and every
    // backend (the gateways' pools among them) under the batch policy, and the processes serve on.
    if (data) {
      const {serverPids} = await import('../../scripts/postgres-server.js')
      // A backend that ended since it was listed (an autovacuum worker) has no policy to read.
      const policies = () => serverPids(data!).flatMap((pid) => /policy: (\w+)/.exec(spawnSync('chrt', ['-p', pid], {encoding: 'utf8'}).stdout)?.[1] ?? [])
      expect(policies()).to.include('SCHED_OTHER')
      const scheduled = await bash(blocks.get('schedule')!.replaceAll('/var/lib/postgresql/15/main', data), work, env, join(work, 'schedule.log')).done
      expect(scheduled.code, scheduled.output).to.equal(0)
      const now = policies()
      expect(now.length).to.be.greaterThan(3 * 2)
      expect(new Set(now)).to.deep.equal(new Set(['SCHED_BATCH']))
      const again = await gw.request('GET', '/v1/app/products?limit=1', {token: vars.PAYAPP_TOKEN})
      expect(again.status, again.text).to.equal(200)
    }
    const listed = await gw.request('GET', '/v1/store/products?limit=100', {token: vars.PAYAPP_SECRET_KEY})
    expect(listed.body.data.map((p: {name: string}) => p.name).sort()).to.deep.equal(made.map((r) => r.body.name).sort())

    // Backup while the gateways serve, restore into a new database, and read it back with a new process.
    const backup = await bash(`${local(blocks.get('backup')!)}\n${local(blocks.get('restore')!)}\n`, work, {...env, PAYAPP_GATEWAY_DB: vars.PAYAPP_GATEWAY_DB}, join(work, 'backup.log')).done
    expect(backup.code, backup.output).to.equal(0)
    const restoredDb = `${db.slice(0, db.lastIndexOf('/'))}/payapp_restored`
    const restored = await startGateway({db: restoredDb, adminKey: vars.PAYAPP_ADMIN_KEY!, home: work})
    cleanups.push(() => restored.kill())
    const reread = await new HttpGateway(restored.url, vars.PAYAPP_ADMIN_KEY!).request('GET', '/v1/store/products?limit=100', {token: vars.PAYAPP_SECRET_KEY})
    expect(reread.status, reread.text).to.equal(200)
    expect(reread.body.data.map((p: {id: string}) => p.id).sort()).to.deep.equal(made.map((r) => r.body.id).sort())
  })
})
