/**
 * Variants (spec: Variant rules). The seven rules, where each is kept:
 * 1. `options` holds exactly one value per option group of the product → `checkCombination`;
 * 2. a value belongs to the group it is sent with, else 400 `invalid_options` → `checkCombination`;
 * 3. the same combination twice is 409 `variant_exists` → `createVariant`, and the storage's unique key
 *    (`insertVariant`);
 * 4. `price` is an active price of the same product; omitted, the variant inherits the product's
 *    default → `checkPrice`, and `variantView` resolves the inherited price when served;
 * 5. `stock_qty` is required when `track_inventory` is true → the create schema, `updateVariant`;
 * 6. the option combination is immutable → the update schema (400 `options_immutable`);
 * 7. every product has an implicit default variant that cannot be deleted → `insertDefaultVariant`,
 *    `deleteVariant`.
 * Stock: units in stock include those held by open checkouts; stock never goes below what is held.
 */
import type {z} from 'zod'

import type * as catalog from '@payapp/sdk/schemas/catalog'
import type {Variant} from '@payapp/sdk/schemas/catalog'
import {conflict, invalid, notFound} from '../errors.js'
import {newUuid} from '../ids.js'
import type {Tx} from './context.js'
import type {PriceDoc, ProductDoc, Scope, VariantDoc} from '../storage/documents.js'
import {combinationKey, UniqueViolation} from '../storage/storage.js'
import {optionsOf, type Options} from './option-groups.js'
import {requireDoc, uniquely} from './shared.js'

type VariantCreate = z.output<typeof catalog.variantCreate>
type VariantUpdate = z.output<typeof catalog.variantUpdate>

export const requireVariant = async (tx: Tx, scope: Scope, id: string) => requireDoc(tx, 'variant', scope, id, 'variant')

/**
 * The variant, its row locked until the unit ends (a unit that writes it back whole): a checkout's stock
 * reservation, a conditional update of the row, waits for it instead of being overwritten by the copy.
 */
export async function lockVariant(tx: Tx, scope: Scope, id: string): Promise<VariantDoc> {
  const variant = await tx.lock('variant', scope, id, 'exclusive')
  if (!variant) throw notFound('variant', id)
  return variant
}

/** A product's variants, oldest first (the default variant, created with the product, leads). */
export const variantsOf = async (tx: Tx, scope: Scope, productId: string) => await tx.all('variant', scope, productId)

/** The product's implicit default variant (rule 7): the one sold when no variant is named. */
export async function defaultVariantOf(tx: Tx, scope: Scope, product: Pick<ProductDoc, 'id'>): Promise<VariantDoc> {
  const found = (await variantsOf(tx, scope, product.id)).find((v) => v.is_default)
  if (!found) throw new Error(`product ${product.id} has no default variant`)
  return found
}

/** The price a variant sells at: its own, else the product's default (rule 4); null when neither exists. */
export const effectivePrice = (variant: Pick<VariantDoc, 'price'>, product: Pick<ProductDoc, 'default_price'>): string | null =>
  variant.price ?? product.default_price

/** Units a checkout may still reserve; null when the variant does not track inventory. */
export const stockAvailable = (variant: VariantDoc): number | null =>
  variant.track_inventory ? Math.max(0, (variant.stock_qty ?? 0) - variant.stock_reserved) : null

/** Variants in display order: sort_order, then creation. */
export const byDisplayOrder = (a: VariantDoc, b: VariantDoc) => a.sort_order - b.sort_order

export function variantView(v: VariantDoc, product: ProductDoc, options: Options): Variant {
  const combination = v.options.map((o) => {
    const named = options.byValue.get(o.value)
    return {group: o.group, value: o.value, group_name: named?.group.name ?? '', value_name: named?.value.value ?? ''}
  })
  const fallbackTitle = v.is_default || combination.length === 0 ? product.name : combination.map((o) => o.value_name).join(' / ')
  return {
    object: 'variant',
    id: v.id,
    livemode: v.livemode,
    product: v.product,
    is_default: v.is_default,
    options: combination,
    price: effectivePrice(v, product),
    price_inherited: v.price === null,
    sku: v.sku,
    track_inventory: v.track_inventory,
    stock_qty: v.stock_qty,
    stock_reserved: v.stock_reserved,
    stock_available: stockAvailable(v),
    title: v.title ?? fallbackTitle,
    description: v.description,
    image_path: v.image_path,
    features: v.features,
    delivery_days: v.delivery_days,
    revisions: v.revisions,
    highlight: v.highlight,
    sort_order: v.sort_order,
    created: v.created,
    updated: v.updated,
  }
}

