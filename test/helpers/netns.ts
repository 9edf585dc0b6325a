/**
 * A real network partition: a network namespace joined to this one by a veth pair, whose link `cut()` takes
 * down. From then on neither side hears anything (no reset, no FIN: the packets are dropped), as across a
 * failed switch or a powered-off host, until `heal()`. Unlike the relay of partition.ts, which stops passing
 * bytes on but keeps both TCP connections alive (so each peer's keepalive probes are still answered), this
 * lets a server find out by TCP keepalive that its client is gone. A program runs inside the namespace with
 * `inside` in front of its command (`ip netns exec NAME`); it listens on `address`, which this side reaches
 * through the link. Needs root and `ip` (iproute2): `networkNamespace()` answers undefined where it cannot.
 */
import {spawnSync} from 'node:child_process'

export interface NetworkNamespace {
  /** The command prefix that runs a program inside the namespace. */
  inside: string[]
  /** The namespace's address on the link. */
  address: string
  /** This side's address on the link: what a program inside reaches a server of this side at (one listening there). */
  outside: string
  /**
   * Takes this side's end of the link down: nothing crosses it either way. This side's route to the namespace
   * goes with it, so a connection this side opens to `address` meanwhile follows the default route instead
   * (where this machine has one: a sandbox's proxy may even accept it); `vanish` is the host that is gone.
   */
  cut(): void
  /**
   * Takes the namespace's end of the link down, as a host powered off on this side's network: what this side
   * sends there is lost (no reset, no answer), its new connections fail once the neighbour's address resolution
   * does (EHOSTUNREACH after about 3 s), and what runs inside can send nothing.
   */
  vanish(): void
  /** Brings both ends up again. */
  heal(): void
  /** Deletes the namespace and the link (stop what runs inside first). */
  remove(): void
}

let made = 0

const ip = (...args: string[]) => {
  const run = spawnSync('ip', args, {encoding: 'utf8'})
  if (run.status !== 0) throw new Error(`ip ${args.join(' ')}: ${(run.stderr || run.error?.message || '').trim()}`)
}

export function networkNamespace(): NetworkNamespace | undefined {
  if (process.getuid?.() !== 0) return undefined
  const n = made++
  const name = `payapp-${process.pid}-${n}`
  // Interface names have at most 15 characters; the /30 is this process's (the pid's low bits) and this call's.
  const outer = `pp${process.pid % 1_000_000}o${n}`
  const inner = `pp${process.pid % 1_000_000}i${n}`
  const net = `10.231.${process.pid % 256}.${(n % 64) * 4}`.split('.').map(Number)
  const at = (host: number) => [...net.slice(0, 3), net[3]! + host].join('.')
  try {
    ip('netns', 'add', name)
  } catch {
    return undefined // no network namespaces here (a container without CAP_SYS_ADMIN)
  }
  const remove = () => spawnSync('ip', ['netns', 'del', name], {stdio: 'ignore'})
  process.once('exit', remove)
  try {
    ip('link', 'add', outer, 'type', 'veth', 'peer', 'name', inner)
    ip('link', 'set', inner, 'netns', name)
    ip('addr', 'add', `${at(1)}/30`, 'dev', outer)
    ip('link', 'set', outer, 'up')
    ip('netns', 'exec', name, 'ip', 'addr', 'add', `${at(2)}/30`, 'dev', inner)
    ip('netns', 'exec', name, 'ip', 'link', 'set', inner, 'up')
    ip('netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up')
  } catch {
    remove()
    return undefined
  }
  return {
    inside: ['ip', 'netns', 'exec', name],
    address: at(2),
    outside: at(1),
    cut: () => ip('link', 'set', outer, 'down'),
    vanish: () => ip('netns', 'exec', name, 'ip', 'link', 'set', inner, 'down'),
    heal: () => {
      ip('netns', 'exec', name, 'ip', 'link', 'set', inner, 'up')
      ip('link', 'set', outer, 'up')
    },
    // Deleting the namespace deletes its end of the pair, and with it this end.
    remove,
  }
}
