/**
 * CLI flags derived from the request-body schemas in src/sdk, so a command never restates a field list:
 * `unit_amount` becomes `--unit-amount`, a nested object is flattened one level (`recurring.interval`
 * → `--recurring-interval`), string arrays are repeatable flags, `metadata` takes `key=value`. The
 * flags' values are folded back into a body, merged over `--data @file.json`, and the server-side
 * schema stays the one validation.
 */
import {readFile} from 'node:fs/promises'

import {Flags, type Interfaces} from '@oclif/core'
import type {z} from 'zod'

import {usageError} from './exit-codes.js'

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
}

/**
 * Flags for every field of a body schema. `exclude` leaves fields to the command (e.g. `options`,
 * which takes names); a field required by the schema is still optional as a flag, because `--data`
 * may carry it and the API names what is missing.
 */
export function flagsFromSchema(schema: z.ZodType, opts: {exclude?: readonly string[]; prefix?: string[]} = {}): DerivedFlags {
  const out: DerivedFlags = {flags: {}, fields: {}}
  const root = unwrap(schema as unknown as Schema).core
  const shape = root._zod.def.shape ?? root.shape ?? {}
  for (const [name, field] of Object.entries(shape)) {
    if (opts.exclude?.includes(name)) continue
    const path = [...(opts.prefix ?? []), name]
    const flagName = path.map(kebab).join('-')
    const {core} = unwrap(field)
    const def = core._zod.def
    const description = describe(field) ?? name.replace(/_/g, ' ')
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
    case 'record': {
      const record: Record<string, string> = {}
      for (const pair of raw as string[]) {
        const eq = pair.indexOf('=')
        if (eq <= 0) throw usageError(`--${flag} takes key=value, got "${pair}"`, `--${flag}`)
        record[pair.slice(0, eq)] = pair.slice(eq + 1)
      }
      return record
    }
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

/** Reads `--data`: inline JSON, `@file.json`, or `-` for stdin. */
export async function readData(data: string | undefined): Promise<Record<string, unknown>> {
  if (data === undefined) return {}
  let text = data
  if (data === '-') {
    const chunks: Buffer[] = []
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
    text = Buffer.concat(chunks).toString('utf8')
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
  } catch {
    throw usageError('--data is not valid JSON', '--data')
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw usageError('--data must be a JSON object', '--data')
  return parsed as Record<string, unknown>
}

/** The request body: `--data` first, then every flag given, by its field path. */
export async function bodyFromFlags(derived: DerivedFlags, flags: Record<string, unknown>, data?: string): Promise<Record<string, unknown>> {
  const body = await readData(data)
  for (const [flag, map] of Object.entries(derived.fields)) {
    const raw = flags[flag]
    if (raw === undefined || (Array.isArray(raw) && raw.length === 0)) continue
    let target = body
    for (const key of map.path.slice(0, -1)) {
      if (typeof target[key] !== 'object' || target[key] === null) target[key] = {}
      target = target[key] as Record<string, unknown>
    }
    target[map.path.at(-1)!] = parseValue(flag, map, raw)
  }
  return body
}

/** The shared `--data` flag of every command that sends a body. */
export const dataFlag = Flags.string({
  char: 'd',
  description: 'Request body as JSON, @file.json, or - for stdin; flags override its fields.',
})
