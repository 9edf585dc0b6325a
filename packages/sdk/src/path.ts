/**
 * Builds request paths from a template so an id can never change which route is called:
 * ``path`/products/${id}/variants` `` percent-encodes each parameter and refuses values that
 * would be empty, a dot segment, or smuggle in a separator.
 */
import {InvalidRequestError} from './errors.js'

/** Characters that would end or split a path segment if an id carried them. */
const SEPARATORS = /[/?#\\]/

function invalid(message: string, index: number): InvalidRequestError {
  return new InvalidRequestError({message, code: 'invalid_path_param', param: `path[${index}]`})
}

/** Printable form of a rejected value, short enough for an error message. */
function show(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : String(value)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

function encodeParam(value: unknown, index: number): string {
  // Only strings and finite numbers are ids; `undefined` would otherwise become the literal "undefined".
  if (typeof value === 'number' ? !Number.isFinite(value) : typeof value !== 'string') {
    throw invalid(`Path parameter ${index + 1} must be a string or a finite number, got ${show(value)}`, index)
  }
  const raw = String(value)
  // An empty id would silently turn `/products/${id}` into the list route.
  if (raw.trim() === '') throw invalid(`Path parameter ${index + 1} is empty`, index)
  // Servers and proxies normalise dot segments, which would move the request to another route.
  if (raw === '.' || raw === '..') throw invalid(`Path parameter ${index + 1} is a dot segment (${show(raw)})`, index)
  // Encoding would make these safe, but no id contains them: a value that does is a bug or an injection attempt.
  if (SEPARATORS.test(raw)) {
    throw invalid(`Path parameter ${index + 1} contains a path separator, '?' or '#': ${show(raw)}`, index)
  }
  return encodeURIComponent(raw)
}

/** Tagged template for API paths; every interpolated value is validated and percent-encoded. */
export function path(strings: TemplateStringsArray, ...params: unknown[]): string {
  let out = strings[0] ?? ''
  for (let i = 0; i < params.length; i++) out += encodeParam(params[i], i) + (strings[i + 1] ?? '')
  return out
}

/** Fills an endpoint table's `{name}`s through the `path` tag, so every id is validated and percent-encoded. */
export function fillPath(template: string, params: Record<string, string | number> = {}): string {
  const parts = template.split(/\{(\w+)\}/)
  const literals = parts.filter((_, i) => i % 2 === 0)
  const values = parts.filter((_, i) => i % 2 === 1).map((name) => params[name])
  return path(Object.assign(literals, {raw: literals}) as unknown as TemplateStringsArray, ...values)
}