/** A page of a product's variants as served, newest first. */
export async function listVariants(tx: Tx, scope: Scope, product: ProductDoc, page: {limit: number; offset: number}) {
  const options = await optionsOf(tx, scope, product.id)
  const {docs, hasMore} = await tx.page('variant', scope, {...page, parent: product.id})
  return {object: 'list' as const, has_more: hasMore, data: docs.map((v) => variantView(v, product, options))}
}

/** Persists a variant changed by another module (a reservation, a sale), stamping `updated`. */
export async function saveVariant(tx: Tx, scope: Scope, variant: VariantDoc): Promise<VariantDoc> {
  variant.updated = tx.now(scope)
  return await tx.save(variant)
}

const invalidOptions = (message: string) => invalid('invalid_options', message, 'options')

/** Rules 1 and 2: the combination, ordered as the product's groups are. */
function checkCombination(product: ProductDoc, {groups}: Options, sent: VariantCreate['options']): VariantDoc['options'] {
  const byGroup = new Map<string, string>()
  for (const {group, value} of sent) {
    const known = groups.find((g) => g.id === group)
    if (!known) throw invalidOptions(`${group} is not an option group of ${product.id}`)
    if (byGroup.has(group)) throw invalidOptions(`Option group ${known.name} is sent twice; send one value per group`)
    if (!known.values.some((v) => v.id === value)) throw invalidOptions(`${value} is not a value of the option group ${known.name}`)
    byGroup.set(group, value)
  }
  const missing = groups.filter((g) => !byGroup.has(g.id))
  if (missing.length > 0) throw invalidOptions(`Send one value for each option group; missing: ${missing.map((g) => g.name).join(', ')}`)
  return groups.map((g) => ({group: g.id, value: byGroup.get(g.id)!}))
}

/** Rule 4: an explicit price is an active price of the same product. */
async function checkPrice(tx: Tx, scope: Scope, product: ProductDoc, id: string): Promise<void> {
  priceAvailable(product, await tx.get('price', scope, id))
}

function priceAvailable(product: ProductDoc, price: PriceDoc | undefined): void {
  if (!price || price.product !== product.id || !price.active) {
    throw invalid('price_unavailable', `price must be an active price of ${product.id}; omit it to inherit the default price`, 'price')
  }
}

async function checkSku(tx: Tx, scope: Scope, sku: string, self?: string): Promise<void> {
  skuFree(sku, await tx.ids('variant', scope, [{field: 'sku', eq: sku}]), self)
}

const skuExists = (sku: string) => conflict('sku_exists', `Another variant in this catalogue already has the SKU '${sku}'`, 'sku')

/** `owners`: the ids of the variants with this SKU. */
function skuFree(sku: string, owners: readonly string[], self?: string): void {
  if (owners.some((id) => id !== self)) throw skuExists(sku)
}

/**
 * A variant write that the storage's unique SKU index guards: a request that stored the same SKU after this
 * one's check read gets the check's 409 (the combination's key is guarded in `insertVariant`).
 */
const guarded = <T>(sku: string | null | undefined, write: () => Promise<T>) =>
  uniquely(
    {
      variants_unique_sku: () => skuExists(sku ?? ''),
    },
    write,
  )

type VariantFields = Pick<
  VariantDoc,
  'is_default' | 'options' | 'price' | 'sku' | 'track_inventory' | 'stock_qty' | 'title' | 'description' | 'image_path' | 'features' | 'delivery_days' | 'revisions' | 'highlight' | 'sort_order'
>

/**
 * Stores a variant keyed by its option combination (rule 3): the storage's unique index refuses a second
 * variant of the product with the combination, also one that a concurrent unit stored after the check read.
 */
async function insertVariant(tx: Tx, scope: Scope, product: ProductDoc, fields: VariantFields, created = tx.now(scope)): Promise<VariantDoc> {
  return storeVariant(tx, scope, product, newVariant(scope, product, fields, created))
}

const newVariant = (scope: Scope, product: ProductDoc, fields: VariantFields, created: number): VariantDoc => ({
  object: 'variant',
  id: newUuid(),
  livemode: scope.env === 'live',
  product: product.id,
  ...fields,
  stock_reserved: 0,
  created,
  updated: created,
})

async function storeVariant(tx: Tx, scope: Scope, product: ProductDoc, variant: VariantDoc): Promise<VariantDoc> {
  const created = variant.created
  try {
    return await tx.insert('variant', scope, variant, {parent: product.id, created, key: combinationKey(variant.options)})
  } catch (error) {
    if (error instanceof UniqueViolation && error.message.includes('unique_key')) {
      throw conflict('variant_exists', `Another variant of ${product.id} has this combination`, 'options')
    }
    throw error
  }
}

