/**
 * The plan: what `apply` must do to make the platform match the file. Both sides are normalised before
 * they are compared (currency case, recurring defaults, deduplicated tags and features, inherited
 * prices), so the plan never shows a change apply would not make, and a second run finds nothing to do.
 * Each change carries the operation that makes it, the phase it runs in (the dependency order) and the
 * operations it needs; the executor (apply.ts) runs them.
 */
import {readFileSync} from 'node:fs'

import type {RequestOptions} from '@payapp/sdk/client'
import type {Product, Variant} from '@payapp/sdk/schemas/catalog'
import {imageMatches, isRemote, isSubset, localImage, priceIdentity, same, type LocalImage} from './normalise.js'
import type {CatalogFile, CatalogPrice, CatalogProduct, CatalogVariant} from './schema.js'
import {CATALOG_KEY, REPLACES, listProducts, mapLimit, productKeyOf, readProduct, type CatalogClient, type StoredProduct} from './store.js'

export type Action = 'create' | 'update' | 'replace' | 'archive' | 'delete' | 'unchanged' | 'left' | 'blocked'
export type Kind = 'file' | 'product' | 'price' | 'option' | 'value' | 'variant'

export interface Change {
  action: Action
  kind: Kind
  key: string
  /** The changed fields, for updates and replacements. */
  fields?: string[]
  /** Why a change is left or blocked. */
  reason?: string
}

/** What an operation may use: the ids made by earlier operations of the run. */
export interface RunState {
  client: CatalogClient
  productId?: string
  priceIds: Map<string, string>
  groupIds: Map<string, string>
  /** `group\0value` → id */
  valueIds: Map<string, string>
  /** local path → storage path */
  uploads: Map<string, string>
}

export interface Op {
  id: string
  change: Change
  phase: number
  /** Ids of operations whose failure means this one cannot run. */
  needs: string[]
  /** Archives, deletes and deactivations of what the file no longer lists: need --yes without a TTY. A replace is not one. */
  destructive: boolean
  /** Changes of the plan this write completes besides its own (a product's inline price). */
  covers?: Change[]
  /** One write, with an idempotency key derived from the catalogue key, the operation and its content. */
  run(state: RunState, opts: (content: unknown) => RequestOptions): Promise<void>
}

export interface ProductPlan {
  key: string
  state: Omit<RunState, 'client' | 'uploads'>
  ops: Op[]
}

export interface Summary {
  create: number
  update: number
  replace: number
  archive: number
  delete: number
  unchanged: number
  left: number
  blocked: number
}

export interface Plan {
  changes: Change[]
  summary: Summary
  uploads: Op[]
  products: ProductPlan[]
  /** Some change archives, deletes or deactivates. */
  destructive: boolean
}

export interface PlanOptions {
  /** Archive products and delete variants that are not in the file. */
  prune?: boolean
  /** Local image paths are relative to it. */
  baseDir?: string
  /** Concurrent reads. */
  concurrency?: number
  /**
   * The file is CSV, which cannot say everything: it lists only the option values its rows use (so none
   * is deleted) and cannot tell a variant set explicitly to the default price from one inheriting it.
   */
  csv?: boolean
}

// ---------------------------------------------------------------- phases (dependency order)

const PHASE = {upload: 0, product: 1, price: 2, defaultPrice: 3, variantDelete: 4, skuFree: 4.5, optionDelete: 5, optionCreate: 6, variant: 7, priceRetire: 8, archive: 9} as const

// ---------------------------------------------------------------- planning

const productFieldNames = (p: CatalogProduct) =>
  (Object.keys(p) as (keyof CatalogProduct)[]).filter((k) => !['key', 'prices', 'options', 'variants', 'images', 'metadata', 'active'].includes(k) && p[k] !== undefined)

const VARIANT_SKIP = new Set(['options', 'price', 'image'])
const variantFieldNames = (v: CatalogVariant) => (Object.keys(v) as (keyof CatalogVariant)[]).filter((k) => !VARIANT_SKIP.has(k) && v[k] !== undefined)

