/**
 * The peer comparison for the OpenAPI document: Prism (`prism mock`, the usual way to get a server from
 * a document) serving docs/openapi.json's `GET /v1/app/products` beside the gateway serving the real
 * list, with the same connections and duration. Prism answers a static example generated from the
 * schema (one product); the gateway reads and serialises the merchant's real products.
 */
import {spawn} from 'node:child_process'
import {createServer} from 'node:net'
import {join} from 'node:path'

/** A port free right now, for a server (Prism) that cannot be told to pick one. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const {port} = server.address()
      server.close(() => resolve(port))
    })
  })
}

async function waitUntilServing(url, headers, child) {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`prism exited ${child.exitCode}`)
    const ok = await fetch(url, {headers}).then((r) => r.ok, () => false)
    if (ok) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error('prism did not start within 30 s')
}

/**
 * @param {{root: string, url: string, token: string, load: Function, summary: Function, children: import('node:child_process').ChildProcess[]}} ctx
 */
export async function benchOpenApi({root, url, token, load, summary, children}) {
  const path = '/v1/app/products?limit=25'
  const headers = {authorization: `Bearer ${token}`}
  const port = await freePort()
  const prism = spawn(process.execPath, [join(root, 'node_modules', '@stoplight', 'prism-cli', 'dist', 'index.js'), 'mock', join(root, 'docs', 'openapi.json'), '-h', '127.0.0.1', '-p', String(port), '-v', 'silent'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  children.push(prism)
  const prismUrl = `http://127.0.0.1:${port}`
  await waitUntilServing(prismUrl + path, headers, prism)

  await load({url: prismUrl + path, headers, duration: 2})
  const gw = summary('gateway (real)', await load({url: url + path, headers}))
  const mock = summary('prism mock', await load({url: prismUrl + path, headers}))
  prism.kill('SIGTERM')

  const ratio = gw.rps / mock.rps
  console.log(`\nGET ${path}: the gateway beside Prism mocking docs/openapi.json`)
  for (const s of [gw, mock]) console.log(`  ${s.name.padEnd(18)} ${Math.round(s.rps).toLocaleString('en-US').padStart(10)} req/s  p99 ${s.p99.toFixed(1)} ms  errors ${s.non2xx}`)
  console.log(`  ratio gateway/prism: ${ratio.toFixed(2)} (the gateway serves 25 stored products; Prism a generated example)`)
  return {gateway: gw, prism: mock, ratio}
}