/** Rule 7: the variant every product is created with, sold when no variant is named. */
export async function insertDefaultVariant(tx: Tx, scope: Scope, product: ProductDoc): Promise<VariantDoc> {
  return insertVariant(tx, scope, product, presentation({is_default: true, options: [], sort_order: 0}), product.created)
}

/** A variant's own fields, defaulted as the create schema leaves them. */
function presentation(body: Partial<VariantCreate> & Pick<VariantFields, 'is_default' | 'options' | 'sort_order'>): VariantFields {
  return {
    is_default: body.is_default,
    options: body.options,
    price: body.price ?? null,
    sku: body.sku ?? null,
    track_inventory: body.track_inventory ?? false,
    stock_qty: body.stock_qty ?? null,
    title: body.title || null,
    description: body.description ?? null,
    image_path: body.image_path ?? null,
    features: body.features ?? [],
    delivery_days: body.delivery_days ?? null,
    revisions: body.revisions ?? null,
    highlight: body.highlight ?? false,
    sort_order: body.sort_order,
  }
}

/**
 * The reads a new variant's checks need besides its product's options (rule 4, the SKU, the default sort
 * order, and rule 3's twin: the variant with the sent combination, whose key, of the value ids sorted, is
 * the checked combination's once rules 1 and 2 passed).
 */
export const variantChecks = (tx: Tx, scope: Scope, productId: string, body: VariantCreate) =>
  Promise.all([
    body.price ? tx.get('price', scope, body.price) : undefined,
    body.sku ? tx.ids('variant', scope, [{field: 'sku', eq: body.sku}]) : [],
    body.sort_order === undefined ? tx.lastVariantSortOrder(productId) : null,
    tx.keyed('variant', scope, productId, combinationKey(body.options)),
  ] as const)

/**
 * Creates a variant. `known` and `checks` are the reads a caller issued with its own (one round trip on
 * PostgreSQL); the verdicts come in the rules' order. The insert is the unit's last write: on PostgreSQL it
 * settles at the COMMIT (`atCommit`), which goes out with it, so a create takes two round trips; a unique
 * index that refuses it (a concurrent twin or SKU) fails the unit with the same 409s.
 */
export async function createVariant(
  tx: Tx,
  scope: Scope,
  product: ProductDoc,
  body: VariantCreate,
  known?: Options,
  checks?: Awaited<ReturnType<typeof variantChecks>>,
): Promise<VariantDoc> {
  const [options, [price, skuOwners, maxSort, twinId]] = await Promise.all([known ?? optionsOf(tx, scope, product.id), checks ?? variantChecks(tx, scope, product.id, body)])
  const combination = checkCombination(product, options, body.options)
  const sortOrder = body.sort_order ?? (maxSort ?? -1) + 1
  if (twinId) {
    // Only the default variant has no options: the twin of an empty combination.
    throw conflict('variant_exists', combination.length === 0 ? 'A product without option groups has only its default variant; update that one' : `Variant ${twinId} has this combination`, 'options')
  }
  if (body.price) priceAvailable(product, price)
  if (body.sku) skuFree(body.sku, skuOwners)
  const variant = newVariant(scope, product, presentation({...body, is_default: false, options: combination, sort_order: sortOrder}), tx.now(scope))
  const stored = guarded(body.sku, () => storeVariant(tx, scope, product, variant))
  await (tx.atCommit ? tx.atCommit(stored) : stored)
  return variant
}

export async function updateVariant(tx: Tx, scope: Scope, product: ProductDoc, variant: VariantDoc, body: VariantUpdate): Promise<VariantDoc> {
  if (body.price) await checkPrice(tx, scope, product, body.price)
  if (body.sku) await checkSku(tx, scope, body.sku, variant.id)
  const tracking = body.track_inventory ?? variant.track_inventory
  const stock = body.stock_qty ?? variant.stock_qty
  if (tracking && stock === null) {
    throw invalid('stock_qty_required', 'stock_qty is required when track_inventory is true', 'stock_qty')
  }
  if (tracking && stock !== null && stock < variant.stock_reserved) {
    throw invalid('stock_below_reserved', `${variant.stock_reserved} units are reserved by open checkouts; stock_qty cannot go below that`, 'stock_qty')
  }
  const {options: _immutable, title, ...fields} = body
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) (variant as Record<string, unknown>)[key] = value
  }
  // An empty or null title falls back to the option combination again.
  if (title !== undefined) variant.title = title || null
  return guarded(variant.sku, () => saveVariant(tx, scope, variant))
}

/** Rule 7: the default variant stays; archive the product instead. */
export async function deleteVariant(tx: Tx, variant: VariantDoc) {
  if (variant.is_default) {
    throw conflict('default_variant', 'The default variant of a product cannot be deleted; archive the product instead')
  }
  await tx.remove(variant.id)
  return {id: variant.id, object: 'variant', deleted: true as const}
}
