/**
 * Tolerant response parsing. Response schemas are loose objects with open enums, so new fields and
 * new enum values pass through; only a wrong type on a field the SDK knows fails, with its full path.
 */
import type {z} from 'zod'

import {ResponseValidationError} from './errors.js'
import type {Page} from './pagination.js'

type Issue = z.core.$ZodIssue
type PathKey = PropertyKey

/** Issues shown in the message; the rest are counted (all of them stay on `cause`). */
const MAX_SHOWN = 3

/** `product.prices[0].unit_amount` */
export function formatPath(root: string, path: readonly PathKey[]): string {
  let out = root
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`
    else if (typeof key === 'symbol') out += `[${String(key)}]`
    else if (/^[A-Za-z_$][\w$]*$/.test(key)) out += out === '' ? key : `.${key}`
    else out += `[${JSON.stringify(key)}]`
  }
  return out
}

function typeName(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number' && Number.isNaN(value)) return 'NaN'
  return typeof value
}

/** Returns [found, value] so a missing key is told apart from an explicit `undefined`. */
function valueAt(data: unknown, path: readonly PathKey[]): [boolean, unknown] {
  let current = data
  for (const key of path) {
    if (current === null || typeof current !== 'object' || !(key in current)) return [false, undefined]
    current = (current as Record<PathKey, unknown>)[key]
  }
  return [true, current]
}

/** What each branch of a union wanted, e.g. `"x" | string`, when every branch failed at the union itself. */
function unionExpectation(issue: Extract<Issue, {code: 'invalid_union'}>): string | undefined {
  const wanted: string[] = []
  for (const branch of issue.errors) {
    for (const inner of branch) {
      if (inner.path.length > 0) return undefined
      if (inner.code === 'invalid_type') wanted.push(inner.expected)
      else if (inner.code === 'invalid_value') wanted.push(...inner.values.map((v) => JSON.stringify(v)))
      else return undefined
    }
  }
  return wanted.length > 0 ? [...new Set(wanted)].join(' | ') : undefined
}

function describe(issue: Issue, data: unknown, what: string): string {
  const where = formatPath(what, issue.path)
  const [found, value] = valueAt(data, issue.path)
  const expected =
    issue.code === 'invalid_type' ? issue.expected : issue.code === 'invalid_union' ? unionExpectation(issue) : undefined
  if (expected !== undefined) {
    return found ? `${where}: expected ${expected}, got ${typeName(value)}` : `${where}: missing (expected ${expected})`
  }
  return `${where}: ${issue.message}`
}

/**
 * Validates `data` against a response schema. `what` names the root in messages (e.g. `product`).
 * Throws `ResponseValidationError` naming each offending field path; the zod error is its `cause`.
 */
export function parseResponse<S extends z.ZodType>(schema: S, data: unknown, what: string): z.output<S> {
  const result = schema.safeParse(data)
  if (result.success) return result.data
  const issues = result.error.issues
  const shown = issues.slice(0, MAX_SHOWN).map((issue) => describe(issue, data, what))
  const more = issues.length > MAX_SHOWN ? ` (and ${issues.length - MAX_SHOWN} more)` : ''
  throw new ResponseValidationError({
    message: `Unexpected ${what} response from the API: ${shown.join('; ')}${more}`,
    code: 'response_validation_failed',
    type: 'response_validation_error',
    raw: data,
    cause: result.error,
  })
}

/** A list envelope `{object: 'list', has_more, data}` with each item parsed by `item`. */
export function parsePage<T>(item: z.ZodType, data: unknown, id: string): Page<T> {
  const envelope = data as Partial<Page<unknown>> | undefined
  if (!envelope || typeof envelope !== 'object' || typeof envelope.has_more !== 'boolean' || !Array.isArray(envelope.data)) {
    throw new ResponseValidationError({
      message: `Unexpected ${id} response from the API: not a list envelope {object: 'list', has_more, data}`,
      code: 'response_validation_failed',
      type: 'response_validation_error',
      raw: data,
    })
  }
  return {...(envelope as Page<unknown>), data: envelope.data.map((row, i) => parseResponse(item, row, `${id}.data[${i}]`) as T)}
}
