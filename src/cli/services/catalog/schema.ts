/**
 * The catalogue file: products with their prices, option groups and variants, each under a stable key.
 * Every field is taken from the SDK's create schemas (never restated); the file only adds the keys,
 * the references between its own objects (a variant's `price` is a price key, its `options` are names)
 * and local image paths. Published as JSON Schema by `payapp catalog schema`.
 */
import {z} from 'zod'

import {optionGroupCreate, priceCreate, productCreate, variantCreate} from '@payapp/sdk/schemas/catalog'
import {currency} from '@payapp/sdk/schemas/common'

function omit<S extends Record<string, z.ZodType>, K extends keyof S>(shape: S, keys: readonly K[]): Omit<S, K> {
  const out = {...shape}
  for (const k of keys) delete out[k]
  return out
}

const key = (what: string) => z.string().trim().min(1).max(200).describe(what)

/** Currency case is normalised, so `EUR` in a file is `eur` on the platform and in every comparison. */
const fileCurrency = z.string().transform((c) => c.trim().toLowerCase()).pipe(currency)

/** A local path (uploaded to /files), an http(s) URL, or a storage path from a previous upload or export. */
const imageInput = z.string().trim().min(1).max(2048).describe('Local file path (uploaded), http(s) URL or files/… storage path')

export const catalogPrice = z.strictObject({
  key: key("Stable key, stored as the price's lookup_key"),
  ...omit(priceCreate.shape, ['lookup_key', 'set_as_default', 'transfer_lookup_key']),
  currency: fileCurrency,
  default: z.boolean().optional().describe("The product's default price (exactly one, or the first)"),
})
export type CatalogPrice = z.output<typeof catalogPrice>

export const catalogVariant = z
  .strictObject({
    ...omit(variantCreate.shape, ['options', 'price', 'image_path']),
    options: z.record(z.string(), z.string()).default({}).describe('One value per option group, by name; {} is the default variant'),
    price: z.string().min(1).optional().describe("A price key of this product; omitted = inherit the product's default"),
    image: imageInput.optional().describe('Image: uploaded when local, becomes image_path'),
  })
  .refine((v) => !v.track_inventory || v.stock_qty !== undefined, {message: 'stock_qty is required when track_inventory is true', path: ['stock_qty']})
export type CatalogVariant = z.output<typeof catalogVariant>

export const catalogProduct = z.strictObject({
  key: key('Stable key, stored on the product (metadata.catalog_key) to match it on later runs'),
  ...omit(productCreate.shape, ['price', 'default_price', 'images']),
  images: z.array(imageInput).max(8).optional().describe('Up to 8 images: local paths are uploaded, URLs kept'),
  prices: z.array(catalogPrice).default([]),
  options: z
    .record(optionGroupCreate.shape.name, optionGroupCreate.shape.values)
    .default({})
    .describe('Option groups in order, each with its values in order'),
  variants: z.array(catalogVariant).default([]),
})
export type CatalogProduct = z.output<typeof catalogProduct>

/** Cross-references the object schemas cannot see: unique keys, known price keys and option values. */
export const catalogFile = z
  .strictObject({products: z.array(catalogProduct).default([])})
  .superRefine((file, ctx) => {
    const seen = {product: new Map<string, number>(), price: new Map<string, number>(), sku: new Map<string, number>()}
    const unique = (kind: keyof typeof seen, value: string, path: (string | number)[], i: number) => {
      if (seen[kind].has(value)) ctx.addIssue({code: 'custom', message: `duplicate ${kind === 'sku' ? 'sku' : `${kind} key`} '${value}'`, path})
      else seen[kind].set(value, i)
    }
    file.products.forEach((p, i) => {
      unique('product', p.key, ['products', i, 'key'], i)
      const priceKeys = new Set(p.prices.map((pr) => pr.key))
      p.prices.forEach((pr, j) => unique('price', pr.key, ['products', i, 'prices', j, 'key'], i))
      if (p.prices.filter((pr) => pr.default).length > 1) ctx.addIssue({code: 'custom', message: 'at most one price may be the default', path: ['products', i, 'prices']})
      const groups = Object.entries(p.options)
      p.variants.forEach((v, j) => {
        const at = ['products', i, 'variants', j]
        if (v.sku) unique('sku', v.sku, [...at, 'sku'], i)
        if (v.price !== undefined && !priceKeys.has(v.price)) ctx.addIssue({code: 'custom', message: `price '${v.price}' is not a price key of product '${p.key}'`, path: [...at, 'price']})
        const named = Object.keys(v.options)
        if (named.length === 0) return
        for (const [group, values] of groups) {
          if (!(group in v.options)) ctx.addIssue({code: 'custom', message: `missing a value for option '${group}'`, path: [...at, 'options']})
          else if (!values.includes(v.options[group]!)) ctx.addIssue({code: 'custom', message: `'${v.options[group]}' is not a value of option '${group}'`, path: [...at, 'options', group]})
        }
        for (const name of named) if (!p.options[name]) ctx.addIssue({code: 'custom', message: `'${name}' is not an option of product '${p.key}'`, path: [...at, 'options', name]})
      })
      const combos = new Set<string>()
      p.variants.forEach((v, j) => {
        const combo = JSON.stringify(groups.map(([g]) => v.options[g] ?? null))
        if (combos.has(combo)) ctx.addIssue({code: 'custom', message: 'two variants have the same option combination', path: ['products', i, 'variants', j, 'options']})
        combos.add(combo)
      })
    })
  })
export type CatalogFile = z.output<typeof catalogFile>
export type CatalogFileInput = z.input<typeof catalogFile>

/** The file format as JSON Schema (draft 2020-12), for editors and CI linters. */
export function catalogJsonSchema(): Record<string, unknown> {
  return {
    $id: 'https://payapp.dev/schemas/catalog.json',
    title: 'payapp catalogue',
    ...(z.toJSONSchema(catalogFile, {io: 'input', unrepresentable: 'any'}) as Record<string, unknown>),
  }
}
