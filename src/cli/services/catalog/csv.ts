/**
 * The catalogue as CSV: one row per variant (a product without variants is one row with an empty sku),
 * product columns that may be left empty on a product's later rows, and one `option:<Group>` column
 * per option group, as many groups as the products have.
 */
import {parse} from 'csv-parse/sync'
import {stringify} from 'csv-stringify/sync'
import type {z} from 'zod'

import {closestId} from '../../did-you-mean.js'
import type {CatalogFile, CatalogFileInput} from './schema.js'

export const CSV_COLUMNS = [
  'product_key', 'name', 'description', 'images', 'store_visible',
  'price_key', 'price_currency', 'price_unit_amount', 'price_recurring_interval',
  'sku', 'stock_qty', 'track_inventory', 'title', 'image',
] as const
const OPTION_PREFIX = 'option:'

/** Where each object of the parsed file came from, to name the row in an error. */
export type RowMap = Map<string, number>

/** Where each field of the parsed file came from: its line and the column header as written. */
export type CellMap = Map<string, {line: number; column: string; value: string}>

type Row = Record<string, string>

function cell(value: string | undefined): string | undefined {
  const v = value?.trim()
  return v === undefined || v === '' ? undefined : v
}

/** `"25"` → 25, `"true"` → true; anything else stays a string so the schema names the field. */
function typed(value: string | undefined, kind: 'number' | 'boolean'): unknown {
  if (value === undefined) return undefined
  if (kind === 'number') return /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value
  const lower = value.toLowerCase()
  return lower === 'true' ? true : lower === 'false' ? false : value
}

export class CatalogCsvError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'))
  }
}

