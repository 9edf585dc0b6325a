/**
 * CLI flags derived from the request-body schemas in packages/sdk/src, so a command never restates a field list:
 * `unit_amount` becomes `--unit-amount`, a nested object is flattened one level (`recurring.interval`
 * → `--recurring-interval`), string arrays are repeatable flags, `metadata` takes `key=value`. The
 * flags' values are folded back into a body, merged over `--data @file.json`, and the server-side
 * schema stays the one validation.
 */
import {readFile} from 'node:fs/promises'

import {Flags, type Interfaces} from '@oclif/core'
import type {z} from 'zod'

import {isImmutable} from '@payapp/sdk/schemas/catalog'
import {usageError} from './exit-codes.js'
import {readStdin} from './prompt.js'

type AnyFlag = Interfaces.Flag<any>

interface Def {
  type: string
  innerType?: Schema
  in?: Schema
  element?: Schema
  shape?: Record<string, Schema>
  entries?: Record<string, string>
  checks?: Array<{_zod: {def: {format?: string}}}>
  format?: string
}
interface Schema {
  _zod: {def: Def}
  description?: string
  shape?: Record<string, Schema>
}

/** Optional, nullable, default and pipe wrappers removed: the field's own kind. */
function unwrap(schema: Schema): {core: Schema; optional: boolean} {
  let s = schema
  let optional = false
  for (;;) {
    const def = s._zod.def
    if (def.type === 'optional' || def.type === 'default' || def.type === 'nullable' || def.type === 'prefault') {
      if (def.type !== 'nullable') optional = true
      s = def.innerType!
    } else if (def.type === 'pipe') s = def.in!
    else return {core: s, optional}
  }
}

function describe(schema: Schema): string | undefined {
  let s: Schema | undefined = schema
  while (s) {
    if (s.description) return s.description
    const def: Def = s._zod.def
    s = def.innerType ?? def.in
  }
  return undefined
}

export const kebab = (name: string) => name.replace(/_/g, '-')

/** How one flag maps back to the body: its path and how its raw value is read. */
interface FieldMap {
  path: string[]
  kind: 'string' | 'int' | 'number' | 'boolean' | 'strings' | 'record' | 'json'
}

function isInt(s: Schema): boolean {
  return (s._zod.def.checks ?? []).some((c) => c._zod.def.format === 'safeint' || c._zod.def.format === 'int32') || s._zod.def.format === 'safeint'
}

export interface DerivedFlags {
  flags: Record<string, AnyFlag>
  fields: Record<string, FieldMap>
  /** Flags of the fields the schema requires (a nested one only when its object is sent at all). */
  required: string[]
}

/**
 * Flags for every field of a body schema, except immutable ones (marked in the schema's metadata).
 * `exclude` leaves fields to the command (e.g. `options`, which takes names). A field required by the
 * schema is not a required flag to oclif, because `--data` may carry it: `missingRequired` checks the
 * merged body instead, before anything is sent.
 */
export function flagsFromSchema(schema: z.ZodType, opts: {exclude?: readonly string[]; prefix?: string[]} = {}): DerivedFlags {
  const out: DerivedFlags = {flags: {}, fields: {}, required: []}
  const root = unwrap(schema as unknown as Schema).core
  const shape = root._zod.def.shape ?? root.shape ?? {}
  for (const [name, field] of Object.entries(shape)) {
    if (opts.exclude?.includes(name) || isImmutable(field as unknown as z.ZodType)) continue
    const path = [...(opts.prefix ?? []), name]
    const flagName = path.map(kebab).join('-')
    const {core, optional} = unwrap(field)
    const required = !optional && core._zod.def.type !== 'object'
    if (required) out.required.push(flagName)
    const def = core._zod.def
    const description = `${describe(field) ?? name.replace(/_/g, ' ')}${required ? ' (required)' : ''}`
    switch (def.type) {
      case 'string':
        out.flags[flagName] = Flags.string({description})
        out.fields[flagName] = {path, kind: 'string'}
        break
      case 'number':
        out.flags[flagName] = isInt(core) ? Flags.integer({description}) : Flags.string({description})
        out.fields[flagName] = {path, kind: isInt(core) ? 'int' : 'number'}
        break
      case 'boolean':
        out.flags[flagName] = Flags.boolean({description, allowNo: true})
        out.fields[flagName] = {path, kind: 'boolean'}
        break
      case 'enum':
        out.flags[flagName] = Flags.string({description, options: Object.values(def.entries ?? {})})
        out.fields[flagName] = {path, kind: 'string'}
        break
      case 'array': {
        const element = unwrap(def.element!).core._zod.def.type
        if (element === 'string') {
          out.flags[flagName] = Flags.string({description: `${description} (repeatable)`, multiple: true})
          out.fields[flagName] = {path, kind: 'strings'}
        } else {
          out.flags[flagName] = Flags.string({description: `${description} (JSON array)`})
          out.fields[flagName] = {path, kind: 'json'}
        }
        break
      }
      case 'record':
        out.flags[flagName] = Flags.string({description: `${description}: key=value (repeatable)`, multiple: true})
        out.fields[flagName] = {path, kind: 'record'}
        break
      case 'object':
        if ((opts.prefix ?? []).length === 0) {
          const nested = flagsFromSchema(core as unknown as z.ZodType, {prefix: path})
          Object.assign(out.flags, nested.flags)
          Object.assign(out.fields, nested.fields)
          out.required.push(...nested.required)
        } else {
          out.flags[flagName] = Flags.string({description: `${description} (JSON object)`})
          out.fields[flagName] = {path, kind: 'json'}
        }
        break
      default:
        out.flags[flagName] = Flags.string({description: `${description} (JSON)`})
        out.fields[flagName] = {path, kind: 'json'}
    }
  }
  return out
}

