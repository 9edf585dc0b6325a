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
  return `Applied ${r.done} change${r.done === 1 ? '' : 's'}${r.failed ? `, ${r.failed} failed` : ''}${r.skipped ? `, ${r.skipped} skipped (they depend on a failed change)` : ''}.`
}

/**
 * `--json` lines, one per object, written once per event-loop turn: changes complete in bursts, and on a
 * pipe each write is a syscall (one per change was a tenth of an apply's CPU). `flush` before exiting.
 */
export function jsonLines(stream: NodeJS.WritableStream): {write: (obj: unknown) => void; flush: () => void} {
  let pending = ''
  let scheduled = false
  const flush = () => {
    scheduled = false
    if (pending === '') return
    stream.write(pending)
    pending = ''
  }
  return {
    write(obj) {
      pending += JSON.stringify(obj) + '\n'
      if (!scheduled) {
        scheduled = true
        setImmediate(flush)
      }
    },
    flush,
  }
}
