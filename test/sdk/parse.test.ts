import {expect} from 'chai'
import {z} from 'zod'

import {ResponseValidationError} from '@payapp/sdk/errors'
import {parseResponse} from '@payapp/sdk/parse'

const openEnum = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.union([z.enum(values), z.string()]) as unknown as z.ZodType<T[number] | (string & {})>

const price = z.looseObject({id: z.string(), unit_amount: z.number().int(), type: openEnum(['one_time', 'recurring'])})
const product = z.looseObject({
  id: z.string(),
  name: z.string(),
  active: z.boolean(),
  description: z.string().nullable().optional(),
  prices: z.array(price),
  metadata: z.record(z.string(), z.string()).optional(),
})

const good = {id: 'prod_1', name: 'Mug', active: true, prices: [{id: 'price_1', unit_amount: 1200, type: 'one_time'}]}

function failure(fn: () => unknown): ResponseValidationError {
  try {
    fn()
  } catch (err) {
    expect(err).to.be.instanceOf(ResponseValidationError)
    return err as ResponseValidationError
  }
  throw new Error('expected parseResponse to throw')
}

describe('sdk/parse', () => {
  it('returns the parsed data for a valid response', () => {
    expect(parseResponse(product, good, 'product')).to.deep.equal(good)
  })

  it('passes unknown fields and unknown enum values through', () => {
    const future = {...good, store_visible: true, prices: [{id: 'price_2', unit_amount: 900, type: 'usage_based', tiers: [1]}]}
    const parsed = parseResponse(product, future, 'product')
    expect(parsed).to.deep.equal(future)
    expect(parsed.prices[0]!.type).to.equal('usage_based')
  })

  it('names the field path and the types for a wrong type on a known field', () => {
    const bad = {...good, prices: [{id: 'price_1', unit_amount: '1200', type: 'one_time'}]}
    const err = failure(() => parseResponse(product, bad, 'product'))
    expect(err.message).to.include('product.prices[0].unit_amount: expected number, got string')
    expect(err.code).to.equal('response_validation_failed')
    expect(err.raw).to.equal(bad)
    expect(err.cause).to.be.instanceOf(z.ZodError)
  })

  it('reports a missing required field as missing', () => {
    const {name: _omitted, ...bad} = good
    expect(failure(() => parseResponse(product, bad, 'product')).message).to.include('product.name: missing (expected string)')
  })

  it('reports null where a value was expected', () => {
    expect(failure(() => parseResponse(product, {...good, active: null}, 'product')).message).to.include(
      'product.active: expected boolean, got null',
    )
  })

  it('describes a wrong type for an open enum by what it accepts', () => {
    const bad = {...good, prices: [{id: 'price_1', unit_amount: 1, type: 7}]}
    expect(failure(() => parseResponse(product, bad, 'product')).message).to.include(
      'product.prices[0].type: expected "one_time" | "recurring" | string, got number',
    )
  })

  it('quotes keys that are not identifiers', () => {
    const bad = {...good, metadata: {'order-id': 42}}
    expect(failure(() => parseResponse(product, bad, 'product')).message).to.include('product.metadata["order-id"]: expected string, got number')
  })

  it('reports a wrong root and lists a bounded number of issues', () => {
    expect(failure(() => parseResponse(product, 'oops', 'product')).message).to.include('product: expected object, got string')
    const err = failure(() => parseResponse(product, {id: 1, name: 2, active: 3, prices: 4}, 'product'))
    expect(err.message).to.include('product.id: expected string, got number').and.include('(and 1 more)')
  })

  it('keeps non-type issues readable', () => {
    const list = z.looseObject({object: z.literal('list'), has_more: z.boolean(), data: z.array(price)})
    const err = failure(() => parseResponse(list, {object: 'page', has_more: false, data: []}, 'product list'))
    expect(err.message).to.include('product list.object:')
  })
})
