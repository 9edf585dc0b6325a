import {expect} from 'chai'

import {CliError, ExitCode} from '../../src/cli/exit-codes.js'
import {parseOptionPair, resolveVariantOptions, type OptionGroupLike} from '../../src/cli/services/variant-options.js'

const groups: OptionGroupLike[] = [
  {
    id: 'g-size',
    name: 'Size',
    values: [
      {id: 'v-s', value: 'S'},
      {id: 'v-m', value: 'M'},
      {id: 'v-l', value: 'L'},
    ],
  },
  {
    id: 'g-color',
    name: 'Color',
    values: [
      {id: 'v-red', value: 'Red'},
      {id: 'v-navy', value: 'Navy Blue'},
    ],
  },
]

function usageFailure(fn: () => unknown): CliError {
  try {
    fn()
  } catch (error) {
    expect(error).to.be.instanceOf(CliError)
    expect((error as CliError).exitCode).to.equal(ExitCode.USAGE)
    expect((error as CliError).param).to.equal('--option')
    return error as CliError
  }
  throw new Error('expected a usage error')
}

describe('variant option resolution', function () {
  it('resolves group and value names to ids, case-insensitively and in the order given', function () {
    expect(resolveVariantOptions(groups, ['size=m', 'COLOR=navy blue'])).to.deep.equal([
      {group: 'g-size', value: 'v-m'},
      {group: 'g-color', value: 'v-navy'},
    ])
  })

  it('accepts ids, and names and ids mixed', function () {
    expect(resolveVariantOptions(groups, ['g-color=v-red', 'Size=v-l'])).to.deep.equal([
      {group: 'g-color', value: 'v-red'},
      {group: 'g-size', value: 'v-l'},
    ])
  })

  it('trims spaces around names and splits on the first =', function () {
    expect(parseOptionPair(' Size = M ')).to.deep.equal({group: 'Size', value: 'M'})
    expect(parseOptionPair('Note=a=b')).to.deep.equal({group: 'Note', value: 'a=b'})
  })

  it('rejects a pair that is not GROUP=VALUE', function () {
    for (const bad of ['M', '=M', 'Size=', ' = ']) {
      expect(usageFailure(() => parseOptionPair(bad)).message).to.equal(`--option takes GROUP=VALUE, e.g. Size=M (got ${JSON.stringify(bad)})`)
    }
  })

  it('names the known groups when a group is unknown', function () {
    expect(usageFailure(() => resolveVariantOptions(groups, ['Fit=Slim'])).message).to.equal(
      'Unknown option group "Fit"; the product\'s groups: "Size", "Color"',
    )
  })

  it("names the group's values when a value is unknown", function () {
    expect(usageFailure(() => resolveVariantOptions(groups, ['Size=XL'])).message).to.equal(
      'Unknown value "XL" for option group "Size"; its values: "S", "M", "L"',
    )
  })

  it('does not match a value of another group', function () {
    expect(usageFailure(() => resolveVariantOptions(groups, ['Size=Red'])).message).to.match(/^Unknown value "Red" for option group "Size"/)
  })

  it('rejects the same group twice, by name or id', function () {
    expect(usageFailure(() => resolveVariantOptions(groups, ['Size=S', 'g-size=M'])).message).to.equal('--option names the group "Size" more than once')
  })

  it('explains a product without option groups', function () {
    expect(usageFailure(() => resolveVariantOptions([], ['Size=M'])).message).to.match(/the product has no option groups .*products options create/)
  })

  it('says so when a group has no values', function () {
    const empty = [{id: 'g-x', name: 'Fit', values: []}]
    expect(usageFailure(() => resolveVariantOptions(empty, ['Fit=Slim'])).message).to.equal('Unknown value "Slim" for option group "Fit"; it has no values yet')
  })

  it('resolves nothing for no pairs', function () {
    expect(resolveVariantOptions(groups, [])).to.deep.equal([])
  })
})