/** Every header must be a known column or `option:<group>`; an unknown one is named, with the likely intended one. */
function checkHeader(header: string[]): string[] {
  const known: readonly string[] = CSV_COLUMNS
  return header.flatMap((raw) => {
    const column = raw.trim()
    if (known.includes(column) || (column.startsWith(OPTION_PREFIX) && column.length > OPTION_PREFIX.length)) return []
    const near = closestId(column, known)
    return [`line 1: unknown column '${raw}' (${near ? `did you mean '${near}'?` : `an option group's column is '${OPTION_PREFIX}<group>', e.g. '${OPTION_PREFIX}${column}'`})`]
  })
}

/** Parses CSV text into the file's input shape; `rows` maps object paths (e.g. `products.0.variants.1`) to line numbers, `cells` field paths to their cells. */
export function parseCatalogCsv(text: string): {input: CatalogFileInput; rows: RowMap; cells: CellMap} {
  const unknown: string[] = []
  const records = parse(text, {
    columns: (header: string[]) => {
      unknown.push(...checkHeader(header))
      return header
    },
    skip_empty_lines: true,
    bom: true,
    info: true,
    relax_column_count: false,
  }) as {record: Row; info: {lines: number}}[]
  if (unknown.length > 0) throw new CatalogCsvError(unknown)
  const rows: RowMap = new Map()
  const cells: CellMap = new Map()
  /** Notes where `path` (dotted) came from: the first non-empty cell of `column` that set it. */
  const from = (path: string, record: Row, line: number, column: string) => {
    const value = record[column]
    if (!cells.has(path) && value !== undefined && value.trim() !== '') cells.set(path, {line, column, value: value.trim()})
  }
  const products: Record<string, unknown>[] = []
  const byKey = new Map<string, {product: Record<string, any>; index: number; prices: Map<string, Record<string, unknown>>; groups: Map<string, string[]>}>()

  for (const {record, info} of records) {
    const line = info.lines
    const productKey = cell(record.product_key)
    if (!productKey) throw new CatalogCsvError([`line ${line}, column product_key: empty, but required`])
    let entry = byKey.get(productKey)
    if (!entry) {
      const product: Record<string, any> = {key: productKey, prices: [], variants: []}
      entry = {product, index: products.length, prices: new Map(), groups: new Map()}
      byKey.set(productKey, entry)
      products.push(product)
      rows.set(`products.${entry.index}`, line)
    }
    const {product} = entry
    const productFields: Record<string, unknown> = {
      name: cell(record.name),
      description: cell(record.description),
      images: cell(record.images)?.split('|').map((s) => s.trim()).filter(Boolean),
      store_visible: typed(cell(record.store_visible), 'boolean'),
    }
    for (const [field, value] of Object.entries(productFields)) {
      if (value === undefined) continue
      from(`products.${entry.index}.${field}`, record, line, field)
      if (product[field] !== undefined && JSON.stringify(product[field]) !== JSON.stringify(value)) {
        throw new CatalogCsvError([`line ${line}: ${field} differs from an earlier row of product '${productKey}'; leave it empty on later rows`])
      }
      product[field] = value
    }

    const priceKey = cell(record.price_key)
    if (priceKey) {
      const interval = cell(record.price_recurring_interval)
      const price: Record<string, unknown> = {
        key: priceKey,
        currency: cell(record.price_currency),
        unit_amount: typed(cell(record.price_unit_amount), 'number'),
        ...(interval ? {recurring: {interval}} : {}),
      }
      const known = entry.prices.get(priceKey)
      if (!known) {
        const at = `products.${entry.index}.prices.${product.prices.length}`
        rows.set(at, line)
        for (const [field, column] of PRICE_COLUMNS) from(`${at}.${field}`, record, line, column)
        entry.prices.set(priceKey, price)
        product.prices.push(price)
      } else if ((price.currency !== undefined || price.unit_amount !== undefined) && JSON.stringify({...known}) !== JSON.stringify(price)) {
        throw new CatalogCsvError([`line ${line}: price '${priceKey}' differs from an earlier row; a price key has one currency, amount and interval`])
      }
    }

    const options: Record<string, string> = {}
    const optionColumns: Record<string, string> = {}
    for (const [column, value] of Object.entries(record)) {
      if (!column.startsWith(OPTION_PREFIX)) continue
      const v = cell(value)
      if (v === undefined) continue
      const group = column.slice(OPTION_PREFIX.length).trim()
      options[group] = v
      optionColumns[group] = column
      const values = entry.groups.get(group) ?? []
      if (!values.includes(v)) values.push(v)
      entry.groups.set(group, values)
    }
    const sku = cell(record.sku)
    const variantFields: Record<string, unknown> = {
      stock_qty: typed(cell(record.stock_qty), 'number'),
      track_inventory: typed(cell(record.track_inventory), 'boolean'),
      title: cell(record.title),
      image: cell(record.image),
    }
    const isVariant = sku !== undefined || Object.keys(options).length > 0 || Object.values(variantFields).some((v) => v !== undefined)
    if (isVariant) {
      const variant: Record<string, unknown> = {options}
      if (sku) variant.sku = sku
      // The first price is the default: a row on it inherits, as the default variant does.
      if (priceKey && product.prices[0]?.key !== priceKey) variant.price = priceKey
      for (const [field, value] of Object.entries(variantFields)) if (value !== undefined) variant[field] = value
      const at = `products.${entry.index}.variants.${product.variants.length}`
      rows.set(at, line)
      for (const field of ['sku', ...Object.keys(variantFields)]) from(`${at}.${field}`, record, line, field)
      if (variant.price) from(`${at}.price`, record, line, 'price_key')
      for (const [group, column] of Object.entries(optionColumns)) from(`${at}.options.${group}`, record, line, column)
      product.variants.push(variant)
    }
  }
  for (const entry of byKey.values()) {
    if (entry.groups.size > 0) entry.product.options = Object.fromEntries(entry.groups)
  }
  for (const [i, p] of products.entries()) from(`products.${i}.key`, {product_key: String(p.key)}, rows.get(`products.${i}`)!, 'product_key')
  return {input: {products: products as CatalogFileInput['products']}, rows, cells}
}

const PRICE_COLUMNS = [
  ['key', 'price_key'],
  ['currency', 'price_currency'],
  ['unit_amount', 'price_unit_amount'],
  ['recurring', 'price_recurring_interval'],
] as const

/** What a cell must be, from the schema's issue, in words a spreadsheet user reads. */
function expectation(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return issue.expected === 'number' || issue.expected === 'int' ? 'a whole number' : issue.expected === 'boolean' ? 'true or false' : `a ${issue.expected}`
    case 'too_small':
      return issue.origin === 'number' || issue.origin === 'int' ? `at least ${issue.minimum}` : `at least ${issue.minimum} characters long`
    case 'too_big':
      return issue.origin === 'number' || issue.origin === 'int' ? `at most ${issue.maximum}` : `at most ${issue.maximum} characters long`
    case 'invalid_value':
      return `one of ${issue.values.map(String).join(', ')}`
    default:
      return issue.message.replace(/^must be /, '')
  }
}

