/**
 * Human output of the catalogue commands (store, products, prices, option groups, variants), written
 * once so `get`, `create` and `update` of a resource look the same. `--json` never goes through here.
 */
import type {AppClient} from '@payapp/sdk/client'
import type {OptionGroup, Price, Product, Store, Variant} from '@payapp/sdk/schemas/catalog'
import {date, money, table} from '../output.js'

type Row = [label: string, value: unknown]

const yesNo = (b: boolean | null | undefined) => (b === null || b === undefined ? '-' : b ? 'yes' : 'no')

/** Aligned `Label  value` lines; rows whose value is undefined are left out, null shows as `-`. */
export function block(rows: ReadonlyArray<Row | false | undefined>): string {
  const shown = rows.filter((r): r is Row => Boolean(r) && (r as Row)[1] !== undefined)
  const width = Math.max(...shown.map(([label]) => label.length))
  return shown
    .map(([label, value]) => `${label.padEnd(width)}  ${value === null || value === '' ? '-' : String(value).replace(/\s*\n\s*/g, ' ')}`)
    .join('\n')
}

/** `every month`, `every 3 months`, or `one-time`. */
export function billing(price: Pick<Price, 'recurring'>): string {
  const r = price.recurring
  if (!r) return 'one-time'
  return r.interval_count === 1 ? `every ${r.interval}` : `every ${r.interval_count} ${r.interval}s`
}

/** `25.00 EUR` or `9.00 EUR / month` (`/ 3 months`). */
export function priceText(price: Pick<Price, 'unit_amount' | 'currency' | 'recurring'>): string {
  const amount = money(price.unit_amount, price.currency)
  const r = price.recurring
  if (!r) return amount
  return `${amount} / ${r.interval_count === 1 ? r.interval : `${r.interval_count} ${r.interval}s`}`
}

export type PriceMap = ReadonlyMap<string, Price>

/** A price id as money when its price is known (the App API's products carry no prices), else the id. */
export function priceRef(id: string | null | undefined, prices: PriceMap): string {
  if (!id) return '-'
  const price = prices.get(id)
  return price ? priceText(price) : id
}

/**
 * A product's prices by id, for human output: the store API embeds them, the App API needs one more
 * read. A failure here only costs the amounts, never the command.
 */
export async function pricesOf(client: AppClient, productId: string, embedded?: readonly Price[]): Promise<Map<string, Price>> {
  if (embedded) return new Map(embedded.map((p) => [p.id, p]))
  try {
    const prices = await client.products.prices.list(productId, {limit: 100}).toArray({limit: 1000})
    return new Map(prices.map((p) => [p.id, p]))
  } catch {
    return new Map()
  }
}

/** Units available (what checkout may still reserve), with the reserved ones noted; or `not tracked`. */
export function stockText(v: Pick<Variant, 'track_inventory' | 'stock_available' | 'stock_reserved' | 'stock_qty'>): string {
  if (!v.track_inventory) return 'not tracked'
  const available = v.stock_available ?? v.stock_qty ?? 0
  return v.stock_reserved > 0 ? `${available} (${v.stock_reserved} reserved)` : String(available)
}

export const optionsText = (v: Pick<Variant, 'options'>) => v.options.map((o) => `${o.group_name}=${o.value_name}`).join(', ')

export function storeBlock(s: Store): string {
  return block([
    ['ID', s.id],
    ['Name', s.display_name],
    ['Slug', s.slug],
    ['Mode', s.livemode ? 'live' : 'test'],
    ['Status', s.status],
    ['Approval', s.approval],
    ['URL', s.url],
    ['Logo', s.logo_url],
    ['Cover', s.cover_url],
  ])
}

/** The prices of the products' default prices (embedded or read), for the amounts a list shows. */
export async function defaultPrices(client: AppClient, products: readonly Product[]): Promise<PriceMap> {
  const maps = await Promise.all(products.filter((p) => p.default_price).map((p) => pricesOf(client, p.id, p.prices)))
  return new Map(maps.flatMap((m) => [...m]))
}

export function productsTable(products: readonly Product[], known: PriceMap = new Map()): string {
  if (products.length === 0) return 'No products.'
  return table(products, [
    'id',
    'name',
    {key: 'active', get: (p) => yesNo(p.active)},
    {key: 'visible', get: (p) => yesNo(p.store_visible)},
    {key: 'default_price', get: (p) => priceRef(p.default_price, p.prices ? new Map(p.prices.map((x) => [x.id, x])) : known)},
    {key: 'created', get: (p) => date(p.created)},
  ])
}

