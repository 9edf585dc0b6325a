/**
 * `payapp listen`: a relay on 127.0.0.1 that the gateway delivers webhooks to, forwarding each one to
 * the developer's app with the same raw body and signature header, so the app verifies it exactly as it
 * would a delivery from the platform.
 */
import {createServer, type IncomingMessage, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'

import {SIGNATURE_HEADER} from '@payapp/sdk/webhooks-node'

import {date} from '../output.js'

/** Below the gateway's 15 s delivery timeout, so a slow app is reported here rather than there. */
const FORWARD_TIMEOUT_MS = 10_000
/** The relay's path: marks an endpoint as one `listen` registered, so a later run can find it if stale. */
export const RELAY_PATH = '/payapp-listen/webhooks'
/** How often `listen` checks that the gateway is still there. */
export const HEALTH_INTERVAL_MS = 2000

/** One delivery as relayed: what the gateway sent and what the app answered. */
export interface RelayedEvent {
  /** ISO-8601 time the relay received it. */
  received: string
  id: string | null
  type: string | null
  /** The app's HTTP status; null when it could not be reached (see `error`). */
  status: number | null
  error?: string
}

export interface Relay {
  url: string
  close(): Promise<void>
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => resolve(Buffer.concat(chunks)))
    req.on('error', reject)
  })
}

function describe(err: unknown): string {
  const e = err as {name?: string; message?: string; cause?: {code?: string}}
  if (e?.name === 'TimeoutError') return `timeout after ${FORWARD_TIMEOUT_MS / 1000} s`
  return e?.cause?.code ?? e?.message ?? String(err)
}

/** Starts the relay on 127.0.0.1 (a free port); `onEvent` is called once per delivery, after the app answered. */
export async function startRelay(forwardTo: string, onEvent: (event: RelayedEvent) => void): Promise<Relay> {
  const server: Server = createServer((req, res) => {
    // Only deliveries are forwarded; anything else (a liveness probe of a later `listen`) is answered here.
    if (req.method !== 'POST') return void res.writeHead(405, {allow: 'POST'}).end()
    void (async () => {
      const body = await readBody(req)
      let id: string | null = null
      let type: string | null = null
      try {
        const event = JSON.parse(body.toString('utf8')) as {id?: unknown; type?: unknown}
        id = typeof event.id === 'string' ? event.id : null
        type = typeof event.type === 'string' ? event.type : null
      } catch {
        // Not JSON: still forwarded untouched; the app decides what it is.
      }
      const headers: Record<string, string> = {'content-type': req.headers['content-type'] ?? 'application/json'}
      const signature = req.headers[SIGNATURE_HEADER.toLowerCase()]
      if (typeof signature === 'string') headers[SIGNATURE_HEADER] = signature
      if (typeof req.headers['user-agent'] === 'string') headers['user-agent'] = req.headers['user-agent']
      const received = new Date().toISOString()
      try {
        const answer = await fetch(forwardTo, {method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS)})
        await answer.body?.cancel().catch(() => {})
        // The gateway sees the app's own status, so its retries follow the app's answers.
        res.writeHead(answer.status).end()
        onEvent({received, id, type, status: answer.status})
      } catch (err) {
        res.writeHead(502).end()
        onEvent({received, id, type, status: null, error: describe(err)})
      }
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const {port} = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}${RELAY_PATH}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

/** The line `listen` prints per event: `2026-05-01 12:00:00 UTC checkout.session.completed evt_… → 200` (the CLI's one date format). */
export function eventLine(e: RelayedEvent): string {
  return `${date(Date.parse(e.received) / 1000)} ${e.type ?? '(unknown type)'} ${e.id ?? '(no id)'} → ${e.status ?? `error: ${e.error}`}`
}

/** What `listen` needs of the admin API's webhook endpoints. */
export interface EndpointAdmin {
  list(merchant: string): Promise<{data: Array<{id: string; url: string}>}>
  delete(id: string): Promise<unknown>
}

/** Whether a relay of an earlier `listen` still answers (a live one says 405 to a GET). */
async function relayAlive(url: string): Promise<boolean> {
  try {
    await fetch(url, {signal: AbortSignal.timeout(1000)})
    return true
  } catch {
    return false
  }
}

/**
 * Deletes the endpoints of earlier `listen` runs whose relay is gone (killed without Ctrl-C, or the
 * terminal closed), so the gateway stops retrying deliveries nobody receives. Returns their ids.
 */
export async function removeStaleEndpoints(endpoints: EndpointAdmin, merchant: string): Promise<string[]> {
  const mine = (await endpoints.list(merchant)).data.filter((e) => /^http:\/\/127\.0\.0\.1:\d+\/payapp-listen\//.test(e.url))
  const stale: string[] = []
  for (const endpoint of mine) {
    if (await relayAlive(endpoint.url)) continue
    await endpoints.delete(endpoint.id)
    stale.push(endpoint.id)
  }
  return stale
}

export interface Watch {
  stop(): void
}

/**
 * Checks every `intervalMs` that the gateway still holds `endpointId`: says so once when the gateway
 * stops answering, and when it answers again without the endpoint (a restart with a fresh database),
 * calls `reRegister` and reports the new id. Never throws: `listen` keeps running until Ctrl-C.
 */
export function watchGateway(opts: {
  endpoints: EndpointAdmin
  merchant: string
  endpointId: () => string
  reRegister: () => Promise<string>
  say: (line: string) => void
  baseUrl: string
  intervalMs?: number
}): Watch {
  let up = true
  let busy = false
  const timer = setInterval(() => {
    if (busy) return
    busy = true
    void (async () => {
      try {
        const present = (await opts.endpoints.list(opts.merchant)).data.some((e) => e.id === opts.endpointId())
        if (!up) opts.say(`The gateway at ${opts.baseUrl} is back.`)
        up = true
        if (!present) {
          const id = await opts.reRegister()
          opts.say(`Registered webhook endpoint ${id} again (same signing secret); forwarding resumes.`)
        }
      } catch (error) {
        if (up) opts.say(`Lost the gateway at ${opts.baseUrl} (${(error as Error).message.split('\n')[0]}); waiting for it to come back…`)
        up = false
      } finally {
        busy = false
      }
    })()
  }, opts.intervalMs ?? HEALTH_INTERVAL_MS)
  timer.unref()
  return {stop: () => clearInterval(timer)}
}
