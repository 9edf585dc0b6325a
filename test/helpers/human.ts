/**
 * Reads the CLI's human output the way a user's eye does: a table's header and the cells of the row
 * that starts with an id, or the value next to a label in a key/value block. Cells are separated by two
 * or more spaces, so "12.34 EUR" stays one cell; an empty cell simply does not appear.
 */
import {expect} from 'chai'

const cells = (line: string) => line.trim().split(/\s{2,}/)

/** The table's header cells. */
export function header(stdout: string): string[] {
  return cells(stdout.split('\n')[0])
}

/** The cells of the one row whose first cell is `id`. */
export function row(stdout: string, id: string): string[] {
  const lines = stdout.split('\n').filter((l) => l.startsWith(id + ' ') || l === id)
  expect(lines, `one row for ${id} in:\n${stdout}`).to.have.length(1)
  return cells(lines[0])
}

/** Number of data rows of a table printed alone. */
export const rowCount = (stdout: string) => stdout.trimEnd().split('\n').length - 1

/** `Label  value` lines as an object; stops at the first blank line (what follows is another section). */
export function block(stdout: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const line of stdout.split('\n')) {
    if (line.trim() === '') break
    const [label, ...rest] = line.split(/\s{2,}/)
    out[label] = rest.join('  ')
  }
  return out
}
