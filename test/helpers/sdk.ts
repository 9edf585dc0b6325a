import {expect} from 'chai'

import {PayappError} from '@payapp/sdk/errors'

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

/** Every endpoint id reachable from a client's namespaces, sorted. */
export function endpointsOf(tree: object): string[] {
  const out: string[] = []
  for (const value of Object.values(tree)) {
    if (typeof value === 'function' && 'endpoint' in value) out.push(value.endpoint as string)
    else if (value && typeof value === 'object') out.push(...endpointsOf(value))
  }
  return out.sort()
}
