import {expect} from 'chai'
import fc from 'fast-check'
import stringWidth from 'string-width'
import {PassThrough} from 'node:stream'

import {date, money, spinner, table} from '../../src/cli/output.js'

describe('output', function () {
  describe('money', function () {
    it('shows major units with the currency\'s own number of decimals', function () {
      expect(money(1000, 'eur')).to.equal('10.00 EUR')
      expect(money(500, 'jpy')).to.equal('500 JPY')
      expect(money(1234, 'bhd')).to.equal('1.234 BHD')
    })

    it('handles small, negative, large and bigint amounts exactly', function () {
      expect(money(5, 'usd')).to.equal('0.05 USD')
      expect(money(7, 'bhd')).to.equal('0.007 BHD')
      expect(money(-250, 'eur')).to.equal('-2.50 EUR')
      expect(money(123456789, 'eur')).to.equal('1,234,567.89 EUR')
      expect(money(9007199254740993n, 'jpy')).to.equal('9,007,199,254,740,993 JPY')
    })
  })

  describe('table', function () {
    const rows = [
      {id: 'prod_1', name: 'T-shirt', amount: 1500},
      {id: 'prod_22', name: 'Mug', amount: 800},
    ]

    it('aligns columns under a header', function () {
      const out = table(rows, ['id', 'name', {key: 'amount', header: 'PRICE', get: (r) => money(r.amount, 'eur'), align: 'right'}], {maxWidth: 0})
      expect(out).to.equal(
        ['ID       NAME         PRICE', 'prod_1   T-shirt  15.00 EUR', 'prod_22  Mug       8.00 EUR'].join('\n'),
      )
    })

    it('cuts long cells with … to fit the terminal width', function () {
      const out = table([{id: 'prod_1', description: 'x'.repeat(100)}], ['id', 'description'], {maxWidth: 40})
      for (const line of out.split('\n')) expect([...line].length).to.be.at.most(40)
      expect(out).to.contain('…')
      expect(out.split('\n')[1].startsWith('prod_1  ')).to.equal(true)
    })

    it('lines columns up by the width a terminal gives CJK and emoji (two cells), not by characters', function () {
      const out = table(
        [
          {name: 'Tシャツ', stock: 3},
          {name: '☕ Mug 👍🏽', stock: 12},
          {name: 'Flag 🇩🇪', stock: 1},
        ],
        ['name', 'stock'],
        {maxWidth: 0},
      )
      // Widths 7, 9 and 7 cells: the column is 9 wide, then the two-space gap.
      expect(out.split('\n')).to.deep.equal(['NAME       STOCK', 'Tシャツ    3', '☕ Mug 👍🏽  12', 'Flag 🇩🇪    1'])
    })

    it('for any cells of wide, combined and plain characters, the next column starts at the same screen column on every line', function () {
      const graphemes = fc.constantFrom('a', 'Z', ' ', '日', 'ｼ', '☕', '👍🏽', '👨‍👩‍👧', '🇩🇪', 'e\u0301', '✔️')
      const cell = fc.array(graphemes, {maxLength: 8}).map((parts) => parts.join('').trim())
      fc.assert(
        fc.property(fc.array(cell, {minLength: 1, maxLength: 6}), fc.option(fc.integer({min: 14, max: 40}), {nil: 0}), (names, maxWidth) => {
          const lines = table(names.map((name) => ({name, end: '|'})), ['name', 'end'], {maxWidth}).split('\n')
          const starts = lines.map((line) => stringWidth(line.slice(0, line.lastIndexOf('|') === -1 ? line.indexOf('END') : line.lastIndexOf('|'))))
          expect(new Set(starts).size, lines.join('\n')).to.equal(1)
          if (maxWidth) for (const line of lines) expect(stringWidth(line), line).to.be.at.most(maxWidth)
        }),
      )
    })

    it('keeps one line per row and shows missing values as blanks', function () {
      const out = table([{a: 'two\nlines', b: undefined}], ['a', 'b'], {maxWidth: 0})
      expect(out.split('\n')).to.deep.equal(['A          B', 'two lines'])
    })
  })

  it('date shows unix seconds as UTC', function () {
    expect(date(1714564800)).to.equal('2024-05-01 12:00:00 UTC')
    expect(date(undefined)).to.equal('')
  })

  describe('spinner', function () {
    const fakeStream = (isTTY: boolean) => {
      const stream = Object.assign(new PassThrough(), {isTTY}) as unknown as NodeJS.WriteStream & PassThrough
      let written = ''
      stream.on('data', (c) => (written += c))
      return {stream, written: () => written}
    }
    let ci: string | undefined
    beforeEach(function () {
      ci = process.env.CI
      delete process.env.CI
    })
    afterEach(function () {
      if (ci !== undefined) process.env.CI = ci
    })

    it('writes nothing when stderr is not a terminal or output is JSON', function () {
      for (const [isTTY, json] of [[false, false], [true, true]]) {
        const {stream, written} = fakeStream(isTTY)
        const s = spinner('Loading', {stream, json})
        s.stop('done')
        expect(written()).to.equal('')
      }
    })

    it('draws on a terminal and clears its line when stopped', function () {
      const {stream, written} = fakeStream(true)
      spinner('Loading', {stream}).stop()
      expect(written()).to.contain('Loading')
      expect(written().endsWith('\r\x1b[K')).to.equal(true)
    })
  })
})
