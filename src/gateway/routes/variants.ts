/**
 * Option groups, option values and variants (spec: Store catalogue resources, Variant rules, Deletion
 * guards). The seven variant rules, where each is kept:
 * 1. `options` holds exactly one value per option group of the product → `checkCombination`;
 * 2. a value belongs to the group it is sent with, else 400 `invalid_options` → `checkCombination`;
 * 3. the same combination twice is 409 `variant_exists` → `createVariant`;
 * 4. `price` is an active price of the same product; omitted, the variant inherits the product's
 *    default → `checkPrice`, and `variantView` resolves the inherited price when served;
 * 5. `stock_qty` is required when `track_inventory` is true → the create schema, `updateVariant`;
 * 6. the option combination is immutable → the update schema (400 `options_immutable`);
 * 7. every product has an implicit default variant that cannot be deleted → `variants.delete`.
 * Guards: an option group cannot be added or deleted while the product has variants besides its
 * default (409 `variants_exist`); a value a variant uses cannot be deleted (409 `value_in_use`).
 */
import type {z} from 'zod'

import type * as catalog from '../../sdk/schemas/catalog.js'
import {created, type Handlers} from '../app.js'
import {sweepExpired} from '../checkout.js'
import {
  getOptionGroup,
  getOptionValue,
  getPrice,
  getVariant,
  KIND,
  optionGroupView,
  optionsOf,
  valuesOf,
  variantsOf,
  variantsWithSku,
  variantWithCombination,
  nextVariantSortOrder,
  variantView,
  type OptionGroupDoc,
  type Options,
  type OptionValueDoc,
  type ProductDoc,
  type VariantDoc,
} from '../catalog.js'
import type {Scope} from '../db.js'
import {conflict, invalid, notFound} from '../errors.js'
import {newUuid} from '../ids.js'
import type {Platform} from '../platform.js'
import {requireProduct} from './products.js'

type OptionGroupCreate = z.output<typeof catalog.optionGroupCreate>
type OptionValueCreate = z.output<typeof catalog.optionValueCreate>
type VariantCreate = z.output<typeof catalog.variantCreate>
type VariantUpdate = z.output<typeof catalog.variantUpdate>

/** More groups than a variant's `options` may carry would make every variant impossible. */
export const MAX_OPTION_GROUPS = 10

