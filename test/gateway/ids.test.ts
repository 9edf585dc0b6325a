import {expect} from 'chai'

import {newUuid} from '../../src/gateway/ids.js'

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe('gateway ids', () => {
  it('makes variant, option group and option value ids RFC 9562 version 7 uuids, distinct, ordered by the ms they were made in', async () => {
    const first = Array.from({length: 5000}, () => newUuid())
    await new Promise((resolve) => setTimeout(resolve, 5))
    const later = newUuid()
    for (const id of first) expect(id).to.match(UUID_V7)
    expect(new Set(first).size).to.equal(first.length)
    // The first 48 bits are the creation time: an id made later sorts after every earlier one.
    expect(first.every((id) => id < later)).to.equal(true)
    const ms = Number.parseInt(later.replace('-', '').slice(0, 12), 16)
    expect(Math.abs(ms - Date.now())).to.be.below(1000)
  })
})