const combinationOf = (groups: string[], options: Record<string, string>) => groups.map((g) => `${g}=${options[g] ?? ''}`).join(',')
const storedCombination = (v: Variant) => v.options.map((o) => `${o.group_name}=${o.value_name}`).join(',')
/** A combination as a set of group=value pairs: the groups' order is presentation, never identity. */
const comboIdentity = (pairs: [string, string][]) => JSON.stringify([...pairs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
const wantedCombo = (groups: string[], options: Record<string, string>) => comboIdentity(groups.map((g) => [g, options[g] ?? '']))
const storedCombo = (v: Variant) => comboIdentity(v.options.map((o) => [o.group_name, o.value_name]))
const variantKey = (productKey: string, v: {sku?: string | null}, combo: string) => v.sku ?? `${productKey}[${combo || 'default'}]`

export async function planCatalog(client: CatalogClient, file: CatalogFile, opts: PlanOptions = {}): Promise<Plan> {
  const baseDir = opts.baseDir ?? process.cwd()
  const listed = await listProducts(client)
  const byKey = new Map<string, Product>()
  for (const p of listed) {
    const key = productKeyOf(p)
    const known = byKey.get(key)
    // Two products with one key: prefer the active one, else the oldest.
    if (!known || (!known.active && p.active)) byKey.set(key, p)
  }
  const wanted = new Set(file.products.map((p) => p.key))
  const stored = await mapLimit(file.products, opts.concurrency ?? 8, async (p) => {
    const match = byKey.get(p.key)
    return match ? readProduct(client, match) : undefined
  })

  const changes: Change[] = []
  const uploads = new Map<string, Op>()
  const locals = new Map<string, LocalImage>()
  const local = (ref: string) => {
    if (isRemote(ref)) return undefined
    let img = locals.get(ref)
    if (!img) locals.set(ref, (img = localImage(ref, baseDir)))
    return img
  }
  // Bytes the store already holds (an upload's name carries its content hash): never sent again.
  const uploaded = new Map<string, string>()
  const storedImages = [...listed.flatMap((p) => p.images ?? []), ...stored.flatMap((sp) => (sp ? [...sp.product.images, ...sp.variants.map((v) => v.image_path ?? '')] : []))]
  for (const path of storedImages) if (path.startsWith('files/')) uploaded.set(path.slice(path.lastIndexOf('/') + 1), path)
  /** The upload op of a local image not uploaded yet, created once per file and needed by every op that uses it. */
  const uploadOp = (img: LocalImage): string[] => {
    if (uploaded.has(img.uploadName)) return []
    const id = `file:${img.path}`
    if (!uploads.has(id)) {
      const change: Change = {action: 'create', kind: 'file', key: img.path}
      changes.push(change)
      uploads.set(id, {
        id,
        change,
        phase: PHASE.upload,
        needs: [],
        destructive: false,
        async run(state, options) {
          const bytes = readFileSync(img.path)
          const file = await state.client.files.upload(bytes, {filename: img.uploadName}, options({upload: img.uploadName}))
          state.uploads.set(img.path, file.path)
        },
      })
    }
    return [id]
  }
  const resolveImage = (state: RunState, ref: string) => {
    if (isRemote(ref)) return ref
    const img = local(ref)!
    return state.uploads.get(img.path) ?? uploaded.get(img.uploadName)!
  }

  const products: ProductPlan[] = file.products.map((p, i) => planProduct(p, stored[i], {prune: Boolean(opts.prune), csv: Boolean(opts.csv), local, uploadOp, resolveImage, changes}))

  // Products in the store but not in the file: archived with --prune, otherwise left as they are.
  for (const p of listed) {
    const key = productKeyOf(p)
    if (wanted.has(key) || !p.active || byKey.get(key) !== p) continue
    if (!opts.prune) {
      changes.push({action: 'left', kind: 'product', key, reason: 'not in the file (--prune archives it)'})
      continue
    }
    const change: Change = {action: 'archive', kind: 'product', key}
    changes.push(change)
    products.push({
      key,
      state: emptyState(p.id),
      ops: [{id: `${key}:archive`, change, phase: PHASE.archive, needs: [], destructive: true, run: (s, o) => s.client.products.archive(s.productId!, o({archive: p.id})).then(() => undefined)}],
    })
  }

  const summary: Summary = {create: 0, update: 0, replace: 0, archive: 0, delete: 0, unchanged: 0, left: 0, blocked: 0}
  for (const c of changes) summary[c.action]++
  const ops = [...uploads.values(), ...products.flatMap((p) => p.ops)]
  return {changes, summary, uploads: [...uploads.values()], products, destructive: ops.some((o) => o.destructive)}
}

const emptyState = (productId?: string): ProductPlan['state'] => ({productId, priceIds: new Map(), groupIds: new Map(), valueIds: new Map()})

interface PlanContext {
  prune: boolean
  csv: boolean
  local: (ref: string) => LocalImage | undefined
  /** The op uploading a local image, or none when the store already has its bytes. */
  uploadOp: (img: LocalImage) => string[]
  resolveImage: (state: RunState, ref: string) => string
  changes: Change[]
}

function planProduct(want: CatalogProduct, have: StoredProduct | undefined, ctx: PlanContext): ProductPlan {
  const {changes} = ctx
  const state = emptyState(have?.product.id)
  const ops: Op[] = []
  const pk = want.key
  const add = ({listed = true, ...op}: Omit<Op, 'destructive'> & {destructive?: boolean; listed?: boolean}) => {
    ops.push({destructive: false, ...op})
    if (listed) changes.push(op.change)
    return op.id
  }
  const note = (change: Change) => changes.push(change)

  // ---- product
  const productOp = `${pk}:product`
  const defaultPrice = want.prices.find((p) => p.default) ?? want.prices[0]
  const imageNeeds = (refs: string[]) => refs.map(ctx.local).filter((x): x is LocalImage => x !== undefined).flatMap(ctx.uploadOp)
  const fields = Object.fromEntries(productFieldNames(want).map((k) => [k, want[k]]))
  const keyManaged = !have || have.product.metadata[CATALOG_KEY] !== undefined
  const metadata = {...want.metadata, ...(keyManaged ? {[CATALOG_KEY]: pk} : {})}
  let productNeeded: string[] = []

  // Prices made with the product (atomic, so it never exists without its default price).
  const inline = !have && defaultPrice && !defaultPrice.metadata && defaultPrice.active !== false ? defaultPrice : undefined
  if (!have) {
    const needs = imageNeeds(want.images ?? [])
    productNeeded = [productOp]
    const inlineChange: Change | undefined = inline && {action: 'create', kind: 'price', key: inline.key}
    add({
      id: productOp,
      change: {action: 'create', kind: 'product', key: pk},
      ...(inlineChange ? {covers: [inlineChange]} : {}),
      phase: PHASE.product,
      needs,
      async run(s, o) {
        const body = {
          ...fields,
          name: want.name,
          metadata,
          ...(want.images ? {images: want.images.map((r) => ctx.resolveImage(s, r))} : {}),
          ...(want.active === false ? {active: false} : {}),
          ...(inline ? {price: {...priceBody(inline), lookup_key: inline.key}} : {}),
        }
        const product = await s.client.products.create(body, o(body))
        s.productId = product.id
        if (inline && product.default_price) s.priceIds.set(inline.key, product.default_price)
      },
    })
    if (inlineChange) note(inlineChange)
  } else {
    const cur = have.product
    const changed = Object.keys(fields).filter((k) => !same(fields[k], (cur as Record<string, unknown>)[k]))
    const patch: Record<string, unknown> = Object.fromEntries(changed.map((k) => [k, fields[k]]))
    if (!isSubset(metadata, cur.metadata)) {
      changed.push('metadata')
      patch.metadata = metadata
    }
    const wantActive = want.active ?? true
    if (wantActive !== cur.active) {
      changed.push('active')
      patch.active = wantActive
    }
    const images = want.images
    let imageChange = false
    if (images && (images.length !== cur.images.length || images.some((r, i) => !imageMatches(r, cur.images[i]!, ctx.local(r))))) {
      changed.push('images')
      imageChange = true
    }
    if (changed.length > 0) {
      productNeeded = [productOp]
      add({
        id: productOp,
        change: {action: 'update', kind: 'product', key: pk, fields: changed},
        phase: PHASE.product,
        needs: imageChange ? imageNeeds(images!) : [],
        async run(s, o) {
          const body = {...patch, ...(imageChange ? {images: images!.map((r) => ctx.resolveImage(s, r))} : {})}
          await s.client.products.update(s.productId!, body, o({from: pick(cur, Object.keys(body)), to: body}))
        },
      })
    } else note({action: 'unchanged', kind: 'product', key: pk})
  }

  // ---- prices
  const prices = have?.prices ?? []
  const claimed = new Set<string>()
  const priceOp = new Map<string, string>()
  const priceChange = new Map<string, Change>()
  /** Old prices to retire once their replacement is the default and variants moved: old id → new key. */
  const retire = new Map<string, string | undefined>()
  const priceNeeds = (key: string | undefined) => (key && priceOp.has(key) ? [priceOp.get(key)!] : [])
  const halfReplaced = new Map<string, string>()
  const replacedBy = (oldId: string, key: string) => halfReplaced.set(oldId, key)
  for (const p of want.prices) {
    if (p === inline) continue
    // A replace a killed run left half done: the new price took the key, the old one is still active.
    for (const x of prices) if (x.lookup_key === p.key && x.active && x.metadata[REPLACES]) replacedBy(x.metadata[REPLACES]!, p.key)
    const candidates = prices.filter((x) => x.lookup_key === p.key)
    const adopted = candidates.length === 0 ? prices.filter((x) => x.id === p.key) : []
    const match = [...candidates, ...adopted].filter((x) => same(priceIdentity(x), priceIdentity(p))).sort((a, b) => Number(b.active) - Number(a.active))[0]
    for (const stale of candidates) if (stale !== match) retire.set(stale.id, p.key)
    const isDefault = p === defaultPrice
    if (!match) {
      const id = `${pk}:price:${p.key}`
      priceOp.set(p.key, id)
      const replaced = candidates.length > 0
      const change: Change = replaced ? {action: 'replace', kind: 'price', key: p.key, fields: changedFields(priceIdentity(candidates[0]!), priceIdentity(p))} : {action: 'create', kind: 'price', key: p.key}
      priceChange.set(p.key, change)
      add({
        id,
        change,
        phase: PHASE.price,
        needs: productNeeded,
        async run(s, o) {
          // A new default is made the default as it is created: never a moment without an active default.
          // The key moves to it in the same write (never two active prices with one key, nor none), and it
          // names the price it replaces, so a run killed before the old one is retired still retires it.
          const holder = candidates.find((x) => x.active)
          const metadata = {...p.metadata, ...(holder ? {[REPLACES]: holder.id} : {})}
          const body = {
            ...priceBody(p),
            lookup_key: p.key,
            transfer_lookup_key: true,
            ...(Object.keys(metadata).length > 0 ? {metadata} : {}),
            ...(p.active === false ? {active: false} : {}),
            ...(isDefault && p.active !== false ? {set_as_default: true} : {}),
          }
          const price = await s.client.products.prices.create(s.productId!, body, o({product: s.productId, body}))
          s.priceIds.set(p.key, price.id)
        },
      })
      continue
    }
    claimed.add(match.id)
    state.priceIds.set(p.key, match.id)
    const patch: Record<string, unknown> = {}
    if ((p.active ?? true) !== match.active) patch.active = p.active ?? true
    if (p.nickname !== undefined && p.nickname !== match.nickname) patch.nickname = p.nickname
    if (p.tax_behavior !== undefined && p.tax_behavior !== match.tax_behavior) patch.tax_behavior = p.tax_behavior
    if (!isSubset(p.metadata, match.metadata)) patch.metadata = p.metadata
    if (Object.keys(patch).length === 0) {
      note({action: 'unchanged', kind: 'price', key: p.key})
      continue
    }
    const id = `${pk}:price:${p.key}`
    priceOp.set(p.key, id)
    add({
      id,
      change: {action: 'update', kind: 'price', key: p.key, fields: Object.keys(patch)},
      phase: patch.active === false ? PHASE.priceRetire : PHASE.price,
      destructive: patch.active === false,
      needs: productNeeded,
      run: (s, o) => s.client.products.prices.update(s.productId!, match.id, patch, o({price: match.id, from: pick(match, Object.keys(patch)), to: patch})).then(() => undefined),
    })
  }
  for (const x of prices) {
    if (claimed.has(x.id) || retire.has(x.id) || !x.active) continue
    if (halfReplaced.has(x.id)) {
      retire.set(x.id, halfReplaced.get(x.id))
      continue
    }
    if (ctx.prune) retire.set(x.id, undefined)
    else note({action: 'left', kind: 'price', key: x.lookup_key ?? x.id, reason: 'not in the file (--prune archives it)'})
  }

  // The default price, when an existing price becomes it (a new one is created as the default); and when it
  // is the default already but archived (a product put back after --prune): the platform makes the first price
  // reactivated while the default is archived the default, and this run's reactivations go out together.
  const defaultTarget = defaultPrice && state.priceIds.get(defaultPrice.key)
  const archivedDefault = !!defaultTarget && prices.some((x) => x.id === defaultTarget && !x.active)
  if (have && defaultTarget && (have.product.default_price !== defaultTarget || archivedDefault)) {
    add({
      id: `${pk}:default`,
      change: {action: 'update', kind: 'product', key: pk, fields: ['default_price']},
      phase: PHASE.defaultPrice,
      needs: [...productNeeded, ...priceNeeds(defaultPrice!.key)],
      run: (s, o) => s.client.products.update(s.productId!, {default_price_id: defaultTarget}, o({from: have.product.default_price, default_price_id: defaultTarget})).then(() => undefined),
    })
  }

  // ---- variants: the option combination is a variant's identity (immutable on the platform), so a stored
  // variant with the wanted combination is that variant, whatever its sku (a sku moved between variants is
  // an update of both); a file variant whose combination the store lacks takes the stored variant of its
  // sku, which is a replace (delete, then create with the new combination).
  const wantGroups = Object.keys(want.options)
  const variants = have?.variants ?? []
  const matchedVariants = new Set<string>()
  const deletedVariants = new Set<string>()
  const variantPlans: {v: CatalogVariant; combo: string; match?: Variant; replace: boolean}[] = []
  const fileSkus = new Set(want.variants.map((v) => v.sku).filter(Boolean))
  const claim = (x: Variant | undefined) => {
    if (x) matchedVariants.add(x.id)
    return x
  }
  const isDefaultVariant = (v: CatalogVariant) => Object.keys(v.options).length === 0
  const identities = want.variants.map((v) => wantedCombo(wantGroups, v.options))
  const byCombo = want.variants.map((v, i) =>
    isDefaultVariant(v) ? claim(variants.find((x) => x.is_default)) : claim(variants.find((x) => !x.is_default && !matchedVariants.has(x.id) && storedCombo(x) === identities[i])),
  )
  want.variants.forEach((v, i) => {
    const combo = isDefaultVariant(v) ? '' : combinationOf(wantGroups, v.options)
    const match = byCombo[i] ?? (v.sku ? claim(variants.find((x) => !x.is_default && !matchedVariants.has(x.id) && x.sku === v.sku)) : undefined)
    variantPlans.push({v, combo, match, replace: Boolean(match && !match.is_default && storedCombo(match) !== identities[i])})
  })
  const variantDeleteOps: string[] = []
  const replaceChange = new Map<CatalogVariant, Change>()
  for (const vp of variantPlans) {
    if (vp.replace) {
      deletedVariants.add(vp.match!.id)
      const change: Change = {action: 'replace', kind: 'variant', key: variantKey(pk, vp.v, vp.combo), fields: ['options']}
      replaceChange.set(vp.v, change)
      variantDeleteOps.push(
        add({
          id: `${pk}:variant-delete:${vp.match!.id}`,
          change,
          phase: PHASE.variantDelete,
          needs: [],
          // The file keeps the variant (recreated with its new combination): nothing it lists is lost.
          destructive: false,
          run: (s, o) => s.client.variants.delete(vp.match!.id, o({delete: vp.match!.id})).then(() => undefined),
        }),
      )
    }
  }
  for (const x of variants) {
    if (x.is_default || matchedVariants.has(x.id)) continue
    const key = variantKey(pk, x, storedCombination(x))
    if (!ctx.prune) {
      note({action: 'left', kind: 'variant', key, reason: 'not in the file (--prune deletes it)'})
      continue
    }
    deletedVariants.add(x.id)
    variantDeleteOps.push(
      add({id: `${pk}:variant-delete:${x.id}`, change: {action: 'delete', kind: 'variant', key}, phase: PHASE.variantDelete, needs: [], destructive: true, run: (s, o) => s.client.variants.delete(x.id, o({delete: x.id})).then(() => undefined)}),
    )
  }
  const remaining = variants.filter((x) => !x.is_default && !deletedVariants.has(x.id))

  // ---- option groups and values, guarded as the platform guards them
  const groupOps = new Map<string, string>()
  const groups = have?.groups ?? []
  for (const g of groups) {
    for (const val of g.values) state.valueIds.set(`${g.name}\0${val.value}`, val.id)
    state.groupIds.set(g.name, g.id)
    const values = want.options[g.name]
    if (!values) {
      const key = `${pk}/${g.name}`
      if (remaining.length > 0) {
        note({action: 'blocked', kind: 'option', key, reason: 'variants_exist: variants not in the file use it (--prune deletes them)'})
        continue
      }
      add({id: `${pk}:group-delete:${g.name}`, change: {action: 'delete', kind: 'option', key}, phase: PHASE.optionDelete, needs: variantDeleteOps, destructive: true, run: (s, o) => s.client.options.delete(g.id, o({delete: g.id})).then(() => undefined)})
      continue
    }
    for (const val of g.values) {
      if (values.includes(val.value)) continue
      const key = `${pk}/${g.name}/${val.value}`
      if (ctx.csv) {
        note({action: 'left', kind: 'value', key, reason: 'not in the file (a CSV file lists only the values its rows use)'})
        continue
      }
      const user = remaining.find((x) => x.options.some((o) => o.value === val.id))
      if (user) {
        note({action: 'blocked', kind: 'value', key, reason: `value_in_use: variant ${user.sku ?? user.id} uses it and is not in the file (--prune deletes it)`})
        continue
      }
      add({id: `${pk}:value-delete:${g.name}:${val.value}`, change: {action: 'delete', kind: 'value', key}, phase: PHASE.optionDelete, needs: variantDeleteOps, destructive: true, run: (s, o) => s.client.values.delete(val.id, o({delete: val.id})).then(() => undefined)})
    }
  }
  // The platform keeps groups in the order they were created and values in the order they were given:
  // an order the file changes later cannot be applied (no reorder; a combination is immutable).
  const kept = groups.filter((g) => want.options[g.name])
  const fileOrder = wantGroups.filter((name) => kept.some((g) => g.name === name))
  if (kept.some((g, i) => g.name !== fileOrder[i])) {
    note({action: 'left', kind: 'option', key: `${pk}/(order)`, reason: 'the groups are in another order than the file; the platform keeps the order they were created in'})
  }
  for (const g of kept) {
    const fileValues = want.options[g.name]!.filter((v) => g.values.some((x) => x.value === v))
    const storedValues = [...g.values].sort((a, b) => a.sort_order - b.sort_order).map((x) => x.value).filter((v) => fileValues.includes(v))
    if (storedValues.some((v, i) => v !== fileValues[i])) {
      note({action: 'left', kind: 'option', key: `${pk}/${g.name}/(order)`, reason: 'the values are in another order than the file; the platform keeps the order they were created in'})
    }
  }
  // New groups one after the other, so they are stored in the file's order whatever order requests arrive in.
  let groupStep = 0
  for (const [name, values] of Object.entries(want.options)) {
    const g = groups.find((x) => x.name === name)
    if (!g) {
      groupOps.set(name, add({
        id: `${pk}:group:${name}`,
        change: {action: 'create', kind: 'option', key: `${pk}/${name}`},
        phase: PHASE.optionCreate + groupStep++ / 100,
        needs: [...productNeeded, ...variantDeleteOps, ...[...groupOps.values()].filter((id) => id.startsWith(`${pk}:group:`))],
        async run(s, o) {
          const body = {name, values}
          const group = await s.client.products.options.create(s.productId!, body, o({product: s.productId, body}))
          s.groupIds.set(name, group.id)
          for (const val of group.values) s.valueIds.set(`${name}\0${val.value}`, val.id)
        },
      }))
      continue
    }
    const missing = values.filter((v) => !g.values.some((x) => x.value === v))
    if (missing.length === 0) {
      note({action: 'unchanged', kind: 'option', key: `${pk}/${name}`})
      continue
    }
    for (const value of missing) {
      const sortOrder = values.indexOf(value)
      groupOps.set(`${name}\0${value}`, add({
        id: `${pk}:value:${name}:${value}`,
        change: {action: 'create', kind: 'value', key: `${pk}/${name}/${value}`},
        phase: PHASE.optionCreate,
        needs: [],
        async run(s, o) {
          const body = {value, sort_order: sortOrder}
          const group = await s.client.options.values.create(g.id, body, o({group: g.id, body}))
          for (const val of group.values) s.valueIds.set(`${name}\0${val.value}`, val.id)
        },
      }))
    }
  }

  // ---- variant creates and updates
  for (const {v, combo, match, replace} of variantPlans) {
    const key = variantKey(pk, v, combo)
    const presentation = Object.fromEntries(variantFieldNames(v).map((k) => [k, v[k]]))
    const img = v.image === undefined ? undefined : ctx.local(v.image)
    const imgNeeds = () => (img ? ctx.uploadOp(img) : [])
    if (!match || replace) {
      const optionNeeds = wantGroups.flatMap((g) => [groupOps.get(g), groupOps.get(`${g}\0${v.options[g]}`)]).filter((x): x is string => Boolean(x))
      const isDefault = Object.keys(v.options).length === 0
      add({
        id: `${pk}:variant:${key}`,
        // The second half of a replace is part of the replace's one change.
        change: replaceChange.get(v) ?? {action: isDefault ? 'update' : 'create', kind: 'variant', key},
        listed: !replace,
        phase: PHASE.variant,
        needs: [...productNeeded, ...optionNeeds, ...priceNeeds(v.price), ...imgNeeds(), ...variantDeleteOps.filter((id) => replace && id.endsWith(match!.id))],
        async run(s, o) {
          const body = {
            ...presentation,
            ...(v.price ? {price: s.priceIds.get(v.price)!} : {}),
            ...(v.image !== undefined ? {image_path: ctx.resolveImage(s, v.image)} : {}),
          }
          if (isDefault) {
            // A new product's default variant: found by listing, updated in place.
            for await (const x of s.client.products.variants.list(s.productId!, {limit: 100})) {
              if (x.is_default) {
                await s.client.variants.update(x.id, body, o({variant: x.id, to: body}))
                return
              }
            }
            return
          }
          const options = wantGroups.map((g) => ({group: s.groupIds.get(g)!, value: s.valueIds.get(`${g}\0${v.options[g]}`)!}))
          await s.client.products.variants.create(s.productId!, {...body, options}, o({product: s.productId, body, options: v.options}))
        },
      })
      continue
    }
    // An existing variant: compare what the file sets; an omitted price means "inherit the default".
    const patch: Record<string, unknown> = {}
    for (const [k, val] of Object.entries(presentation)) if (!same(val, (match as Record<string, unknown>)[k])) patch[k] = val
    const wantPrice = v.price
    // A price the run creates has no id yet: the variant moves to it.
    const targetPrice = wantPrice === undefined ? undefined : state.priceIds.get(wantPrice)
    const inherits = match.price_inherited || (ctx.csv && defaultTarget !== undefined && match.price === defaultTarget)
    const priceChange = wantPrice === undefined ? !inherits : match.price_inherited || targetPrice === undefined || match.price !== targetPrice
    let imageChange = false
    if (v.image !== undefined && !(match.image_path && imageMatches(v.image, match.image_path, img))) imageChange = true
    // Its sku is wanted by another variant of the file: freed before any variant takes it (a swap too).
    const skuMoves = Boolean(match.sku && fileSkus.has(match.sku) && v.sku !== match.sku)
    if (skuMoves) delete patch.sku
    const fieldsChanged = [...Object.keys(patch), ...(skuMoves ? ['sku'] : []), ...(priceChange ? ['price'] : []), ...(imageChange ? ['image'] : [])]
    if (fieldsChanged.length === 0) {
      note({action: 'unchanged', kind: 'variant', key})
      continue
    }
    const change: Change = {action: 'update', kind: 'variant', key, fields: fieldsChanged}
    const newSku = skuMoves && v.sku ? {sku: v.sku} : {}
    const rest = Object.keys(patch).length > 0 || priceChange || imageChange || Object.keys(newSku).length > 0
    if (skuMoves) {
      add({
        id: `${pk}:variant-sku-free:${match.id}`,
        change,
        listed: !rest,
        phase: PHASE.skuFree,
        needs: [],
        run: (s, o) => s.client.variants.update(match.id, {sku: null}, o({variant: match.id, free: match.sku})).then(() => undefined),
      })
      if (!rest) continue
    }
    add({
      id: `${pk}:variant:${key}`,
      change,
      phase: PHASE.variant,
      needs: [...priceNeeds(wantPrice), ...(imageChange ? imgNeeds() : [])],
      async run(s, o) {
        const body = {
          ...patch,
          ...newSku,
          ...(priceChange ? {price: wantPrice === undefined ? null : s.priceIds.get(wantPrice)!} : {}),
          ...(imageChange ? {image_path: ctx.resolveImage(s, v.image!)} : {}),
        }
        await s.client.variants.update(match.id, body, o({variant: match.id, from: pick(match, Object.keys(body)), to: body}))
      },
    })
  }

  // ---- retiring old prices: after the new one is the default and variants moved off the old one
  const variantOps = ops.filter((o) => o.phase === PHASE.variant).map((o) => o.id)
  for (const [oldId, newKey] of retire) {
    const old = prices.find((x) => x.id === oldId)!
    // Variants the file does not list that use the old price explicitly move with its key.
    for (const x of remaining) {
      if (x.price_inherited || x.price !== oldId || matchedVariants.has(x.id)) continue
      const moveId = `${pk}:variant-move:${x.id}`
      add({
        id: moveId,
        change: {action: 'update', kind: 'variant', key: variantKey(pk, x, storedCombination(x)), fields: ['price']},
        phase: PHASE.variant,
        needs: priceNeeds(newKey),
        async run(s, o) {
          const body = {price: newKey ? s.priceIds.get(newKey)! : null}
          await s.client.variants.update(x.id, body, o({variant: x.id, from: oldId, to: body}))
        },
      })
      variantOps.push(moveId)
    }
    const patch = {...(old.active ? {active: false} : {}), ...(old.lookup_key !== null && newKey !== undefined ? {lookup_key: null} : {})}
    if (Object.keys(patch).length === 0) continue
    // Retiring a replaced price is the second half of its replace (one change, nothing the file keeps is
    // lost); only a price the file no longer lists is an archive.
    // A replace a killed run left half done is listed as the replace it finishes.
    const half = newKey === undefined ? undefined : priceChange.get(newKey)
    add({
      id: `${pk}:retire:${oldId}`,
      change: half ?? (newKey ? {action: 'replace', kind: 'price', key: newKey, reason: `retiring the replaced ${old.id}`} : {action: 'archive', kind: 'price', key: old.lookup_key ?? old.id}),
      listed: !half,
      phase: PHASE.priceRetire,
      destructive: !newKey,
      needs: [...priceNeeds(newKey), ...ops.filter((o) => o.phase === PHASE.defaultPrice).map((o) => o.id), ...variantOps],
      run: (s, o) => s.client.products.prices.update(s.productId!, oldId, patch, o({retire: oldId, patch})).then(() => undefined),
    })
  }
  return {key: pk, state, ops}
}

function priceBody(p: CatalogPrice) {
  return {
    currency: p.currency,
    unit_amount: p.unit_amount,
    ...(p.recurring ? {recurring: p.recurring} : {}),
    ...(p.tax_behavior ? {tax_behavior: p.tax_behavior} : {}),
    ...(p.nickname !== undefined ? {nickname: p.nickname} : {}),
  }
}

function changedFields(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  return Object.keys(b).filter((k) => !same(a[k], b[k]))
}

function pick(obj: object, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, (obj as Record<string, unknown>)[k]]))
}
