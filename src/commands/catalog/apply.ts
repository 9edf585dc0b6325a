import {Args, Flags} from '@oclif/core'

import {CatalogCommand, catalogFlags, catalogRetryFlag} from '../../cli/catalog-command.js'
import {ExitCode} from '../../cli/exit-codes.js'
import {canPrompt, confirm} from '../../cli/prompt.js'

export default class CatalogApply extends CatalogCommand<typeof CatalogApply> {
  static override summary = 'Make the platform match a catalogue file: create, update, replace prices, and with --prune remove what the file does not list.'
  static override description = `Changes run in dependency order (uploads, products, prices, default price, option groups and values, variants, then archives and deletes). A changed amount, currency or interval replaces the price: the new one is created as the default, variants move to it, then the old one is deactivated.
Every write carries an idempotency key naming that one write, so retries never double it; a run killed at any point can be started again and does what is left, and a second run after success writes nothing.
After the writes the store is read back: exit 0 means it matches the file. With --json: one JSON line per completed change ({status, action, kind, key, error?}), then {summary} (with converged and the remaining changes). Exit 8 when some change failed or was skipped, or the store read back still differs from the file; a re-run does the rest.
Without a TTY, a progress line every 2 seconds. SIGINT/SIGTERM: no new write starts, the ones in flight finish, and the run says how many of how many changes landed (exit 130/143); a re-run finishes.`
  static override examples = [
    '<%= config.bin %> catalog apply catalog.yaml',
    '<%= config.bin %> catalog apply catalog.csv --prune --yes --json',
    '<%= config.bin %> catalog apply catalog.yaml --env live --rate 50',
  ]

  static override args = {file: Args.string({required: true, description: 'Catalogue file (.yaml, .yml, .json, .csv), or - for YAML/JSON on stdin.'})}
  static override flags = {
    prune: Flags.boolean({description: 'Archive products and delete variants that are in the store but not in the file.'}),
    yes: Flags.boolean({char: 'y', description: 'Apply archives, deletes and deactivations without asking (required without a TTY).'}),
    'dry-run': Flags.boolean({description: 'Plan only; write nothing.'}),
    rate: Flags.string({
      default: 'auto',
      env: 'PAYAPP_CATALOG_RATE',
      description: "auto (follow the platform's rate-limit headers, or wait out a 429's Retry-After), off, or N writes per minute.",
    }),
    ...catalogFlags,
    ...catalogRetryFlag,
  }

  async run() {
    const {applyCatalog, Pacer, parseRate, planCatalog} = await import('../../cli/services/catalog/index.js')
    const view = await import('../../cli/services/catalog/view.js')
    const {flags} = this
    let rate
    try {
      rate = parseRate(flags.rate)
    } catch (err) {
      this.usage((err as Error).message, '--rate')
    }
    const {catalog, baseDir, format} = await this.readCatalog(this.args.file)
    const pacer = new Pacer(rate)
    const client = await this.catalogClient(pacer)
    const json = this.jsonEnabled()
    const lines = view.jsonLines(process.stdout)

    const planOptions = {prune: flags.prune, baseDir, concurrency: flags.concurrency, csv: format === 'csv'}
    const plan = await planCatalog(client, catalog, planOptions)
    if (flags['dry-run']) return this.render({changes: plan.changes, summary: plan.summary}, (out) => this.log(view.planTable(out)))
    if (plan.destructive && !flags.yes) await this.confirmDestructive(view.planTable(plan))

    const tty = !json && process.stderr.isTTY && !process.env.CI
    const bar = tty ? view.progressBar(process.stderr) : undefined
    let failed = 0
    let completed = 0
    const startedAt = Date.now()
    const total = plan.summary.create + plan.summary.update + plan.summary.replace + plan.summary.archive + plan.summary.delete
    // Without a TTY (a CI log) and without --json: a line every few seconds, so a long apply is seen alive.
    const ticker = !json && !bar ? setInterval(() => process.stderr.write(view.progressLine(completed, total, failed, startedAt) + '\n'), view.PROGRESS_EVERY_MS) : undefined
    // SIGINT/SIGTERM: no new write starts, the ones in flight finish, and the run says what landed. A second
    // signal ends the process at once (the handlers are once).
    const stop = new AbortController()
    let stoppedBy: NodeJS.Signals | undefined
    const onSignal = (signal: NodeJS.Signals) => {
      stoppedBy ??= signal
      stop.abort()
      if (!json) process.stderr.write(`${bar ? '\r\x1b[K' : ''}Stopping (${signal}): no new writes; waiting for the ones in flight…\n`)
    }
    process.once('SIGINT', onSignal)
    process.once('SIGTERM', onSignal)
    let run
    try {
      run = await applyCatalog(client, catalog, {
        ...planOptions,
        pacer,
        signal: stop.signal,
        onEvent: (e) => {
          completed = e.completed
          if (e.status !== 'done') failed++
          if (json) lines.write({status: e.status, ...e.change, ...(e.error ? {error: e.error} : {})})
          else if (e.status !== 'done') process.stderr.write(`${bar ? '\r\x1b[K' : ''}${e.status}: ${e.change.action} ${e.change.kind} ${e.change.key}: ${e.error?.code ? `${e.error.code}: ` : ''}${e.error?.message}\n`)
          bar?.update(e, failed)
        },
      }, plan)
    } finally {
      clearInterval(ticker)
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
      bar?.stop()
    }
    const {result, remaining, converged} = run
    const summary = {done: result.done, failed: result.failed, skipped: result.skipped, total: result.total, writes: result.writes, plan: plan.summary, converged, remaining, ...(stoppedBy ? {stopped: stoppedBy} : {})}
    if (json) {
      lines.write({summary})
      lines.flush()
    } else if (stoppedBy) {
      process.stderr.write(view.stoppedLine(result, stoppedBy) + '\n')
    } else {
      this.log(`${view.resultLine(result)} Plan was: ${view.summaryLine(plan.summary)}.`)
      if (result.ok && !converged) process.stderr.write(view.notConverged(remaining))
    }
    // 128 + the signal's number, as a shell reports a process a signal ended.
    if (stoppedBy) this.exit(stoppedBy === 'SIGINT' ? 130 : 143)
    if (!converged) this.exit(ExitCode.PARTIAL)
    return undefined
  }

  /** Archives, deletes and deactivations: asked on a TTY, refused without one unless --yes. */
  private async confirmDestructive(planText: string): Promise<void> {
    if (!canPrompt() || this.jsonEnabled()) {
      this.usage('The plan archives, deletes or deactivates objects: pass --yes to apply it (not prompting: stdin is not a terminal or --json is set)', '--yes')
    }
    process.stderr.write(planText + '\n')
    if (!(await confirm('Apply these changes, including the removals?', false))) this.usage('Not applied: the removals were not confirmed (pass --yes to skip the question)', '--yes')
  }
}
