/**
 * The executor: runs a plan's operations in dependency order (uploads, then per product: product,
 * prices, default price, variant deletes, option changes, variants, retiring old prices, archives),
 * products side by side with bounded concurrency. Every write carries an idempotency key naming that one
 * intended write: this run, the operation, its content. Retries of 429, 5xx and dropped connections are
 * the SDK transport's, with the same key, so a lost response never doubles a write; a later run plans
 * against what the platform then holds, and a write that state shows is still needed gets a new key (a
 * content-only key would replay a days-old response for a legitimate repeat, such as a price reverted to
 * its old amount). A failed operation is reported with its key and the platform's error, and the run goes
 * on with everything that does not depend on it. `applyCatalog` then reads the store back: exit 0 is only
 * for a store that matches the file.
 */
import {randomUUID} from 'node:crypto'

import {PayappError} from '@payapp/sdk/errors'
import {idempotencyKey} from './normalise.js'
import {planCatalog, type Change, type Op, type Plan, type PlanOptions, type RunState} from './plan.js'
import type {Pacer} from './pacer.js'
import {mapLimit, type CatalogClient} from './store.js'

export type OpStatus = 'done' | 'failed' | 'skipped'

/** One change of the plan ended (all its writes): counted as the plan counts it. */
export interface ApplyEvent {
  status: OpStatus
  change: Change
  error?: {code?: string; message: string; status?: number; request_id?: string}
  completed: number
  total: number
}

/** Counts of the plan's changes (a replace of two writes is one), as `Plan.summary` counts them. */
export interface ApplyResult {
  ok: boolean
  done: number
  failed: number
  skipped: number
  /** Changes the plan has: done + failed + skipped + those a stop left unstarted. */
  total: number
  /** Writes that succeeded (a replace is two, a product with its inline price one). */
  writes: number
  /** The run was stopped (`signal`) before every change had started; a re-run does the rest. */
  stopped: boolean
  failures: {change: Change; error: NonNullable<ApplyEvent['error']>}[]
}

export interface ApplyOptions {
  concurrency?: number
  pacer?: Pacer
  onEvent?: (e: ApplyEvent) => void
  /** Aborted: no new write starts; writes in flight finish and are counted. */
  signal?: AbortSignal
}

/** Guard conflicts explained in the catalogue's terms. */
const HINTS: Record<string, string> = {
  variants_exist: 'the product has variants not in the file; run with --prune to delete them, or list them in the file',
  value_in_use: 'a variant not in the file uses this value; run with --prune to delete it, or list it in the file',
}

function errorOf(err: unknown): NonNullable<ApplyEvent['error']> {
  if (err instanceof PayappError) {
    const hint = err.code && HINTS[err.code] ? ` (${HINTS[err.code]})` : ''
    return {code: err.code, message: err.message + hint, status: err.statusCode, request_id: err.requestId}
  }
  return {message: err instanceof Error ? err.message : String(err)}
}

/** At most `n` at once, first come first served. */
class Semaphore {
  #free: number
  #queue: (() => void)[] = []
  constructor(n: number) {
    this.#free = n
  }
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free--
    else await new Promise<void>((resolve) => this.#queue.push(resolve))
    try {
      return await fn()
    } finally {
      const next = this.#queue.shift()
      if (next) next()
      else this.#free++
    }
  }
}

