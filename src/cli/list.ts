/**
 * The shared shape of every list command: `--limit` (one page, or pages up to N beyond 100), `--all`
 * (every item across pages) and `--offset`; the result is always the API's list envelope.
 */
import {Flags} from '@oclif/core'

import type {Page, PagePromise} from '@payapp/sdk/pagination'

export const listFlags = {
  limit: Flags.integer({char: 'l', min: 1, description: 'Items to show (one page up to 100; more pages beyond). [default: 25]'}),
  offset: Flags.integer({min: 0, description: 'Items to skip.'}),
  all: Flags.boolean({description: 'Page through every item.', exclusive: ['limit']}),
}

export interface ListFlagValues {
  limit?: number
  offset?: number
  all?: boolean
}

/** The page parameters to pass to an SDK list call for these flags. */
export function pageParams(flags: ListFlagValues): {limit: number; offset?: number} {
  const limit = flags.all ? 100 : Math.min(flags.limit ?? 25, 100)
  return flags.offset === undefined ? {limit} : {limit, offset: flags.offset}
}

/** Resolves a list call per the flags into one list envelope. */
export async function collect<T>(list: PagePromise<T>, flags: ListFlagValues): Promise<Page<T>> {
  if (!flags.all && (flags.limit ?? 25) <= 100) return list
  if (flags.all) {
    const data: T[] = []
    for await (const item of list) data.push(item)
    return {object: 'list', has_more: false, data}
  }
  const wanted = flags.limit!
  const data = await list.toArray({limit: wanted + 1})
  return {object: 'list', has_more: data.length > wanted, data: data.slice(0, wanted)}
}

/** A hint on stderr when a list stopped before its end (never under --all). */
export function moreHint(page: Pick<Page<unknown>, 'has_more' | 'data'>, flags: ListFlagValues, noun: string): string | undefined {
  if (!page.has_more) return undefined
  const next = (flags.offset ?? 0) + page.data.length
  return `More ${noun} exist: pass --offset ${next} for the next page, or --all.`
}
