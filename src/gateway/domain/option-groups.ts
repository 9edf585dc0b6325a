/**
 * Option groups and their values (spec: Store catalogue resources, Deletion guards). Rules:
 * - a group's name is unique in its product, ignoring case (409 `option_exists`); a product has at most
 *   `MAX_OPTION_GROUPS` groups;
 * - a value is unique in its group, ignoring case (409 `value_exists`); values keep a sort order;
 * - a group cannot be added or deleted while the product has variants besides its default (409
 *   `variants_exist`): every variant's combination names one value per group;
 * - a value a variant uses cannot be deleted (409 `value_in_use`).
 * These read before they write, so a unit that changes a product's option structure or names (adds, renames
 * or deletes a group, adds or deletes a value) locks the product's row exclusively first, and a variant create locks it shared
 * (`lockProduct`): such units of one product take turns on every engine, those of different products never
 * wait for each other, and variant creates of one product run together.
 */
import type {z} from 'zod'

import type * as catalog from '@payapp/sdk/schemas/catalog'
import type {OptionGroup, OptionValue} from '@payapp/sdk/schemas/catalog'
import {conflict, invalid, notFound} from '../errors.js'
import {newUuid} from '../ids.js'
import type {Tx} from './context.js'
import type {OptionGroupDoc, OptionValueDoc, ProductDoc, Scope} from '../storage/documents.js'
import {requireDoc, uniquely} from './shared.js'

type OptionGroupCreate = z.output<typeof catalog.optionGroupCreate>
type OptionValueCreate = z.output<typeof catalog.optionValueCreate>

/** More groups than a variant's `options` may carry would make every variant impossible. */
export const MAX_OPTION_GROUPS = 10

/** A product's option groups with their values, in creation order; values by sort_order. */
export interface Options {
  groups: Array<OptionGroupDoc & {values: OptionValueDoc[]}>
  /** value id → its group and names, to resolve a variant's combination. */
  byValue: Map<string, {group: OptionGroupDoc; value: OptionValueDoc}>
}

export async function optionsOf(tx: Tx, scope: Scope, productId: string): Promise<Options> {
  // Read on every variant write and view; options themselves change rarely.
  return tx.cachedRead(`options:${scope.merchant}:${scope.env}:${productId}`, ['option_group', 'option_value'], async () => {
    return indexed(await Promise.all((await tx.all('option_group', scope, productId)).map(async (g) => ({...g, values: await valuesOf(tx, scope, g.id)}))))
  })
}

function indexed(groups: Options['groups']): Options {
  const byValue = new Map<string, {group: OptionGroupDoc; value: OptionValueDoc}>()
  for (const group of groups) for (const value of group.values) byValue.set(value.id, {group, value})
  return {groups, byValue}
}

/**
 * The product's option groups, each with only those of `valueIds` that are its values: what checking and
 * showing one combination needs (a new variant's), read together (one round trip on PostgreSQL) instead of
 * every value of every group, which is what a read without a cache (PostgreSQL's) would otherwise parse.
 */
export async function optionsNamed(tx: Tx, scope: Scope, productId: string, valueIds: readonly string[]): Promise<Options> {
  // Where reads are cached (SQLite), all of the product's options from memory, read once after they last changed:
  // no statement (the values' getMany was 20 µs of a keyed variant create's 300 µs of CPU).
  if (tx.readsCached) return optionsOf(tx, scope, productId)
  const [groups, values] = await Promise.all([
    tx.cachedRead(`option_groups:${scope.merchant}:${scope.env}:${productId}`, ['option_group'], () => tx.all('option_group', scope, productId)),
    tx.getMany('option_value', scope, [...new Set(valueIds)]),
  ])
  return indexed(groups.map((g) => ({...g, values: values.filter((v) => v.group === g.id)})))
}

/** Values by sort_order, ties in creation order (Array#sort is stable): the order a group shows them in. */
const bySortOrder = (a: OptionValueDoc, b: OptionValueDoc) => a.sort_order - b.sort_order

