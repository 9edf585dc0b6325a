/**
 * A TCP relay to a server that can stop passing anything on without closing a connection, as a network
 * partition that drops packets does (no reset, no FIN: the sender just hears nothing back). While cut it
 * accepts new connections (the kernel's handshake) but connects them nowhere, and holds what either side
 * sends; `heal()` delivers it all, late, as TCP's retransmissions would, and connects the held ones. It also
 * stands for an address that moves to another server (`retarget`), as a failover's virtual IP or DNS name does.
 */
import {connect, createServer, type Socket} from 'node:net'

export interface Partition {
  /** The relay's port on 127.0.0.1. */
  port: number
  /** `url` with its host and port replaced by the relay's. */
  through(url: string): string
  /** Where new connections go from now on (a virtual IP moved, DNS changed); open ones stay where they are. */
  retarget(to: {host: string; port: number}): void
  cut(): void
  heal(): void
  close(): Promise<void>
}

export async function partitionable(to: {host: string; port: number}): Promise<Partition> {
  let target = to
  let cut = false
  const waiting: Array<() => void> = []
  const sockets = new Set<Socket>()
  /** Passes `from`'s bytes and its end to `to`; while cut, holds them until healed. */
  const relay = (from: Socket, to: Socket) => {
    from.on('data', (chunk) => (cut ? waiting.push(() => to.write(chunk)) : to.write(chunk)))
    from.on('close', () => (cut ? waiting.push(() => to.destroy()) : to.destroy()))
    from.on('error', () => {})
  }
  const join = (client: Socket) => {
    const upstream = connect(target.port, target.host)
    sockets.add(upstream)
    upstream.on('close', () => sockets.delete(upstream))
    relay(client, upstream)
    relay(upstream, client)
  }
  const server = createServer((client) => {
    sockets.add(client)
    client.on('close', () => sockets.delete(client))
    if (!cut) return join(client)
    // Accepted by the kernel, never answered while cut: the client's connect waits.
    client.pause()
    client.on('error', () => {})
    waiting.push(() => {
      if (client.destroyed) return
      join(client)
      client.resume()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as {port: number}).port
  return {
    port,
    through(url) {
      const u = new URL(url)
      u.hostname = '127.0.0.1'
      u.port = String(port)
      return u.toString()
    },
    retarget(to) {
      target = to
    },
    cut() {
      cut = true
    },
    heal() {
      cut = false
      for (const deliver of waiting.splice(0)) deliver()
    },
    async close() {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
