/**
 * The catalogue as CSV: one row per variant (a product without variants is one row with an empty sku),
 * product columns that may be left empty on a product's later rows, and one `option:<Group>` column
 * per option group, as many groups as the products have.
 */
import {parse} from 'csv-parse/sync'
import {stringify} from 'csv-stringify/sync'

import type {CatalogFile, CatalogFileInput} from './schema.js'

export const CSV_COLUMNS = [
  'product_key', 'name', 'description', 'images', 'store_visible',
  'price_key', 'price_currency', 'price_unit_amount', 'price_recurring_interval',
  'sku', 'stock_qty', 'track_inventory', 'title', 'image',
] as const
const OPTION_PREFIX = 'option:'

/** Where each object of the parsed file came from, to name the row in an error. */
export type RowMap = Map<string, number>

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

export class CatalogCsvError extends Error {}

/** Parses CSV text into the file's input shape; `rows` maps object paths (e.g. `products.0.variants.1`) to line numbers. */
export function parseCatalogCsv(text: string): {input: CatalogFileInput; rows: RowMap} {
  const records = parse(text, {columns: true, skip_empty_lines: true, bom: true, info: true, relax_column_count: false}) as {record: Row; info: {lines: number}}[]
  const rows: RowMap = new Map()
  const products: Record<string, unknown>[] = []
  const byKey = new Map<string, {product: Record<string, any>; index: number; prices: Map<string, Record<string, unknown>>; groups: Map<string, string[]>}>()

  for (const {record, info} of records) {
    const line = info.lines
    const productKey = cell(record.product_key)
    if (!productKey) throw new CatalogCsvError(`line ${line}: product_key is empty`)
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
      if (product[field] !== undefined && JSON.stringify(product[field]) !== JSON.stringify(value)) {
        throw new CatalogCsvError(`line ${line}: ${field} differs from an earlier row of product '${productKey}'; leave it empty on later rows`)
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
        rows.set(`products.${entry.index}.prices.${product.prices.length}`, line)
        entry.prices.set(priceKey, price)
        product.prices.push(price)
      } else if ((price.currency !== undefined || price.unit_amount !== undefined) && JSON.stringify({...known}) !== JSON.stringify(price)) {
        throw new CatalogCsvError(`line ${line}: price '${priceKey}' differs from an earlier row; a price key has one currency, amount and interval`)
      }
    }

    const options: Record<string, string> = {}
    for (const [column, value] of Object.entries(record)) {
      if (!column.startsWith(OPTION_PREFIX)) continue
      const v = cell(value)
      if (v === undefined) continue
      const group = column.slice(OPTION_PREFIX.length).trim()
      options[group] = v
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
      rows.set(`products.${entry.index}.variants.${product.variants.length}`, line)
      product.variants.push(variant)
    }
  }
  for (const entry of byKey.values()) {
    if (entry.groups.size > 0) entry.product.options = Object.fromEntries(entry.groups)
  }
  return {input: {products: products as CatalogFileInput['products']}, rows}
}

/** The catalogue as CSV (the inverse of `parseCatalogCsv` for the fields CSV has columns for). */
export function catalogToCsv(file: CatalogFile): string {
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
  return stringify(out, {cast: {boolean: (b) => String(b)}})
}