/** A group's values by sort_order, ties in creation order. */
export const valuesOf = async (tx: Tx, scope: Scope, groupId: string) => (await tx.all('option_value', scope, groupId)).sort(bySortOrder)

/** `optionsOf` for every product of a page: two queries (groups, then their values) however many products. */
export async function optionsOfMany(tx: Tx, scope: Scope, productIds: readonly string[]): Promise<Map<string, Options>> {
  // childrenRaw reads newest first; a product's groups and a group's values show oldest first.
  const oldestFirst = <T>(rows: string[] | undefined) => (rows ?? []).map((r) => JSON.parse(r) as T).reverse()
  const groupRows = await tx.childrenRaw('option_group', scope, productIds)
  const groups = new Map(productIds.map((id) => [id, oldestFirst<OptionGroupDoc>(groupRows.get(id))]))
  const valueRows = await tx.childrenRaw('option_value', scope, [...groups.values()].flat().map((g) => g.id))
  return new Map(
    [...groups].map(([id, gs]) => [id, indexed(gs.map((g) => ({...g, values: oldestFirst<OptionValueDoc>(valueRows.get(g.id)).sort(bySortOrder)})))]),
  )
}

export const optionValueView = (v: OptionValueDoc): OptionValue => ({object: 'option_value', id: v.id, value: v.value, sort_order: v.sort_order})

export const optionGroupView = (g: OptionGroupDoc, values: OptionValueDoc[]): OptionGroup => ({
  object: 'option_group',
  id: g.id,
  product: g.product,
  name: g.name,
  values: values.map(optionValueView),
})

/** A group as served, with its values read now. */
export const groupWithValues = async (tx: Tx, scope: Scope, group: OptionGroupDoc) => optionGroupView(group, await valuesOf(tx, scope, group.id))

/**
 * The product, its row locked until the unit ends (`Store.lock`): `exclusive` for a unit that changes its
 * option structure, `shared` for a variant create. Taken before the unit reads the groups, values or
 * variants its checks decide on, so those reads see what a unit it waited for committed.
 */
export async function lockProduct(tx: Tx, scope: Scope, id: string, mode: 'exclusive' | 'shared'): Promise<ProductDoc> {
  const product = await tx.lock('product', scope, id, mode)
  if (!product) throw notFound('product', id)
  return product
}

export const requireGroup = async (tx: Tx, scope: Scope, id: string) => requireDoc(tx, 'option_group', scope, id, 'option group')

/** A page of a product's groups with their values, newest first. */
export async function listGroups(tx: Tx, scope: Scope, product: ProductDoc, page: {limit: number; offset: number}) {
  const {docs, hasMore} = await tx.page('option_group', scope, {...page, parent: product.id})
  const data = []
  for (const group of docs) data.push(await groupWithValues(tx, scope, group))
  return {object: 'list' as const, has_more: hasMore, data}
}

/** Every variant's combination names one value per group: adding or removing a group would break them. */
async function guardNoVariants(tx: Tx, scope: Scope, productId: string, what: string): Promise<void> {
  if ((await tx.all('variant', scope, productId)).some((v) => !v.is_default)) {
    throw conflict('variants_exist', `Cannot ${what} while the product has variants; delete its variants first`)
  }
}

const optionExists = (name: string) => conflict('option_exists', `The product already has an option group named '${name}'`, 'name')
const valueExists = (value: string) => conflict('value_exists', `The option group already has the value '${value}'`, 'value')

async function checkGroupName(tx: Tx, scope: Scope, productId: string, name: string, self?: string): Promise<void> {
  const clash = (await tx.all('option_group', scope, productId)).find((g) => g.id !== self && g.name.toLowerCase() === name.toLowerCase())
  if (clash) throw optionExists(clash.name)
}

