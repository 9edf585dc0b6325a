#!/usr/bin/env node
/**
 * The transport's physical limit for `npm run bench`: a bare node:http server that answers every
 * request with the same captured bytes, status and content type as the gateway did.
 * Usage: bare-server.js BODY_FILE STATUS CONTENT_TYPE — prints {"url": …} once listening.
 */
import {readFileSync} from 'node:fs'
import {createServer} from 'node:http'

const [file, status, contentType] = process.argv.slice(2)
const body = readFileSync(file)
let n = 0
const server = createServer((req, res) => {
  // Drain the request body as the gateway must, so both servers do the same socket work.
  req.resume()
  req.on('end', () => {
    res.writeHead(Number(status), {'content-type': contentType, 'content-length': body.length, 'x-request-id': `req_bare${++n}`})
    res.end(body)
  })
})
server.keepAliveTimeout = 72_000
server.listen(0, '127.0.0.1', () => {
  const {port} = server.address()
  process.stdout.write(JSON.stringify({url: `http://127.0.0.1:${port}`}) + '\n')
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))