export const variantHandlers: Partial<Handlers> = {
  // ---------------------------------------------------------------- option groups

  'options.list'({gw, scope, params, query}) {
    const product = requireProduct(gw, scope, params.id)
    const {rows, hasMore} = gw.storage.pageRaw(KIND.group, scope, query.limit, query.offset, product.id)
    const data = rows.map((row) => {
      const group = JSON.parse(row) as OptionGroupDoc
      return optionGroupView(group, valuesOf(gw, scope, group.id))
    })
    return {object: 'list', has_more: hasMore, data}
  },

  'options.create'({gw, scope, params, body}) {
    const {group, values} = createOptionGroup(gw, scope, requireProduct(gw, scope, params.id), body)
    return created(optionGroupView(group, values))
  },

  'options.update'({gw, scope, params, body}) {
    const group = requireGroup(gw, scope, params.id)
    checkGroupName(gw, scope, group.product, body.name, group.id)
    group.name = body.name
    gw.storage.save(group)
    return optionGroupView(group, valuesOf(gw, scope, group.id))
  },

  'options.delete'({gw, scope, params}) {
    const group = requireGroup(gw, scope, params.id)
    guardNoVariants(gw, scope, group.product, 'delete an option group')
    for (const value of valuesOf(gw, scope, group.id)) gw.storage.remove(value.id)
    gw.storage.remove(group.id)
    return {id: group.id, object: 'option_group', deleted: true}
  },

  // ---------------------------------------------------------------- option values

  'values.create'({gw, scope, params, body}) {
    const group = requireGroup(gw, scope, params.id)
    const values = valuesOf(gw, scope, group.id)
    addValue(gw, scope, group, body, values)
    return created(optionGroupView(group, valuesOf(gw, scope, group.id)))
  },

  'values.delete'({gw, scope, params}) {
    const value = getOptionValue(gw, scope, params.id)
    if (!value) throw notFound('option value', params.id)
    const user = variantsOf(gw, scope, value.product).find((v) => v.options.some((o) => o.value === value.id))
    if (user) throw conflict('value_in_use', `Variant ${user.id} uses this value; delete that variant first`)
    gw.storage.remove(value.id)
    return {id: value.id, object: 'option_value', deleted: true}
  },

  // ---------------------------------------------------------------- variants

  'variants.list'({gw, scope, params, query}) {
    // Expiry is lazy: sessions past their time release their stock before variants are shown.
    sweepExpired(gw, scope)
    const product = requireProduct(gw, scope, params.id)
    const options = optionsOf(gw, scope, product.id)
    const {rows, hasMore} = gw.storage.pageRaw(KIND.variant, scope, query.limit, query.offset, product.id)
    return {object: 'list', has_more: hasMore, data: rows.map((row) => variantView(JSON.parse(row) as VariantDoc, product, options))}
  },

  'variants.create'({gw, scope, params, body}) {
    const product = requireProduct(gw, scope, params.id)
    const options = optionsOf(gw, scope, product.id)
    const variant = createVariant(gw, scope, product, body, options)
    return created(variantView(variant, product, options))
  },

  'variants.update'({gw, scope, params, body}) {
    sweepExpired(gw, scope)
    const variant = requireVariant(gw, scope, params.id)
    const product = requireProduct(gw, scope, variant.product)
    updateVariant(gw, scope, product, variant, body)
    return variantView(variant, product, optionsOf(gw, scope, product.id))
  },

  'variants.delete'({gw, scope, params}) {
    const variant = requireVariant(gw, scope, params.id)
    if (variant.is_default) {
      throw conflict('default_variant', 'The default variant of a product cannot be deleted; archive the product instead')
    }
    gw.storage.remove(variant.id)
    return {id: variant.id, object: 'variant', deleted: true}
  },
}

// ---------------------------------------------------------------- option groups and values

function requireGroup(gw: Platform, scope: Scope, id: string): OptionGroupDoc {
  const group = getOptionGroup(gw, scope, id)
  if (!group) throw notFound('option group', id)
  return group
}

/** Every variant's combination names one value per group: adding or removing a group would break them. */
function guardNoVariants(gw: Platform, scope: Scope, productId: string, what: string): void {
  if (variantsOf(gw, scope, productId).some((v) => !v.is_default)) {
    throw conflict('variants_exist', `Cannot ${what} while the product has variants; delete its variants first`)
  }
}

function checkGroupName(gw: Platform, scope: Scope, productId: string, name: string, self?: string): void {
  const clash = gw.storage.all<OptionGroupDoc>(KIND.group, scope, productId).find((g) => g.id !== self && g.name.toLowerCase() === name.toLowerCase())
  if (clash) throw conflict('option_exists', `The product already has an option group named '${clash.name}'`, 'name')
}

export function createOptionGroup(gw: Platform, scope: Scope, product: ProductDoc, body: OptionGroupCreate) {
  guardNoVariants(gw, scope, product.id, 'add an option group')
  checkGroupName(gw, scope, product.id, body.name)
  if (gw.storage.all(KIND.group, scope, product.id).length >= MAX_OPTION_GROUPS) {
    throw invalid('too_many_option_groups', `A product has at most ${MAX_OPTION_GROUPS} option groups`)
  }
  const now = gw.now()
  const group: OptionGroupDoc = {object: 'option_group', id: newUuid(), product: product.id, name: body.name}
  gw.storage.insert(KIND.group, scope, group, {parent: product.id, created: now})
  const values = body.values.map((value, i) => insertValue(gw, scope, group, value, i))
  return {group, values}
}