/** Writes a group (or a value); the storage's unique index refusing a name another request stored after the check read is the check's 409. */
const namedUniquely = <T>(name: string, write: () => Promise<T>) =>
  uniquely({option_groups_unique_name: () => optionExists(name), option_values_unique_value: () => valueExists(name)}, write)

/** `product`: read with `lockProduct(…, 'exclusive')` in this unit (or created in it), so the group limit and the variants guard hold. */
export async function createOptionGroup(tx: Tx, scope: Scope, product: ProductDoc, body: OptionGroupCreate) {
  await guardNoVariants(tx, scope, product.id, 'add an option group')
  await checkGroupName(tx, scope, product.id, body.name)
  if ((await tx.all('option_group', scope, product.id)).length >= MAX_OPTION_GROUPS) {
    throw invalid('too_many_option_groups', `A product has at most ${MAX_OPTION_GROUPS} option groups`)
  }
  const group: OptionGroupDoc = {object: 'option_group', id: newUuid(), product: product.id, name: body.name}
  await namedUniquely(body.name, () => tx.insert('option_group', scope, group, {parent: product.id, created: tx.now(scope)}))
  const values = []
  for (const [i, value] of body.values.entries()) values.push(await insertValue(tx, scope, group, value, i))
  return {group, values}
}

export async function renameOptionGroup(tx: Tx, scope: Scope, group: OptionGroupDoc, name: string): Promise<OptionGroupDoc> {
  // Under the product's lock, as a create: the check's verdict holds for every case folding, not only the
  // index's (ASCII); the group read again under it (another unit may have deleted or renamed it meanwhile).
  await lockProduct(tx, scope, group.product, 'exclusive')
  const current = await requireGroup(tx, scope, group.id)
  await checkGroupName(tx, scope, current.product, name, current.id)
  current.name = name
  return namedUniquely(name, () => tx.save(current))
}

export async function deleteOptionGroup(tx: Tx, scope: Scope, group: OptionGroupDoc) {
  await lockProduct(tx, scope, group.product, 'exclusive')
  await guardNoVariants(tx, scope, group.product, 'delete an option group')
  for (const value of await valuesOf(tx, scope, group.id)) await tx.remove(value.id)
  await tx.remove(group.id)
  return {id: group.id, object: 'option_group', deleted: true as const}
}

async function insertValue(tx: Tx, scope: Scope, group: OptionGroupDoc, value: string, sortOrder: number): Promise<OptionValueDoc> {
  const doc: OptionValueDoc = {object: 'option_value', id: newUuid(), group: group.id, product: group.product, value, sort_order: sortOrder}
  return await tx.insert('option_value', scope, doc, {parent: group.id, created: tx.now(scope)})
}

/** Adds a value after the group's last one unless `sort_order` places it. */
export async function addValue(tx: Tx, scope: Scope, group: OptionGroupDoc, body: OptionValueCreate): Promise<OptionValueDoc> {
  // Under the product's lock, as a group's create, and only to a group still there once it is held.
  await lockProduct(tx, scope, group.product, 'exclusive')
  await requireGroup(tx, scope, group.id)
  const values = await valuesOf(tx, scope, group.id)
  if (values.some((v) => v.value.toLowerCase() === body.value.toLowerCase())) throw valueExists(body.value)
  const last = values.reduce((max, v) => Math.max(max, v.sort_order), -1)
  return namedUniquely(body.value, () => insertValue(tx, scope, group, body.value, body.sort_order ?? last + 1))
}

export async function deleteValue(tx: Tx, scope: Scope, id: string) {
  const value = await tx.get('option_value', scope, id)
  if (!value) throw notFound('option value', id)
  await lockProduct(tx, scope, value.product, 'exclusive')
  const user = (await tx.all('variant', scope, value.product)).find((v) => v.options.some((o) => o.value === value.id))
  if (user) throw conflict('value_in_use', `Variant ${user.id} uses this value; delete that variant first`)
  await tx.remove(value.id)
  return {id: value.id, object: 'option_value', deleted: true as const}
}
