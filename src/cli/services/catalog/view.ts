/** Human output of the catalogue commands: the plan as a table, a summary line, the progress bar. */
import {table} from '../../output.js'
import type {ApplyEvent, ApplyResult} from './apply.js'
import type {Change, Summary} from './plan.js'

const SHOWN: Change['action'][] = ['create', 'update', 'replace', 'archive', 'delete', 'blocked', 'left']

export function summaryLine(s: Summary): string {
  return (Object.entries(s) as [keyof Summary, number][])
    .filter(([action, n]) => n > 0 || ['create', 'update', 'unchanged'].includes(action))
    .map(([action, n]) => `${n} ${action === 'left' ? 'left as is' : action === 'blocked' ? 'blocked' : `to ${action}`}`.replace('to unchanged', 'unchanged'))
    .join(', ')
}

export function planTable({changes, summary}: {changes: Change[]; summary: Summary}): string {
  const rows = changes.filter((c) => SHOWN.includes(c.action)).sort((a, b) => SHOWN.indexOf(a.action) - SHOWN.indexOf(b.action))
  const body = rows.length === 0 ? 'No changes: the platform matches the file.' : table(rows, ['action', 'kind', 'key', {key: 'fields', get: (c) => [c.fields?.join(', '), c.reason].filter(Boolean).join(' — ')}])
  return `${body}\n\nPlan: ${summaryLine(summary)}.`
}

/** A progress bar with counts and ETA on a TTY stream; nothing elsewhere. */
export function progressBar(stream: NodeJS.WriteStream) {
  const started = Date.now()
  let last = 0
  return {
    update(e: ApplyEvent, failed: number) {
      const now = Date.now()
      if (now - last < 100 && e.completed < e.total) return
      last = now
      const width = 30
      const filled = Math.round((e.completed / Math.max(1, e.total)) * width)
      const rate = e.completed / Math.max(1, now - started)
      const eta = rate > 0 ? Math.ceil((e.total - e.completed) / rate / 1000) : 0
      stream.write(`\r\x1b[K[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${e.completed}/${e.total}${failed ? ` (${failed} failed)` : ''} ETA ${eta}s`)
    },
    stop() {
      stream.write('\r\x1b[K')
    },
  }
}

export function resultLine(r: ApplyResult): string {
  return `Applied ${r.done} of ${r.total} change${r.total === 1 ? '' : 's'}${r.failed ? `, ${r.failed} failed` : ''}${r.skipped ? `, ${r.skipped} skipped (they depend on a failed change)` : ''}.`
}

/** Without a TTY: one line every PROGRESS_EVERY_MS, so a CI log shows a long apply is alive. */
export const PROGRESS_EVERY_MS = 2000

export function progressLine(completed: number, total: number, failed: number, startedAt: number, now = Date.now()): string {
  const pct = Math.floor((completed / Math.max(1, total)) * 100)
  return `progress: ${completed}/${total} changes (${pct}%)${failed ? `, ${failed} failed` : ''}, ${Math.round((now - startedAt) / 1000)}s`
}

export function stoppedLine(r: ApplyResult, signal: string): string {
  return `Stopped by ${signal}: ${r.done} of ${r.total} changes landed${r.failed ? ` (${r.failed} failed)` : ''}; the writes in flight finished. Run the same command again to finish the rest.`
}

/**
 * Whether a retry's wait is news: requests in flight that meet one 429 or outage wait together, and the
 * user needs one line for that pause, not one per request.
 */
export function oncePerWait(now: () => number = Date.now): (delayMs: number) => boolean {
  let until = 0
  return (delayMs) => {
    const end = now() + delayMs
    // A wait ending within a second of the announced one is that same pause.
    if (end <= until + 1000) return false
    until = end
    return true
  }
}

/** After a run whose writes all succeeded, the store read back still differs from the file. */
export function notConverged(remaining: readonly Change[]): string {
  const shown = remaining.slice(0, 10).map((c) => `  ${c.action} ${c.kind} ${c.key}${c.reason ? ` (${c.reason})` : ''}`)
  const more = remaining.length > shown.length ? [`  … and ${remaining.length - shown.length} more`] : []
  return [`The store read back still differs from the file (${remaining.length} change${remaining.length === 1 ? '' : 's'}):`, ...shown, ...more, 'Run `payapp catalog plan` to see why, then apply again.', ''].join('\n')
}

/** Longest a completed change's line waits before it is written. */
const LINE_DELAY_MS = 50
/** Written at once past this many characters. */
const LINE_BUFFER = 64 * 1024

/**
 * `--json` lines, one per object, written in batches (at most LINE_DELAY_MS late): on a pipe each write
 * is a blocking syscall, and a pipe holds few small writes, so one write per change stalled the run
 * whenever the reader was slow to drain it (a tenth of an apply's time on a busy machine). `flush`
 * before exiting.
 */
export function jsonLines(stream: NodeJS.WritableStream): {write: (obj: unknown) => void; flush: () => void} {
  let pending = ''
  let timer: NodeJS.Timeout | undefined
  const flush = () => {
    clearTimeout(timer)
    timer = undefined
    if (pending === '') return
    stream.write(pending)
    pending = ''
  }
  return {
    write(obj) {
      pending += JSON.stringify(obj) + '\n'
      if (pending.length >= LINE_BUFFER) flush()
      else timer ??= setTimeout(flush, LINE_DELAY_MS)
    },
    flush,
  }
}