function insertValue(gw: Platform, scope: Scope, group: OptionGroupDoc, value: string, sortOrder: number): OptionValueDoc {
  const doc: OptionValueDoc = {object: 'option_value', id: newUuid(), group: group.id, product: group.product, value, sort_order: sortOrder}
  return gw.storage.insert(KIND.value, scope, doc, {parent: group.id, created: gw.now()})
}

function addValue(gw: Platform, scope: Scope, group: OptionGroupDoc, body: OptionValueCreate, values: OptionValueDoc[]): OptionValueDoc {
  if (values.some((v) => v.value.toLowerCase() === body.value.toLowerCase())) {
    throw conflict('value_exists', `The option group already has the value '${body.value}'`, 'value')
  }
  const last = values.reduce((max, v) => Math.max(max, v.sort_order), -1)
  return insertValue(gw, scope, group, body.value, body.sort_order ?? last + 1)
}

// ---------------------------------------------------------------- variants

function requireVariant(gw: Platform, scope: Scope, id: string): VariantDoc {
  const variant = getVariant(gw, scope, id)
  if (!variant) throw notFound('variant', id)
  return variant
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
function checkPrice(gw: Platform, scope: Scope, product: ProductDoc, id: string): void {
  const price = getPrice(gw, scope, id)
  if (!price || price.product !== product.id || !price.active) {
    throw invalid('price_unavailable', `price must be an active price of ${product.id}; omit it to inherit the default price`, 'price')
  }
}

function checkSku(gw: Platform, scope: Scope, sku: string, self?: string): void {
  if (variantsWithSku(gw, scope, sku).some((id) => id !== self)) {
    throw conflict('sku_exists', `Another variant in this catalogue already has the SKU '${sku}'`, 'sku')
  }
}

export function createVariant(gw: Platform, scope: Scope, product: ProductDoc, body: VariantCreate, known = optionsOf(gw, scope, product.id)): VariantDoc {
  const options = checkCombination(product, known, body.options)
  const twinId = variantWithCombination(gw, product.id, options)
  if (twinId) {
    const twin = getVariant(gw, scope, twinId)
    throw conflict(
      'variant_exists',
      twin?.is_default ? 'A product without option groups has only its default variant; update that one' : `Variant ${twinId} has this combination`,
      'options',
    )
  }
  if (body.price) checkPrice(gw, scope, product, body.price)
  if (body.sku) checkSku(gw, scope, body.sku)
  const now = gw.now()
  const variant: VariantDoc = {
    object: 'variant',
    id: newUuid(),
    livemode: scope.env === 'live',
    product: product.id,
    is_default: false,
    options,
    price: body.price ?? null,
    sku: body.sku ?? null,
    track_inventory: body.track_inventory ?? false,
    stock_qty: body.stock_qty ?? null,
    stock_reserved: 0,
    title: body.title || null,
    description: body.description ?? null,
    image_path: body.image_path ?? null,
    features: body.features ?? [],
    delivery_days: body.delivery_days ?? null,
    revisions: body.revisions ?? null,
    highlight: body.highlight ?? false,
    sort_order: body.sort_order ?? nextVariantSortOrder(gw, product.id),
    created: now,
    updated: now,
  }
  return gw.storage.insert(KIND.variant, scope, variant, {parent: product.id, created: now})
}

export function updateVariant(gw: Platform, scope: Scope, product: ProductDoc, variant: VariantDoc, body: VariantUpdate): VariantDoc {
  if (body.price) checkPrice(gw, scope, product, body.price)
  if (body.sku) checkSku(gw, scope, body.sku, variant.id)
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
    if (value !== undefined) (variant as unknown as Record<string, unknown>)[key] = value
  }
  // An empty or null title falls back to the option combination again.
  if (title !== undefined) variant.title = title || null
  variant.updated = gw.now()
  gw.storage.save(variant)
  return variant
}
