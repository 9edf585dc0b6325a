/**
 * Human output: tables, money, dates, and a spinner. Its one dependency, string-width, is already in the CLI's
 * bundle (oclif's help uses it), so every command can import this without slowing start-up. Machine output is
 * `--json`, handled by the base command, never these.
 */
import stringWidth from 'string-width'

export interface Column<R> {
  /** Property of the row to show (used when `get` is absent). */
  key: string
  /** Header text; defaults to the key in capitals. */
  header?: string
  get?: (row: R) => unknown
  align?: 'left' | 'right'
}

export interface TableOptions {
  /** Total width to fit in; long cells are cut with `…`. Default: the terminal width when stdout is a TTY, else no limit. */
  maxWidth?: number
}

const GAP = '  '
const MIN_COLUMN = 6

function cellText(value: unknown): string {
  if (value === undefined || value === null) return ''
  // One line per row: a newline inside a cell would break the columns.
  return String(value).replace(/\s*\n\s*/g, ' ')
}

/** Terminal cells: CJK and emoji take two, combining marks none (a character count would drift the columns). */
const width = (s: string): number => stringWidth(s)

let graphemes: Intl.Segmenter | undefined
/** `s` cut to at most `w` cells with `…`, between whole characters as a reader sees them (an emoji with its modifiers). */
function fit(s: string, w: number): string {
  if (width(s) <= w) return s
  let out = ''
  for (const {segment} of (graphemes ??= new Intl.Segmenter(undefined, {granularity: 'grapheme'})).segment(s)) {
    if (width(out + segment) > w - 1) break
    out += segment
  }
  return out + '…'
}

/** An aligned table with a header row, as one string (no trailing newline). */
export function table<R>(rows: readonly R[], columns: ReadonlyArray<Column<R> | string>, options: TableOptions = {}): string {
  const cols: Column<R>[] = columns.map((c) => (typeof c === 'string' ? {key: c} : c))
  const headers = cols.map((c) => c.header ?? c.key.toUpperCase().replace(/_/g, ' '))
  const cells = rows.map((row) => cols.map((c) => cellText(c.get ? c.get(row) : (row as Record<string, unknown>)[c.key])))
  const widths = cols.map((_, i) => Math.max(width(headers[i]), ...cells.map((r) => width(r[i]))))

  const maxWidth = options.maxWidth ?? (process.stdout.isTTY ? process.stdout.columns : undefined)
  if (maxWidth && maxWidth > 0) {
    // Shrink the widest column one character at a time until the table fits (or nothing can shrink).
    const total = () => widths.reduce((a, b) => a + b, 0) + GAP.length * (widths.length - 1)
    while (total() > maxWidth) {
      const widest = widths.indexOf(Math.max(...widths))
      if (widths[widest] <= MIN_COLUMN) break
      widths[widest]--
    }
  }

  const line = (values: string[]) =>
    values
      .map((v, i) => {
        const text = fit(v, widths[i])
        const pad = ' '.repeat(widths[i] - width(text))
        return cols[i].align === 'right' ? pad + text : text + pad
      })
      .join(GAP)
      .trimEnd()
  return [line(headers), ...cells.map(line)].join('\n')
}

/** Amounts format through the one currency table (packages/sdk/src/currency.ts) that fees and the hosted page use too. */
export {money} from '@payapp/sdk/currency'

/** Unix seconds → `2024-05-01 12:00:00 UTC` (UTC, so output is the same on every machine). */
export function date(unixSeconds: number | null | undefined): string {
  if (unixSeconds === null || unixSeconds === undefined || !Number.isFinite(unixSeconds)) return ''
  return new Date(unixSeconds * 1000).toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, ' UTC')
}

export interface Spinner {
  update(text: string): void
  /** Stops and leaves a final line (e.g. `✓ Done`), or clears the line when no text is given. */
  stop(finalText?: string): void
}

export interface SpinnerOptions {
  /** True under `--json`: no spinner at all. */
  json?: boolean
  stream?: NodeJS.WriteStream
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']

/**
 * A spinner on stderr, only when stderr is a terminal and output is not JSON: pipes, CI logs and
 * `--json` consumers never see control characters.
 */
export function spinner(text: string, options: SpinnerOptions = {}): Spinner {
  const stream = options.stream ?? process.stderr
  if (options.json || !stream.isTTY || process.env.CI) return {update() {}, stop() {}}
  let current = text
  let frame = 0
  const draw = () => stream.write(`\r\x1b[K${FRAMES[frame++ % FRAMES.length]} ${current}`)
  draw()
  const timer = setInterval(draw, 80)
  timer.unref()
  let stopped = false
  return {
    update(next) {
      current = next
    },
    stop(finalText) {
      if (stopped) return
      stopped = true
      clearInterval(timer)
      stream.write('\r\x1b[K' + (finalText ? finalText + '\n' : ''))
    },
  }
}
