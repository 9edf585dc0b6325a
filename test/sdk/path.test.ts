import {expect} from 'chai'

import {InvalidRequestError} from '@payapp/sdk/errors'
import {path} from '@payapp/sdk/path'

function thrown(fn: () => unknown): InvalidRequestError {
  try {
    fn()
  } catch (err) {
    return err as InvalidRequestError
  }
  throw new Error('expected path`` to throw')
}

describe('sdk/path', () => {
  it('leaves a template without params unchanged', () => {
    expect(path`/merchant`).to.equal('/merchant')
  })

  it('interpolates ids into their segments', () => {
    const id = 'prod_123'
    expect(path`/products/${id}/variants`).to.equal('/products/prod_123/variants')
    expect(path`/options/${'6f1c'}/values/${42}`).to.equal('/options/6f1c/values/42')
  })

  it('percent-encodes characters that are not safe in a segment', () => {
    expect(path`/products/${'a b%c&d=é'}`).to.equal('/products/a%20b%25c%26d%3D%C3%A9')
    // An already-encoded dot segment stays literal text, not a traversal.
    expect(path`/products/${'%2e%2e'}`).to.equal('/products/%252e%252e')
  })

  for (const [label, value] of [
    ['empty', ''],
    ['blank', '  '],
    ['a dot segment', '.'],
    ['a parent segment', '..'],
    ['a slash', 'prod_1/../../merchant'],
    ['a query', 'prod_1?expand=all'],
    ['a fragment', 'prod_1#x'],
    ['a backslash', '..\\admin'],
  ] as const) {
    it(`refuses a param that is ${label}`, () => {
      const err = thrown(() => path`/products/${value}/prices`)
      expect(err).to.be.instanceOf(InvalidRequestError)
      expect(err.code).to.equal('invalid_path_param')
    })
  }

  it('refuses undefined, null, objects and non-finite numbers instead of printing them', () => {
    for (const value of [undefined, null, {id: 'x'}, Number.NaN, Number.POSITIVE_INFINITY]) {
      const err = thrown(() => path`/products/${value}`)
      expect(err.code).to.equal('invalid_path_param')
    }
  })

  it('says which param is wrong', () => {
    const err = thrown(() => path`/products/${'prod_1'}/variants/${''}`)
    expect(err.message).to.include('Path parameter 2')
    expect(err.param).to.equal('path[1]')
  })
})
