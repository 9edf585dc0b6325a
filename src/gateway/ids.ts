import {randomBytes, randomFillSync} from 'node:crypto'

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

/**
 * Option groups, option values and variants are uuids in the spec: version 7 (RFC 9562), whose first 48
 * bits are the time in ms, so a new row's id lands at the end of the `objects` id index instead of on a
 * random page of it (a random v4 id dirtied one more page per insert, written to the WAL at each commit).
 */
export function newUuid(): string {
  const bytes = randomPool(16)
  bytes.writeUIntBE(Date.now(), 0, 6)
  bytes[6] = (bytes[6]! & 0x0f) | 0x70
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/**
 * `n` fresh random bytes (a copy) from a pool filled 4 KiB at a time: one `randomBytes(16)` per variant cost
 * 2-3% of a keyed variant creation's CPU, as `crypto.randomUUID` pools its entropy for the same reason.
 */
const POOL = Buffer.alloc(4096)
let used = POOL.length
function randomPool(n: number): Buffer {
  if (used + n > POOL.length) {
    randomFillSync(POOL)
    used = 0
  }
  used += n
  return Buffer.from(POOL.subarray(used - n, used))
}