/**
 * A schema issue in the CSV file's terms: the line, the column header as written, the value, and what it
 * must be (`line 3, column price_unit_amount: '25.5' must be a whole number`); a check across rows (a
 * duplicate sku) keeps its message. `rowLine` finds the line of the nearest object for a field left empty.
 */
export function csvProblem(issue: z.core.$ZodIssue, cells: CellMap, rowLine: (path: PropertyKey[]) => string): string {
  const path = issue.path.map(String)
  for (let n = path.length; n > 0; n--) {
    const cell = cells.get(path.slice(0, n).join('.'))
    if (!cell) continue
    if (issue.code === 'custom') return `line ${cell.line}, column ${cell.column}: '${cell.value}'${/^must be /.test(issue.message) ? ' ' : ': '}${issue.message}`
    const integer = issue.code === 'invalid_type' && typeof issue.input === 'number'
    return `line ${cell.line}, column ${cell.column}: '${cell.value}' must be ${integer ? 'a whole number' : expectation(issue)}`
  }
  const column = columnOf(path)
  const where = `${rowLine(issue.path)}${column ? `, column ${column}` : ''}`
  if (issue.code === 'invalid_type' && issue.input === undefined) return `${where}: empty, but required`
  return `${where}: ${issue.code === 'custom' ? issue.message : `must be ${expectation(issue)}`}`
}

/** The column a field path is read from, for a field left empty. */
function columnOf(path: string[]): string | undefined {
  const [, , list, , field, group] = path
  if (path.length === 3) return path[2] === 'key' ? 'product_key' : path[2]
  if (list === 'prices' && field) return PRICE_COLUMNS.find(([f]) => f === field)?.[1]
  if (list === 'variants' && field) return field === 'options' && group ? `${OPTION_PREFIX}${group}` : field === 'price' ? 'price_key' : field
  return undefined
}

/** The catalogue as CSV (the inverse of `parseCatalogCsv` for the fields CSV has columns for); without `full`, columns empty on every row are left out. */
export function catalogToCsv(file: CatalogFile, full = true): string {
  const groups = [...new Set(file.products.flatMap((p) => Object.keys(p.options)))]
  const header = [...CSV_COLUMNS, ...groups.map((g) => OPTION_PREFIX + g)]
  const out: (string | number | boolean)[][] = [header]
  for (const p of file.products) {
    const defaultPrice = p.prices.find((pr) => pr.default) ?? p.prices[0]
    const priceCells = (key: string | undefined) => {
      const pr = p.prices.find((x) => x.key === key)
      return pr ? [pr.key, pr.currency, pr.unit_amount, pr.recurring?.interval ?? ''] : ['', '', '', '']
    }
    const productCells = [p.key, p.name, p.description ?? '', (p.images ?? []).join('|'), p.store_visible === undefined ? '' : p.store_visible]
    const laterProductCells = [p.key, '', '', '', '']
    // The default price must be on the first row (the first price is the default): inheriting variants first.
    const variants = [...p.variants].sort((a, b) => Number(a.price !== undefined) - Number(b.price !== undefined))
    const lines: (string | number | boolean)[][] = variants.map((v) => [
      ...priceCells(v.price ?? defaultPrice?.key),
      v.sku ?? '', v.stock_qty ?? '', v.track_inventory ?? '', v.title ?? '', v.image ?? '',
      ...groups.map((g) => v.options[g] ?? ''),
    ])
    if (variants.length === 0 || variants[0]!.price !== undefined) lines.unshift([...priceCells(defaultPrice?.key), '', '', '', '', '', ...groups.map(() => '')])
    const used = new Set([defaultPrice?.key, ...variants.map((v) => v.price)])
    for (const pr of p.prices) if (!used.has(pr.key)) lines.push([...priceCells(pr.key), '', '', '', '', '', ...groups.map(() => '')])
    lines.forEach((line, i) => out.push([...(i === 0 ? productCells : laterProductCells), ...line]))
  }
  const used = full ? header.map(() => true) : header.map((_, c) => out.slice(1).some((row) => row[c] !== ''))
  return stringify(used.every(Boolean) ? out : out.map((row) => row.filter((_, c) => used[c])), {cast: {boolean: (b) => String(b)}})
}
