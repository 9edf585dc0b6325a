/**
 * Reading a catalogue file: YAML or JSON by extension (`-` reads stdin as YAML, which JSON is a subset
 * of), CSV for `.csv`. Every error names the file, the line and the field.
 */
import {readFile} from 'node:fs/promises'
import {dirname, extname, resolve} from 'node:path'

import {LineCounter, parseDocument, stringify as toYaml} from 'yaml'
import type {z} from 'zod'

import {catalogToCsv, CatalogCsvError, csvProblem, parseCatalogCsv} from './csv.js'
import {catalogFile, type CatalogFile} from './schema.js'

export type CatalogFormat = 'yaml' | 'json' | 'csv'

export class CatalogFileError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
    /** A file that could not be read at all: one line, no list. */
    unreadable = false,
  ) {
    super(unreadable ? `${file}: ${problems[0]}` : `${file} is not a valid catalogue:\n  ${problems.join('\n  ')}`)
    this.name = 'CatalogFileError'
  }
}

/** Why a file could not be read, in words (never a bare `ENOENT`). */
function unreadable(path: string, err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'ENOENT':
      return `no such file (looked for ${resolve(path)})`
    case 'EISDIR':
      return 'is a directory, not a catalogue file'
    case 'EACCES':
    case 'EPERM':
      return 'permission denied (the file cannot be read by this user)'
    default:
      return `cannot be read: ${err.message}`
  }
}

export interface LoadedCatalog {
  catalog: CatalogFile
  format: CatalogFormat
  /** Local image paths are relative to this directory. */
  baseDir: string
  source: string
}

export function formatOf(path: string): CatalogFormat {
  const ext = extname(path).toLowerCase()
  return ext === '.csv' ? 'csv' : ext === '.json' ? 'json' : 'yaml'
}

const dotted = (path: PropertyKey[]) => path.map(String).join('.')
const fieldName = (path: PropertyKey[]) => path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').replace(/^\./, '')

/** Parses and validates catalogue text; `source` names it in errors. */
export function parseCatalog(text: string, format: CatalogFormat, source: string): CatalogFile {
  let input: unknown
  let locate: (path: PropertyKey[]) => string
  let describe: ((issue: z.core.$ZodIssue) => string) | undefined
  if (format === 'csv') {
    let parsed: ReturnType<typeof parseCatalogCsv>
    try {
      parsed = parseCatalogCsv(text)
    } catch (err) {
      throw new CatalogFileError(source, err instanceof CatalogCsvError ? err.problems : [`CSV: ${(err as Error).message}`])
    }
    input = parsed.input
    locate = (path) => {
      // The row of the nearest object the path is inside.
      for (let n = path.length; n > 0; n--) {
        const line = parsed.rows.get(dotted(path.slice(0, n)))
        if (line !== undefined) return `line ${line}`
      }
      return 'file'
    }
    describe = (issue) => csvProblem(issue, parsed.cells, locate)
  } else {
    // JSON is read by JSON.parse (fast for large catalogues); YAML positions are only worked out for an error.
    if (format === 'json') {
      try {
        input = JSON.parse(text)
      } catch (err) {
        throw new CatalogFileError(source, [`JSON: ${(err as Error).message}`])
      }
    }
    let located: ((path: PropertyKey[]) => string) | undefined
    const parseYaml = () => {
      const lineCounter = new LineCounter()
      const doc = parseDocument(text, {lineCounter, prettyErrors: false})
      return {doc, lineCounter}
    }
    if (format === 'yaml') {
      const {doc, lineCounter} = parseYaml()
      if (doc.errors.length > 0) {
        throw new CatalogFileError(source, doc.errors.map((e) => `line ${lineCounter.linePos(e.pos[0]).line}: ${e.message.split('\n')[0]}`))
      }
      input = doc.toJS() ?? {}
      located = nodeLocator(doc, lineCounter)
    }
    locate = (path) => {
      if (!located) {
        const {doc, lineCounter} = parseYaml()
        located = nodeLocator(doc, lineCounter)
      }
      return located(path)
    }
  }
  const result = catalogFile.safeParse(input)
  if (!result.success) {
    // One problem per field: a cell that fails two checks (format, then support) is named once.
    const byField = new Map<string, string>()
    for (const issue of result.error.issues) {
      const at = issue.path.map(String).join('.')
      if (!byField.has(at)) byField.set(at, describe?.(issue) ?? `${locate(issue.path)}: ${fieldName(issue.path) || '(file)'}: ${issue.message}`)
    }
    throw new CatalogFileError(source, [...byField.values()])
  }
  return result.data
}

/** The line of the nearest node on a path (JSON is YAML, so one locator serves both). */
function nodeLocator(doc: ReturnType<typeof parseDocument>, lineCounter: LineCounter) {
  return (path: PropertyKey[]) => {
    for (let n = path.length; n >= 0; n--) {
      const node = doc.getIn(path.slice(0, n) as unknown[], true) as {range?: [number, number, number]} | undefined
      if (node?.range) return `line ${lineCounter.linePos(node.range[0]).line}`
    }
    return 'file'
  }
}

/** Reads FILE, or stdin for `-`. */
export async function loadCatalog(path: string, readStdin: () => Promise<string> = readAll): Promise<LoadedCatalog> {
  if (path === '-') return {catalog: parseCatalog(await readStdin(), 'yaml', '<stdin>'), format: 'yaml', baseDir: process.cwd(), source: '<stdin>'}
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    throw new CatalogFileError(path, [unreadable(path, err as NodeJS.ErrnoException)], true)
  }
  return {catalog: parseCatalog(text, formatOf(path), path), format: formatOf(path), baseDir: dirname(resolve(path)), source: path}
}

/** A product without the empty lists and maps the file format defaults to (`prices: []`, `options: {}`). */
function withoutEmpty(product: CatalogFile['products'][number]): CatalogFile['products'][number] {
  const empty = (v: unknown) => (Array.isArray(v) ? v.length === 0 : typeof v === 'object' && v !== null && Object.keys(v).length === 0)
  const out: Record<string, unknown> = Object.fromEntries(Object.entries(product).filter(([k, v]) => !(['prices', 'options', 'variants'] as string[]).includes(k) || !empty(v)))
  if (product.variants.length > 0) out.variants = product.variants.map((v) => (empty(v.options) ? Object.fromEntries(Object.entries(v).filter(([k]) => k !== 'options')) : v))
  return out as CatalogFile['products'][number]
}

async function readAll(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

/** The catalogue as text in the given format; without `full`, CSV leaves out the columns no row uses. */
export function serializeCatalog(catalog: CatalogFile, format: CatalogFormat, full = true): string {
  if (format === 'csv') return catalogToCsv(catalog, full)
  if (!full) catalog = {products: catalog.products.map(withoutEmpty)}
  if (format === 'json') return JSON.stringify(catalog, null, 2) + '\n'
  return toYaml(catalog, {lineWidth: 0})
}