export function productBlock(p: Product, prices: PriceMap): string {
  const metadata = Object.entries(p.metadata)
  const dims = p.package_dimensions
  return block([
    ['ID', p.id],
    ['Name', p.name],
    p.description ? ['Description', p.description] : undefined,
    ['Active', yesNo(p.active)],
    ['Visible', yesNo(p.store_visible)],
    ['Default price', p.default_price ? `${priceRef(p.default_price, prices)}${prices.has(p.default_price) ? ` (${p.default_price})` : ''}` : null],
    p.images.length > 0 ? ['Images', p.images.join(', ')] : undefined,
    p.tags.length > 0 ? ['Tags', p.tags.join(', ')] : undefined,
    p.url ? ['URL', p.url] : undefined,
    p.unit_label ? ['Unit label', p.unit_label] : undefined,
    p.tax_code ? ['Tax code', p.tax_code] : undefined,
    p.statement_descriptor ? ['Statement', p.statement_descriptor] : undefined,
    p.shippable === null ? undefined : ['Shippable', yesNo(p.shippable)],
    dims ? ['Package', `${dims.length} × ${dims.width} × ${dims.height} cm, ${dims.weight} g`] : undefined,
    metadata.length > 0 ? ['Metadata', metadata.map(([k, v]) => `${k}=${v}`).join(', ')] : undefined,
    ['Created', date(p.created)],
    ['Updated', date(p.updated)],
  ])
}

/** A product with its option groups and variants: the block, then one line per group, then the variants. */
export function productDetail(p: Product, prices: PriceMap): string {
  const parts = [productBlock(p, prices)]
  const groups = p.option_groups ?? []
  if (groups.length > 0) parts.push('Options\n' + block(groups.map((g) => [`  ${g.name}`, g.values.map((v) => v.value).join(', ')])))
  if (p.variants) parts.push('Variants\n' + variantsTable(p.variants, prices))
  return parts.join('\n\n')
}

export function variantsTable(variants: readonly Variant[], prices: PriceMap): string {
  if (variants.length === 0) return 'No variants.'
  return table(variants, [
    'id',
    {key: 'title', get: (v) => (v.is_default ? `${v.title} (default)` : v.title)},
    {key: 'sku', get: (v) => v.sku ?? '-'},
    {key: 'price', get: (v) => priceRef(v.price, prices)},
    {key: 'stock', get: stockText},
  ])
}

export function variantBlock(v: Variant): string {
  return block([
    ['ID', v.id],
    ['Product', v.product],
    ['Title', v.is_default ? `${v.title} (default)` : v.title],
    v.options.length > 0 ? ['Options', optionsText(v)] : undefined,
    ['SKU', v.sku],
    ['Price', v.price ? `${v.price}${v.price_inherited ? " (the product's default)" : ''}` : null],
    ['Stock', stockText(v)],
    v.description ? ['Description', v.description] : undefined,
    v.image_path ? ['Image', v.image_path] : undefined,
    v.features.length > 0 ? ['Features', v.features.join('; ')] : undefined,
    v.delivery_days === null ? undefined : ['Delivery days', v.delivery_days],
    v.revisions === null ? undefined : ['Revisions', v.revisions],
    v.highlight ? ['Highlight', 'yes'] : undefined,
    ['Sort order', v.sort_order],
    ['Created', date(v.created)],
  ])
}

export function pricesTable(prices: readonly Price[]): string {
  if (prices.length === 0) return 'No prices.'
  return table(prices, [
    'id',
    {key: 'amount', get: (p) => money(p.unit_amount, p.currency), align: 'right'},
    {key: 'billing', get: billing},
    {key: 'nickname', get: (p) => p.nickname ?? '-'},
    {key: 'lookup_key', get: (p) => p.lookup_key ?? '-'},
    {key: 'active', get: (p) => yesNo(p.active)},
    {key: 'created', get: (p) => date(p.created)},
  ])
}

export function priceBlock(p: Price): string {
  const metadata = Object.entries(p.metadata)
  return block([
    ['ID', p.id],
    ['Product', p.product],
    ['Amount', money(p.unit_amount, p.currency)],
    ['Billing', billing(p)],
    p.recurring?.trial_period_days ? ['Trial', `${p.recurring.trial_period_days} days`] : undefined,
    p.recurring && p.recurring.usage_type !== 'licensed' ? ['Usage', p.recurring.usage_type] : undefined,
    ['Nickname', p.nickname],
    ['Lookup key', p.lookup_key],
    ['Tax behavior', p.tax_behavior],
    ['Active', yesNo(p.active)],
    metadata.length > 0 ? ['Metadata', metadata.map(([k, v]) => `${k}=${v}`).join(', ')] : undefined,
    ['Created', date(p.created)],
  ])
}

/** One row per value, so the ids that `rename`, `delete` and `values delete` take are on screen. */
export function optionGroupsTable(groups: readonly OptionGroup[]): string {
  if (groups.length === 0) return 'No option groups.'
  const rows: Array<{g: OptionGroup; v?: OptionGroup['values'][number]}> = groups.flatMap((g) => (g.values.length === 0 ? [{g}] : g.values.map((v) => ({g, v}))))
  return table(rows, [
    {key: 'group', get: (r) => r.g.name},
    {key: 'value', get: (r) => r.v?.value ?? '-'},
    {key: 'group_id', header: 'GROUP ID', get: (r) => r.g.id},
    {key: 'value_id', header: 'VALUE ID', get: (r) => r.v?.id ?? '-'},
  ])
}

export function optionGroupBlock(g: OptionGroup): string {
  const head = block([
    ['ID', g.id],
    ['Name', g.name],
    ['Product', g.product],
  ])
  return g.values.length === 0 ? head : `${head}\n\n${table(g.values, ['value', {key: 'id', header: 'VALUE ID'}])}`
}

