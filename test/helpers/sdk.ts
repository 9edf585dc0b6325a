import {expect} from 'chai'

import {PayappError} from '../../src/sdk/errors.js'

/** The typed error a call must fail with. */
export async function rejection(promise: Promise<unknown>): Promise<PayappError> {
  try {
    await promise
  } catch (err) {
    expect(err).to.be.instanceOf(PayappError)
    return err as PayappError
  }
  throw new Error('expected the call to fail')
}
