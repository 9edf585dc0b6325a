/**
 * Turns the option names people type (`--option Size=M --option Color=Red`) into the `{group, value}`
 * ids a variant is created with, from the product's option groups. Ids are accepted as well; names
 * match case-insensitively. No oclif and no HTTP here, so it is unit-tested on its own.
 */
import {usageError} from '../exit-codes.js'

/** What resolution needs of an option group (the API's `option_group` object satisfies it). */
export interface OptionGroupLike {
  id: string
  name: string
  values: ReadonlyArray<{id: string; value: string}>
}

/** One `{group, value}` of a variant's combination, as ids. */
export interface OptionRef {
  group: string
  value: string
}

const PARAM = '--option'
const same = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase()
const quoted = (names: string[]) => names.map((n) => JSON.stringify(n)).join(', ')

/** `Size=M` → `{group: 'Size', value: 'M'}`; the first `=` splits, so a value may contain one. */
export function parseOptionPair(pair: string): {group: string; value: string} {
  const eq = pair.indexOf('=')
  const group = eq < 0 ? '' : pair.slice(0, eq).trim()
  const value = eq < 0 ? '' : pair.slice(eq + 1).trim()
  if (!group || !value) throw usageError(`${PARAM} takes GROUP=VALUE, e.g. Size=M (got ${JSON.stringify(pair)})`, PARAM)
  return {group, value}
}

/**
 * Resolves `GROUP=VALUE` pairs (names or ids) against a product's option groups. Unknown names fail
 * with exit 2 naming what the product has; completeness (one value per group) is left to the API.
 */
export function resolveVariantOptions(groups: readonly OptionGroupLike[], pairs: readonly string[]): OptionRef[] {
  const seen = new Set<string>()
  return pairs.map((pair) => {
    const wanted = parseOptionPair(pair)
    if (groups.length === 0) {
      throw usageError(
        `Unknown option group ${JSON.stringify(wanted.group)}: the product has no option groups (add one with "payapp products options create PRODUCT_ID --name ${wanted.group} --value ${wanted.value}")`,
        PARAM,
      )
    }
    // An id is exact and wins over a name that happens to look like it.
    const group = groups.find((g) => g.id === wanted.group) ?? groups.find((g) => same(g.name, wanted.group))
    if (!group) {
      throw usageError(`Unknown option group ${JSON.stringify(wanted.group)}; the product's groups: ${quoted(groups.map((g) => g.name))}`, PARAM)
    }
    if (seen.has(group.id)) throw usageError(`${PARAM} names the group ${JSON.stringify(group.name)} more than once`, PARAM)
    seen.add(group.id)
    const value = group.values.find((v) => v.id === wanted.value) ?? group.values.find((v) => same(v.value, wanted.value))
    if (!value) {
      const known = group.values.length === 0 ? 'it has no values yet' : `its values: ${quoted(group.values.map((v) => v.value))}`
      throw usageError(`Unknown value ${JSON.stringify(wanted.value)} for option group ${JSON.stringify(group.name)}; ${known}`, PARAM)
    }
    return {group: group.id, value: value.id}
  })
}

/**
 * Fails (exit 2, before the variant is written) when the combination leaves out an option group of
 * the product: a variant needs one value of each group.
 */
export function requireEveryGroup(groups: readonly OptionGroupLike[], refs: readonly OptionRef[]): void {
  const missing = groups.filter((g) => !refs.some((r) => r.group === g.id))
  if (missing.length === 0) return
  const each = missing.map((g) => `${g.name}=${g.values[0]?.value ?? 'VALUE'}`)
  throw usageError(
    `Missing ${PARAM} for the product's option group${missing.length === 1 ? '' : 's'} ${quoted(missing.map((g) => g.name))}: a variant takes one value of every group, e.g. ${each.map((e) => `${PARAM} ${e}`).join(' ')}`,
    PARAM,
  )
}
