/**
 * A registry for the @payapp scope only, on 127.0.0.1: it serves the packed @payapp/sdk as if it were
 * published, so a test can install the packed `payapp` the way users get it from npm (`npm install -g
 * payapp` fetches @payapp/sdk from the registry). Pass `--@payapp:registry=<url>` to npm; every other
 * package still comes from npm's cache as before.
 */
import {createHash} from 'node:crypto'
import {once} from 'node:events'
import {readFileSync} from 'node:fs'
import {createServer, type Server} from 'node:http'
import {basename, join} from 'node:path'

import {ROOT} from './cli.js'

export interface SdkRegistry {
  url: string
  close(): Promise<void>
}

/** Serves `tarball` (from `npm pack -w @payapp/sdk`) as @payapp/sdk at the version in packages/sdk/package.json. */
export async function startSdkRegistry(tarball: string): Promise<SdkRegistry> {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'packages', 'sdk', 'package.json'), 'utf8'))
  const bytes = readFileSync(tarball)
  const integrity = `sha512-${createHash('sha512').update(bytes).digest('base64')}`
  const shasum = createHash('sha1').update(bytes).digest('hex')
  const server: Server = createServer((req, res) => {
    const url = `http://127.0.0.1:${(server.address() as {port: number}).port}`
    const path = decodeURIComponent(req.url ?? '')
    if (path === `/${manifest.name}`) {
      const version = {...manifest, _id: `${manifest.name}@${manifest.version}`, dist: {tarball: `${url}/-/${basename(tarball)}`, integrity, shasum}}
      res.writeHead(200, {'content-type': 'application/json'})
      res.end(JSON.stringify({name: manifest.name, 'dist-tags': {latest: manifest.version}, versions: {[manifest.version]: version}}))
    } else if (path === `/-/${basename(tarball)}`) {
      res.writeHead(200, {'content-type': 'application/octet-stream', 'content-length': bytes.length})
      res.end(bytes)
    } else {
      res.writeHead(404, {'content-type': 'application/json'})
      res.end('{"error":"not found"}')
    }
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as {port: number}).port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