function parseValue(flag: string, map: FieldMap, raw: unknown): unknown {
  switch (map.kind) {
    case 'number': {
      const n = Number(raw)
      if (!Number.isFinite(n)) throw usageError(`--${flag} must be a number`, `--${flag}`)
      return n
    }
    case 'record':
      return keyValues(flag, raw as string[])
    case 'json':
      try {
        return JSON.parse(raw as string)
      } catch {
        throw usageError(`--${flag} must be JSON`, `--${flag}`)
      }
    default:
      return raw
  }
}

/** A repeatable `key=value` flag's values as one record (the value may itself contain `=`). */
export function keyValues(flag: string, pairs: readonly string[] = []): Record<string, string> {
  const record: Record<string, string> = {}
  for (const pair of pairs) {
    const eq = pair.indexOf('=')
    if (eq <= 0) throw usageError(`--${flag} takes key=value, got ${JSON.stringify(pair)}`, `--${flag}`)
    record[pair.slice(0, eq)] = pair.slice(eq + 1)
  }
  return record
}

/** Reads `--data`: inline JSON, `@file.json`, or `-` for stdin. */
export async function readData(data: string | undefined): Promise<Record<string, unknown>> {
  if (data === undefined) return {}
  let text = data
  if (data === '-') {
    text = await readStdin()
  } else if (data.startsWith('@')) {
    try {
      text = await readFile(data.slice(1), 'utf8')
    } catch (error) {
      throw usageError(`--data ${data}: ${(error as Error).message}`, '--data')
    }
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    throw usageError(`--data${data === '-' ? ' (stdin)' : data.startsWith('@') ? ` ${data}` : ''} is not valid JSON: ${jsonErrorWhere(text, error as Error)}`, '--data')
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw usageError('--data must be a JSON object', '--data')
  return parsed as Record<string, unknown>
}

/** The parser's complaint with its line and column, e.g. `Unexpected token } at line 3, column 5`. */
export function jsonErrorWhere(text: string, error: Error): string {
  const message = error.message.replace(/\s*in JSON at position \d+.*$/s, '').replace(/\s*\(line \d+ column \d+\)$/, '')
  const position = /position (\d+)/.exec(error.message)?.[1]
  if (position === undefined) return message
  const before = text.slice(0, Number(position))
  const line = before.split('\n').length
  const column = Number(position) - before.lastIndexOf('\n')
  return `${message} at line ${line}, column ${column}`
}

/**
 * The required fields' flags that have no value in the body (flags and `--data` merged). A nested
 * field (`--price-currency`) counts only when its object is sent at all.
 */
export function missingRequired(derived: DerivedFlags, body: Record<string, unknown>): string[] {
  return derived.required.filter((flag) => {
    const path = derived.fields[flag]!.path
    // The optional object is not sent at all: its required fields are not needed.
    if (path.length > 1 && !isObject(valueAt(body, path.slice(0, -1)))) return false
    const value = valueAt(body, path)
    return value === undefined || value === ''
  })
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null

/** The body's value at `path` (a field of nested objects), or undefined where an object on the way is absent. */
export function valueAt(body: Record<string, unknown>, path: readonly string[]): unknown {
  let target: unknown = body
  for (const key of path) {
    if (!isObject(target)) return undefined
    target = target[key]
  }
  return target
}

/** Parses a prompted answer the way the flag would have been parsed. */
export function parsePrompted(derived: DerivedFlags, flag: string, answer: string): unknown {
  const map = derived.fields[flag]!
  if (map.kind === 'int') {
    if (!/^-?\d+$/.test(answer)) throw usageError(`--${flag} must be an integer`, `--${flag}`)
    return Number(answer)
  }
  if (map.kind === 'boolean') return /^(y|yes|true|1)$/i.test(answer)
  if (map.kind === 'strings' || map.kind === 'record') return parseValue(flag, map, answer.split(/\s*,\s*/))
  return parseValue(flag, map, answer)
}

/** Sets a value at a field's path in the body. */
export function setPath(body: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let target = body
  for (const key of path.slice(0, -1)) {
    if (typeof target[key] !== 'object' || target[key] === null) target[key] = {}
    target = target[key] as Record<string, unknown>
  }
  target[path.at(-1)!] = value
}

/** The request body: `--data` first, then every flag given, by its field path. */
export async function bodyFromFlags(derived: DerivedFlags, flags: Record<string, unknown>, data?: string): Promise<Record<string, unknown>> {
  const body = await readData(data)
  for (const [flag, map] of Object.entries(derived.fields)) {
    const raw = flags[flag]
    if (raw === undefined || (Array.isArray(raw) && raw.length === 0)) continue
    setPath(body, map.path, parseValue(flag, map, raw))
  }
  return body
}

/** The shared `--idempotency-key` flag of every command that creates or changes something. */
export const idempotencyKeyFlag = Flags.string({
  description: 'Idempotency-Key to send: a repeat with the same key returns the first result instead of writing again (safe re-runs of a script). [default: a new key per run]',
})

/** The shared `--data` flag of every command that sends a body. */
export const dataFlag = Flags.string({
  char: 'd',
  description: 'Request body as JSON, @file.json, or - for stdin; flags override its fields.',
})
