import Database from 'better-sqlite3'
import {mkdtempSync} from 'node:fs'
import {join} from 'node:path'
import {tmpdir} from 'node:os'
import {startJsonServer, call} from './bench/gateway-workloads.js'
const children = []
const work = mkdtempSync(join(tmpdir(), 'exp-'))
const file = join(work, 'g.sqlite')
const env = {XDG_CONFIG_HOME: join(work, 'config'), PAYAPP_KEYCHAIN: 'off'}
const start = (extra = []) => startJsonServer(children, [...extra, 'bin/run.js', 'gateway', 'start', '--port', '0', '--db', file, '--rate-limit', 'off', '--json', '--no-save-profile'], {env})
let {child, info} = await start()
const m = await call(info.url, 'POST', '/_admin/merchants', info.admin_key, {})
const k = await call(info.url, 'POST', '/_admin/keys', info.admin_key, {merchant: m.json.id, mode: 'test', scopes: ['products:write', 'checkout:write']})
const sk = k.json.secret_key
const p = await call(info.url, 'POST', '/v1/store/products', sk, {name: 'Slow', price: {currency: 'eur', unit_amount: 1000}})
const first = await call(info.url, 'POST', '/v1/store/checkouts', sk, {product_id: p.json.id})
child.kill('SIGKILL'); await new Promise((r) => child.once('exit', r))
const db = new Database(file)
const row = db.prepare('SELECT data, merchant, env, created FROM objects WHERE id = ?').get(first.json.session_id)
const insert = db.prepare('INSERT INTO objects (id, kind, merchant, env, parent, created, data) VALUES (?, ?, ?, ?, NULL, ?, ?)')
const N = Number(process.env.N ?? 40000)
db.transaction(() => { for (let i = 0; i < N; i++) insert.run(`cs_due${i}`, 'checkout_session', row.merchant, row.env, row.created, JSON.stringify({...JSON.parse(row.data), id: `cs_due${i}`, expires_at: 1, reservation: null})) })()
db.close()
;({child, info} = await start((process.env.PROF ?? '').split(' ').filter(Boolean)))
const t = performance.now()
await call(info.url, 'POST', '/v1/store/checkouts', sk, {product_id: p.json.id})
console.log(N, 'expiry request ms', Math.round(performance.now() - t))
child.kill('SIGINT'); await new Promise((r) => child.once('exit', r))
