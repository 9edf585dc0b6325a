/**
 * Errors the gateway answers with. Every failure leaves as the spec's envelope
 * `{error: {type, code, param, message, request_id}}`; `ApiError` is what route code throws.
 */
import type {z} from 'zod'

import type {IssueParams} from '@payapp/sdk/schemas/common'

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    readonly code: string | undefined,
    message: string,
    readonly param?: string,
    readonly headers?: Record<string, string>,
  ) {
    super(message)
  }

  envelope(requestId: string) {
    return {error: {type: this.type, code: this.code, param: this.param, message: this.message, request_id: requestId}}
  }
}

export const invalid = (code: string, message: string, param?: string) => new ApiError(400, 'invalid_request', code, message, param)
export const notFound = (what: string, id?: string, code = 'resource_missing', param?: string) =>
  new ApiError(404, 'not_found', code, id ? `No such ${what}: '${id}'` : `No such ${what}`, param)
export const conflict = (code: string, message: string, param?: string, type = 'resource_conflict') => new ApiError(409, type, code, message, param)
export const invalidState = (code: string, message: string) => new ApiError(422, 'invalid_state', code, message)
export const unauthenticated = (message: string, code = 'invalid_api_key') => new ApiError(401, 'authentication_error', code, message)
export const insufficientScope = (scope: string) =>
  new ApiError(403, 'insufficient_scope', 'insufficient_scope', `This credential lacks the scope '${scope}' that this route needs`)
/** 405 with the `Allow` header HTTP requires of it: the methods the URL takes. */
export const methodNotAllowed = (method: string, path: string, allowed: Iterable<string>) =>
  new ApiError(405, 'invalid_request', 'method_not_allowed', `${method} is not supported on ${path}`, undefined, {allow: [...new Set(allowed)].sort().join(', ')})

/** `a[0][b]`, the way payments APIs name a nested field. */
export function paramName(path: readonly PropertyKey[]): string | undefined {
  if (path.length === 0) return undefined
  const [head, ...rest] = path
  return String(head) + rest.map((p) => `[${String(p)}]`).join('')
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = input
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined
    v = (v as Record<PropertyKey, unknown>)[p]
  }
  return v
}

/** The first zod issue, as a 400 naming the field in `param` with a stable `code`. */
export function fromZodError(error: z.ZodError, input: unknown, where: 'body' | 'query' = 'body'): ApiError {
  const issue = error.issues[0]
  const params = (issue as {params?: IssueParams}).params
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0]
    const param = paramName([...issue.path, key])
    return new ApiError(400, 'invalid_request', 'parameter_unknown', `Received unknown parameter: ${param}`, param)
  }
  const param = paramName(issue.path)
  const label = param ?? (where === 'body' ? 'the request body' : 'the query')
  if (params?.code) return new ApiError(400, params.type ?? 'invalid_request', params.code, `${label}: ${issue.message}`, param)
  if (issue.code === 'invalid_type' && valueAt(input, issue.path) === undefined) {
    return new ApiError(400, 'invalid_request', 'parameter_missing', `Missing required parameter: ${param}`, param)
  }
  const code =
    issue.code === 'invalid_type'
      ? 'parameter_invalid_type'
      : issue.code === 'too_big'
        ? issue.origin === 'string'
          ? 'string_too_long'
          : issue.origin === 'array' || issue.origin === 'set'
            ? 'too_many_items'
            : 'number_too_large'
        : issue.code === 'too_small'
          ? issue.origin === 'string'
            ? 'string_too_short'
            : issue.origin === 'array' || issue.origin === 'set'
              ? 'too_few_items'
              : 'number_too_small'
          : issue.code === 'invalid_value'
            ? 'parameter_invalid_enum'
            : 'parameter_invalid'
  return new ApiError(400, 'invalid_request', code, `Invalid ${label}: ${issue.message}`, param)
}
