/**
 * What the SDK needs from the runtime it runs in, read from `globalThis` when called, never at import: the
 * same build runs in Node, Deno, Bun, workerd and browsers, and none of them is assumed on the load path.
 */

interface NodeLikeProcess {
  versions?: {node?: string; bun?: string}
  hrtime?: () => [number, number]
  getBuiltinModule?: (id: string) => unknown
  emitWarning?: (warning: string) => void
}

const g = globalThis as {
  process?: NodeLikeProcess
  Deno?: {version?: {deno?: string}}
  document?: unknown
  importScripts?: unknown
  navigator?: {userAgent?: string}
}

/** `node/22.1.0`, `bun/1.2.0`, `deno/2.1.0`, `workerd`, `browser`: the runtime half of the User-Agent. */
export function runtimeName(): string {
  const versions = g.process?.versions
  if (versions?.bun) return `bun/${versions.bun}`
  if (g.Deno?.version?.deno) return `deno/${g.Deno.version.deno}`
  if (versions?.node) return `node/${versions.node}`
  if (g.navigator?.userAgent === 'Cloudflare-Workers') return 'workerd'
  return isBrowser() ? 'browser' : 'unknown'
}

/** A page or a browser worker: where the User-Agent header is the browser's and a CORS preflight lists what we add. */
export function isBrowser(): boolean {
  return g.document !== undefined || typeof g.importScripts === 'function'
}

/**
 * A Node built-in where the runtime has one (Node, Bun, Deno, workerd with nodejs_compat), loaded when first
 * needed by a feature that cannot work without it (sync webhook signatures, uploads from a file path).
 */
export function nodeBuiltin<T>(id: string, feature: string): T {
  const mod = g.process?.getBuiltinModule?.(id)
  if (mod === undefined) throw new Error(`${feature} needs ${id}, which this runtime does not provide`)
  return mod as T
}

/**
 * Milliseconds on a monotonic clock, for timeouts and durations: Node's `process.hrtime` where the runtime has it
 * (Node's global `performance`, on first use, loads perf_hooks and eight more modules: about 2 ms of a CLI call),
 * else `performance.now()`.
 */
export function monotonicMs(): number {
  const hrtime = g.process?.hrtime
  if (typeof hrtime !== 'function') return performance.now()
  const [seconds, nanoseconds] = hrtime()
  return seconds * 1000 + nanoseconds / 1e6
}

/** A warning where the runtime shows them (Node's `process.emitWarning`), else on the console. */
export function warn(message: string): void {
  if (typeof g.process?.emitWarning === 'function') g.process.emitWarning(message)
  else console.warn(message)
}

/** A random v4 UUID; `crypto.randomUUID` exists only in secure contexts, `getRandomValues` everywhere. */
export function randomUUID(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID()
  const b = crypto.getRandomValues(new Uint8Array(16))
  b[6] = (b[6]! & 0x0f) | 0x40
  b[8] = (b[8]! & 0x3f) | 0x80
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
