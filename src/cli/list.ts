/**
 * The shared shape of every list command: `--limit` (one page: 1 to 100, as the platform's lists), `--all`
 * (every item across pages) and `--offset`; the result is always the API's list envelope.
 */
import {Flags} from '@oclif/core'

import type {Page, PagePromise} from '@payapp/sdk/pagination'

export const listFlags = {
  limit: Flags.integer({char: 'l', min: 1, max: 100, description: 'Items to show, 1 to 100 (one page; --all for every item). [default: 25]'}),
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
  const limit = flags.all ? 100 : (flags.limit ?? 25)
  return flags.offset === undefined ? {limit} : {limit, offset: flags.offset}
}

/** Resolves a list call per the flags into one list envelope. */
export async function collect<T>(list: PagePromise<T>, flags: ListFlagValues): Promise<Page<T>> {
  if (!flags.all) return list
  const data: T[] = []
  for await (const item of list) data.push(item)
  return {object: 'list', has_more: false, data}
}

/** A hint on stderr when a list stopped before its end (never under --all). */
export function moreHint(page: Pick<Page<unknown>, 'has_more' | 'data'>, flags: ListFlagValues, noun: string): string | undefined {
  if (!page.has_more) return undefined
  const next = (flags.offset ?? 0) + page.data.length
  return `More ${noun} exist: pass --offset ${next} for the next page, or --all.`
}
