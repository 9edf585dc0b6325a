/**
 * The CLI's exit codes, defined once. Every command exits through `exitCodeFor`, so scripts can branch
 * on the class of failure without parsing messages.
 */
import {
  APIError,
  AuthenticationError,
  ConflictError,
  ConnectionError,
  InvalidRequestError,
  NotFoundError,
  PaymentRequiredError,
  PayappError,
  PermissionError,
  RateLimitError,
  SignatureVerificationError,
} from '@payapp/sdk/errors'

export const ExitCode = {
  /** Success. */
  OK: 0,
  /** Unexpected error (a bug, an unreadable file, a response of the wrong shape). */
  UNEXPECTED: 1,
  /** Usage: a bad or missing flag or argument. oclif's own parse errors use 2 as well. */
  USAGE: 2,
  /** Authentication: HTTP 401, or no credential configured. */
  AUTHENTICATION: 3,
  /** Permission: HTTP 403 (missing scope, origin not allowed). */
  PERMISSION: 4,
  /** Not found: HTTP 404. */
  NOT_FOUND: 5,
  /** Conflict or validation: HTTP 400, 402, 405, 409, 410, 413, 422; webhook signature rejected. */
  CONFLICT: 6,
  /** Rate limited or unavailable: HTTP 429, 5xx, or no connection. Retrying later may succeed. */
  UNAVAILABLE: 7,
  /** Partly applied: some changes of a `catalog apply` failed or were skipped (the summary lists them). */
  PARTIAL: 8,
} as const

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode]

/**
 * An error raised by the CLI itself (not the API), carrying its exit code and the fields of the JSON
 * error envelope so `--json` output has one shape whatever failed.
 */
export class CliError extends Error {
  readonly exitCode: ExitCode
  readonly type: string
  readonly code?: string
  readonly param?: string

  constructor(message: string, options: {exitCode: ExitCode; type?: string; code?: string; param?: string; cause?: unknown}) {
    super(message, options.cause === undefined ? undefined : {cause: options.cause})
    this.name = 'CliError'
    this.exitCode = options.exitCode
    this.type = options.type ?? 'cli_error'
    this.code = options.code
    this.param = options.param
  }
}

/** A bad or missing flag or argument (exit 2). `param` names the flag, e.g. `--token`. */
export function usageError(message: string, param?: string): CliError {
  return new CliError(message, {exitCode: ExitCode.USAGE, type: 'usage_error', code: 'invalid_usage', param})
}

/** No credential configured for the profile and environment (exit 3). */
export function missingCredentialError(message: string, param?: string): CliError {
  return new CliError(message, {exitCode: ExitCode.AUTHENTICATION, type: 'authentication_error', code: 'credential_missing', param})
}

/** Exit code for an HTTP status, for errors that carry a status but no more specific class. */
export function exitCodeForStatus(status: number): ExitCode {
  if (status === 401) return ExitCode.AUTHENTICATION
  if (status === 403) return ExitCode.PERMISSION
  if (status === 404) return ExitCode.NOT_FOUND
  if (status === 429 || status >= 500) return ExitCode.UNAVAILABLE
  if (status >= 400) return ExitCode.CONFLICT
  return ExitCode.UNEXPECTED
}

// Node's codes for "no response at all", in case a raw socket error escapes the SDK unwrapped.
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET'])

/** The one mapping from anything thrown to the process exit code. */
export function exitCodeFor(err: unknown): number {
  if (err instanceof PayappError) {
    // Class first: RateLimitError may carry 503 and ConnectionError has no status at all.
    if (err instanceof RateLimitError || err instanceof ConnectionError || err instanceof APIError) return ExitCode.UNAVAILABLE
    if (err instanceof AuthenticationError) return ExitCode.AUTHENTICATION
    if (err instanceof PermissionError) return ExitCode.PERMISSION
    if (err instanceof NotFoundError) return ExitCode.NOT_FOUND
    if (err instanceof ConflictError || err instanceof InvalidRequestError || err instanceof PaymentRequiredError) return ExitCode.CONFLICT
    if (err instanceof SignatureVerificationError) return ExitCode.CONFLICT
    if (typeof err.statusCode === 'number') return exitCodeForStatus(err.statusCode)
    return ExitCode.UNEXPECTED
  }
  if (err instanceof CliError) return err.exitCode
  if (err && typeof err === 'object') {
    const e = err as {oclif?: {exit?: unknown}; exitCode?: unknown; code?: unknown}
    // oclif's CLIError (parse errors use 2) and `this.exit(n)`.
    if (typeof e.oclif?.exit === 'number') return e.oclif.exit
    if (typeof e.exitCode === 'number') return e.exitCode
    if (typeof e.code === 'string' && CONNECTION_CODES.has(e.code)) return ExitCode.UNAVAILABLE
  }
  return ExitCode.UNEXPECTED
}
