/**
 * What every resource module shares: the stamp a new document starts with, the lookups that turn a
 * missing id into the spec's 404, and Stripe's metadata merge.
 */
import {notFound, type ApiError} from '../errors.js'
import type {Tx} from './context.js'
import type {Documents, Kind, Scope} from '../storage/documents.js'
import {UniqueViolation} from '../storage/storage.js'

/** The fields every new document starts with: its id, its type, its mode (from the scope) and its creation time. */
export function stamp<const O extends string>(tx: Tx, scope: Scope, object: O, id: string, created = tx.now(scope)) {
  return {id, object, livemode: scope.env === 'live', created}
}

/** One document of the scope, or 404 `No such <what>` (another merchant's or environment's id included). */
export async function requireDoc<K extends Kind>(tx: Tx, kind: K, scope: Scope, id: string, what: string, code?: string, param?: string): Promise<Documents[K]> {
  const doc = await tx.get(kind, scope, id)
  if (!doc) throw notFound(what, id, code, param)
  return doc
}

/** A document by id in whichever scope holds it (admin routes and hosted pages carry no credential), or 404. */
export async function findDoc<K extends Kind>(tx: Tx, kind: K, id: string, what: string, code?: string): Promise<{scope: Scope; doc: Documents[K]}> {
  const found = await tx.find(kind, id)
  if (!found) throw notFound(what, id, code)
  return found
}

/** Stripe's metadata update: sent keys replace stored ones, and an empty value removes its key. */
export function mergeMetadata(current: Record<string, string>, patch: Record<string, string>): Record<string, string> {
  const merged = {...current, ...patch}
  for (const [k, v] of Object.entries(patch)) if (v === '') delete merged[k]
  return merged
}

/**
 * Runs a write that unique indexes guard (storage/*.ts), answering `refused[index]()` when one of them refuses
 * it: another request stored the same first, after this one's check read (concurrent units on PostgreSQL),
 * so the client gets the check's 409, not a generic conflict. Other errors pass as they are.
 */
export async function uniquely<T>(refused: Record<string, () => ApiError>, write: () => Promise<T>): Promise<T> {
  try {
    return await write()
  } catch (error) {
    if (error instanceof UniqueViolation) {
      for (const [index, answer] of Object.entries(refused)) if (error.message.includes(index)) throw answer()
    }
    throw error
  }
}
