import type {ChildProcess} from 'node:child_process'

export const HAPROXY: string
export const HAPROXY_CONFIG: string

export interface ClusterProcess {
  url: string
  pid: number
  /** The HAProxy server name (`gw1`…), as the balancer's `X-Payapp-Process` header names it. */
  name: string
  child: ChildProcess
  /** Sends `signal` (default SIGTERM) and resolves once the process has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>
}

export interface Cluster {
  /** The balancer. */
  url: string
  /** HAProxy's process id. */
  balancerPid: number
  adminKey: string
  /** The database every process uses (a SQLite path or a postgres:// URL). */
  db: string
  processes: ClusterProcess[]
  /** Kills process `i` (default SIGKILL) and starts a new one on its port, behind the balancer again. */
  restart(i: number, signal?: NodeJS.Signals): Promise<ClusterProcess>
  /** Starts one more gateway process on the same database, not behind the balancer: to read back after a run. */
  startProcess(): Promise<ClusterProcess>
  /** Stops the balancer and every process; safe to call twice. */
  stop(): Promise<void>
}

/**
 * One `payapp gateway start --port 0 --json` process on `db` (default flags: `--rate-limit off`); `inside`, a
 * command prefix it runs under (`ip netns exec NAME`, test/helpers/netns.ts).
 */
export function startGateway(opts: {db: string; adminKey: string; args?: string[]; home?: string; name?: string; port?: number; env?: Record<string, string>; bin?: string; inside?: string[]}): Promise<ClusterProcess>
/** HAProxy with the doc's config over `backends` (ports on 127.0.0.1, or `host:port`), ready to route. */
export function startBalancer(backends: Array<number | string>, opts?: BalancerVariant): Promise<{url: string; pid: number; stop(): Promise<void>}>
export function haproxyConfig(port: number, backends: Array<number | string>, opts?: Omit<BalancerVariant, 'nice'>): string
/** Processes behind HAProxy; `bin`: another build's bin/run.js; the rest, a benchmark's variant of the balancer. */
export function startCluster(opts: {db: string; dbs?: string[]; processes?: number; args?: string[]; adminKey?: string; env?: Record<string, string>; bin?: string} & BalancerVariant): Promise<Cluster>
/** A variant of the balancer: another `balance` algorithm, options for its `server` lines (every one, or the i-th), its `nbthread`, its niceness. */
export interface BalancerVariant {
  balance?: string
  server?: string
  servers?: string[]
  threads?: number
  nice?: number
}
/** The doc's balancer for a machine with fewer cores than gateway processes (docs/shared-gateway.md), as read from it. */
export function smallMachineVariant(): {balance: string; servers: string[]}
/** The niceness docs/shared-gateway.md runs HAProxy at. */
export const HAPROXY_NICE: number
