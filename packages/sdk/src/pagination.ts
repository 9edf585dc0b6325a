/**
 * Pagination for list calls: by offset (App and store APIs) or by cursor (`starting_after`, the
 * merchant API). A list call returns a `PagePromise`: `await` it for the first
 * page, or `for await` over it for every item across pages. One generator (`iterPages`) drives every form.
 */
import {InvalidRequestError} from './errors.js'

/** The spec's list envelope (no total count; iterate until `has_more` is false). */
export interface Page<T> {
  object: 'list'
  has_more: boolean
  data: T[]
}

export interface PageParams {
  limit?: number
  offset?: number
  /** Cursor: the id of the last item of the previous page (the merchant API pages this way). */
  starting_after?: string
}

export type FetchPage<T> = (params: PageParams) => Promise<Page<T>>

export class PagePromise<T> extends Promise<Page<T>> implements AsyncIterable<T> {
  // `.then()` and `await` must build plain promises, not call our constructor with an executor.
  static override get [Symbol.species](): PromiseConstructor {
    return Promise
  }

  readonly #fetchPage: FetchPage<T>
  readonly #params: PageParams
  readonly #cursor: boolean

  /** Starts fetching the first page at once, as a plain list call would. `cursor`: page by `starting_after`. */
  constructor(fetchPage: FetchPage<T>, params: PageParams = {}, cursor = false) {
    const first = fetchPage({...params})
    super((resolve, reject) => {
      first.then(resolve, reject)
    })
    this.#fetchPage = fetchPage
    this.#params = {...params}
    this.#cursor = cursor
  }

  /** Every page in order; the first is the one already requested, never fetched twice. */
  async *iterPages(): AsyncGenerator<Page<T>, void, undefined> {
    // Awaiting `this` (not the inner request) marks a failed first page handled when only iterated.
    let page: Page<T> = await (this as Promise<Page<T>>)
    let offset = this.#params.offset ?? 0
    for (;;) {
      yield page
      // An empty page with has_more=true would otherwise request the same offset forever.
      if (!page.has_more || page.data.length === 0) return
      if (this.#cursor) {
        const last = page.data[page.data.length - 1] as {id?: unknown}
        if (typeof last?.id !== 'string') return
        page = await this.#fetchPage({...this.#params, starting_after: last.id})
        continue
      }
      offset += page.data.length
      page = await this.#fetchPage({...this.#params, offset})
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.iterPages()) yield* page.data
  }

  /** Collects items across pages; the cap is required so a large account cannot exhaust memory. */
  async toArray(options: {limit: number}): Promise<T[]> {
    const limit = options?.limit
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) {
      throw new InvalidRequestError({
        message: `toArray() needs a cap: pass {limit: n} with a positive integer (got ${String(limit)})`,
        code: 'invalid_limit',
        param: 'limit',
      })
    }
    const items: T[] = []
    for await (const item of this) {
      items.push(item)
      // Stopping here returns the generator, so no page beyond the cap is requested.
      if (items.length >= limit) break
    }
    return items
  }
}

/** Convenience for resource methods: `list(params) { return paginate(p => transport..., params) }`. */
export function paginate<T>(fetchPage: FetchPage<T>, params: PageParams = {}): PagePromise<T> {
  return new PagePromise(fetchPage, params)
}
