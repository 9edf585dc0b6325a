import {randomBytes, randomUUID} from 'node:crypto'

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** Random base62 text; 62 * 4 = 248 fits a byte, so `% 62` over bytes < 248 stays unbiased. */
export function randomText(length: number): string {
  let out = ''
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248 && out.length < length) out += ALPHABET[b % 62]
    }
  }
  return out
}

/** An id with the platform's prefix, e.g. `prod_`, `price_`, `cs_`. */
export const newId = (prefix: string, length = 20) => `${prefix}_${randomText(length)}`

/** Option groups, option values and variants are uuids in the spec. */
export const newUuid = () => randomUUID()