export async function applyPlan(client: CatalogClient, plan: Plan, opts: ApplyOptions = {}): Promise<ApplyResult> {
  const concurrency = Math.max(1, opts.concurrency ?? 8)
  const slots = new Semaphore(concurrency)
  const outcome = new Map<string, OpStatus>()
  const uploads = new Map<string, string>()
  const run = randomUUID()
  const allOps = [...plan.uploads, ...plan.products.flatMap((p) => p.ops)]
  // A change ends when its last write does: the halves of a replace, a product and its inline price.
  const changesOf = (op: Op) => [op.change, ...(op.covers ?? [])]
  const tracked = new Map<Change, {left: number; status: OpStatus; error?: ApplyEvent['error']}>()
  for (const op of allOps) {
    for (const c of changesOf(op)) {
      const t = tracked.get(c) ?? {left: 0, status: 'done' as OpStatus}
      t.left++
      tracked.set(c, t)
    }
  }
  const result: ApplyResult = {ok: true, done: 0, failed: 0, skipped: 0, total: tracked.size, writes: 0, stopped: false, failures: []}
  const worse = (a: OpStatus, b: OpStatus): OpStatus => (a === 'failed' || b === 'failed' ? 'failed' : a === 'skipped' || b === 'skipped' ? 'skipped' : 'done')

  const runOp = async (op: Op, state: RunState, scope: string) => {
    if (opts.signal?.aborted) return
    let status: OpStatus | undefined
    let error: ApplyEvent['error']
    if (op.needs.some((id) => outcome.get(id) !== 'done')) {
      // A need a stop left unstarted is not a failure: this one is left for the re-run too.
      if (op.needs.some((id) => !outcome.has(id))) return
      status = 'skipped'
      error = {message: `skipped: depends on a change that failed (${op.needs.filter((id) => outcome.get(id) !== 'done').join(', ')})`}
    } else {
      try {
        await slots.run(async () => {
          if (opts.signal?.aborted) return
          await opts.pacer?.beforeWrite()
          if (opts.signal?.aborted) return
          await op.run(state, (content) => ({idempotencyKey: idempotencyKey(`${run}:${scope}`, op.id, content)}))
          status = 'done'
          result.writes++
        })
        if (status === undefined) return
      } catch (err) {
        status = 'failed'
        error = errorOf(err)
      }
    }
    outcome.set(op.id, status!)
    for (const change of changesOf(op)) {
      const t = tracked.get(change)!
      t.status = worse(t.status, status!)
      t.error ??= error
      if (--t.left > 0) continue
      result[t.status]++
      if (t.status !== 'done') {
        result.ok = false
        result.failures.push({change, error: t.error!})
      }
      opts.onEvent?.({status: t.status, change, error: t.error, completed: result.done + result.failed + result.skipped, total: result.total})
    }
  }

  /** Runs ops phase by phase; the ops of one phase go side by side. */
  const runPhases = async (ops: Op[], state: RunState, scope: string) => {
    const phases = [...new Set(ops.map((o) => o.phase))].sort((a, b) => a - b)
    for (const phase of phases) await Promise.all(ops.filter((o) => o.phase === phase).map((op) => runOp(op, state, scope)))
  }

  const shared = (productState: Plan['products'][number]['state']): RunState => ({...productState, client, uploads})
  await runPhases(plan.uploads, shared({priceIds: new Map(), groupIds: new Map(), valueIds: new Map()}), 'files')
  // Products side by side: as many in progress as writes may be in flight.
  await mapLimit(plan.products, concurrency, (p) => runPhases(p.ops, shared(p.state), p.key))
  if (result.done + result.failed + result.skipped < result.total) {
    result.stopped = true
    result.ok = false
  }
  return result
}

/** What a plan still has to do: the store differs from the file by these changes. */
export const pendingChanges = (plan: Pick<Plan, 'changes'>) => plan.changes.filter((c) => c.action !== 'unchanged' && c.action !== 'left')

export interface CatalogRun {
  plan: Plan
  result: ApplyResult
  /** What a read-back plan after the run still wants to change (empty when the store matches the file). */
  remaining: Change[]
  /** The run succeeded and the store read back matches the file. */
  converged: boolean
}

/** Plans, applies, and reads the store back: `converged` is true only when the platform now matches the file. */
export async function applyCatalog(client: CatalogClient, catalog: Parameters<typeof planCatalog>[1], opts: PlanOptions & ApplyOptions = {}, planned?: Plan): Promise<CatalogRun> {
  const plan = planned ?? (await planCatalog(client, catalog, opts))
  const result = await applyPlan(client, plan, opts)
  // A stopped run is not read back: the user asked it to end, and the message says a re-run finishes.
  if (result.stopped) return {plan, result, remaining: [], converged: false}
  const remaining = pendingChanges(await planCatalog(client, catalog, opts))
  return {plan, result, remaining, converged: result.ok && remaining.length === 0}
}
