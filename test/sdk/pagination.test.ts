import {expect} from 'chai'

import {InvalidRequestError} from '@payapp/sdk/errors'
import {PagePromise, paginate, type Page, type PageParams} from '@payapp/sdk/pagination'

/** A fake list endpoint over `total` items that records every page request. */
function fakeList(total: number, pageSize = 3) {
  const calls: PageParams[] = []
  const items = Array.from({length: total}, (_, i) => ({id: `item_${i}`}))
  const fetchPage = async (params: PageParams): Promise<Page<{id: string}>> => {
    calls.push(params)
    const offset = params.offset ?? 0
    const limit = params.limit ?? pageSize
    const data = items.slice(offset, offset + limit)
    return {object: 'list', has_more: offset + limit < total, data}
  }
  return {calls, fetchPage}
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const item of iterable) out.push(item)
  return out
}

describe('sdk/pagination', () => {
  it('awaiting gives the first page only', async () => {
    const {calls, fetchPage} = fakeList(7)
    const page = await paginate(fetchPage, {limit: 3})
    expect(page.data.map((i) => i.id)).to.deep.equal(['item_0', 'item_1', 'item_2'])
    expect(page.has_more).to.equal(true)
    expect(calls).to.deep.equal([{limit: 3}])
  })

  it('is a real promise', async () => {
    const {fetchPage} = fakeList(2)
    const list = paginate(fetchPage)
    expect(list).to.be.instanceOf(Promise)
    const chained = list.then((p) => p.data.length)
    expect(chained).not.to.be.instanceOf(PagePromise)
    expect(await chained).to.equal(2)
  })

  it('for await yields every item across pages, advancing offset by page length', async () => {
    const {calls, fetchPage} = fakeList(7)
    const items = await collect(paginate(fetchPage, {limit: 3}))
    expect(items.map((i) => i.id)).to.deep.equal(['item_0', 'item_1', 'item_2', 'item_3', 'item_4', 'item_5', 'item_6'])
    expect(calls).to.deep.equal([{limit: 3}, {limit: 3, offset: 3}, {limit: 3, offset: 6}])
  })

  it('starts from the initial offset', async () => {
    const {calls, fetchPage} = fakeList(5)
    const items = await collect(paginate(fetchPage, {limit: 2, offset: 2}))
    expect(items.map((i) => i.id)).to.deep.equal(['item_2', 'item_3', 'item_4'])
    expect(calls.map((c) => c.offset)).to.deep.equal([2, 4])
  })

  it('reuses the first page when awaited and then iterated', async () => {
    const {calls, fetchPage} = fakeList(4)
    const list = paginate(fetchPage, {limit: 3})
    await list
    expect(await collect(list)).to.have.length(4)
    expect(calls).to.have.length(2)
  })

  it('stops on an empty page even if has_more is true', async () => {
    let calls = 0
    const list = new PagePromise<number>(async () => {
      calls++
      return calls === 1 ? {object: 'list', has_more: true, data: [1, 2]} : {object: 'list', has_more: true, data: []}
    })
    expect(await collect(list)).to.deep.equal([1, 2])
    expect(calls).to.equal(2)
  })

  it('iterates pages with iterPages', async () => {
    const {fetchPage} = fakeList(5, 2)
    const sizes: number[] = []
    for await (const page of paginate(fetchPage).iterPages()) sizes.push(page.data.length)
    expect(sizes).to.deep.equal([2, 2, 1])
  })

  it('toArray returns at most limit items and fetches no page beyond the cap', async () => {
    const {calls, fetchPage} = fakeList(100, 10)
    const items = await paginate(fetchPage, {limit: 10}).toArray({limit: 15})
    expect(items).to.have.length(15)
    expect(items.at(-1)!.id).to.equal('item_14')
    expect(calls).to.have.length(2)
    expect(await paginate(fakeList(4).fetchPage).toArray({limit: 50})).to.have.length(4)
  })

  it('toArray requires a positive integer cap', async () => {
    const {fetchPage} = fakeList(3)
    for (const bad of [undefined, {}, {limit: 0}, {limit: -1}, {limit: 2.5}, {limit: '10'}]) {
      try {
        await paginate(fetchPage).toArray(bad as {limit: number})
        expect.fail(`accepted ${JSON.stringify(bad)}`)
      } catch (err) {
        expect(err).to.be.instanceOf(InvalidRequestError)
        expect((err as InvalidRequestError).message).to.include('limit')
      }
    }
  })

  it('a failing page rejects the iteration, and a failed first page is not an unhandled rejection', async () => {
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => unhandled.push(reason)
    process.on('unhandledRejection', onUnhandled)
    try {
      const list = new PagePromise<number>(async () => {
        throw new Error('HTTP 500')
      })
      let caught: unknown
      try {
        await collect(list)
      } catch (err) {
        caught = err
      }
      expect((caught as Error).message).to.equal('HTTP 500')
      await new Promise((resolve) => setTimeout(resolve, 10))
      expect(unhandled).to.deep.equal([])
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
  })
})
