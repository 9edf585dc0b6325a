/**
 * Normalising both sides before they are compared: key-order-independent JSON, prices by what cannot
 * change (currency case, recurring defaults), metadata as a subset, local images by their content hash.
 * Also the derivation of idempotency keys from (catalogue key, operation, content).
 */
import {createHash} from 'node:crypto'
import {readFileSync} from 'node:fs'
import {basename, isAbsolute, resolve} from 'node:path'

import type {Price} from '@payapp/sdk/schemas/catalog'
import type {CatalogPrice} from './schema.js'

/** Key-order-independent JSON, so equal values compare equal. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v,
  )
}
export const same = (a: unknown, b: unknown) => canonical(a ?? null) === canonical(b ?? null)

export function idempotencyKey(scope: string, operation: string, content: unknown): string {
  return `catalog-${createHash('sha256').update(canonical([scope, operation, content])).digest('hex').slice(0, 48)}`
}

function recurringOf(r: CatalogPrice['recurring'] | Price['recurring'] | undefined | null) {
  if (!r) return null
  return {interval: r.interval, interval_count: r.interval_count ?? 1, trial_period_days: r.trial_period_days ?? null, usage_type: r.usage_type ?? 'licensed'}
}
/** What a price is: the fields that cannot change once it exists. */
export const priceIdentity = (p: CatalogPrice | Price) => ({currency: p.currency.toLowerCase(), unit_amount: p.unit_amount, recurring: recurringOf(p.recurring)})

export const isSubset = (want: Record<string, string> | undefined, have: Record<string, string>) => Object.entries(want ?? {}).every(([k, v]) => have[k] === v)

/** A local image (not a URL nor a storage path) is uploaded under a name carrying its content hash. */
export interface LocalImage {
  path: string
  uploadName: string
}
export const isRemote = (ref: string) => /^https?:\/\//.test(ref) || /^files\//.test(ref)

export function localImage(ref: string, baseDir: string): LocalImage {
  const path = isAbsolute(ref) ? ref : resolve(baseDir, ref)
  let bytes: Buffer
  try {
    bytes = readFileSync(path)
  } catch (err) {
    throw new Error(`image ${ref}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`)
  }
  const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 16)
  const name = basename(path).replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._]+/, '') || 'image'
  return {path, uploadName: `${hash}-${name}`}
}

/** The stored image a file's image reference already is, if any. */
export function imageMatches(ref: string, stored: string, local: LocalImage | undefined): boolean {
  return local ? stored.endsWith(`/${local.uploadName}`) : stored === ref
}
