/** A real local webhook receiver (node:http on 127.0.0.1:0) that records every POST it gets. */
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'

export interface Received {
  body: string
  signature: string | undefined
  userAgent: string | undefined
  /** The gateway's delivery id (`Service-Delivery-Id`): a retry repeats it, a resend has a new one. */
  deliveryId: string | undefined
  event: any
}

/** A receiver that records every POST and answers `status(delivery)`, after `delayMs` when given (a slow receiver). */
export async function receiver(status: (delivery: Received) => number = () => 200, delayMs = 0) {
  const got: Received[] = []
  let inFlight = 0
  let mostInFlight = 0
  const server: Server = createServer((req, res) => {
    mostInFlight = Math.max(mostInFlight, ++inFlight)
    res.on('close', () => (inFlight -= 1))
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const delivery: Received = {
        body,
        signature: req.headers['service-signature'] as string | undefined,
        userAgent: req.headers['user-agent'],
        deliveryId: req.headers['service-delivery-id'] as string | undefined,
        event: JSON.parse(body),
      }
      got.push(delivery)
      const answer = () => res.writeHead(status(delivery)).end()
      if (delayMs > 0) setTimeout(answer, delayMs)
      else answer()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`
  return {
    got,
    url,
    types: () => got.map((r) => r.event.type as string),
    /** The most requests it was answering at once (one process sending in order: 1). */
    mostInFlight: () => mostInFlight,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

export type Receiver = Awaited<ReturnType<typeof receiver>>

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `probe` (sync or async) until it gives something truthy, failing after `ms`. */
export async function until<T>(probe: () => T | undefined | false | Promise<T | undefined | false>, what: string, ms = 3000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await probe()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}

/** Receivers a suite opens as it goes, closed together after it. */
export function receiverPool() {
  const open: Receiver[] = []
  return {
    async open(status?: (delivery: Received) => number): Promise<Receiver> {
      const rx = await receiver(status)
      open.push(rx)
      return rx
    },
    closeAll: () => Promise.all(open.splice(0).map((rx) => rx.close())),
  }
}
