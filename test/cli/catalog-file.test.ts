import {expect} from 'chai'

import {CatalogFileError, catalogJsonSchema, loadCatalog, parseCatalog, serializeCatalog} from '../../src/cli/services/catalog/index.js'

function problems(text: string, format: 'yaml' | 'csv' | 'json', source = 'catalog.' + format): string[] {
  try {
    parseCatalog(text, format, source)
  } catch (err) {
    expect(err).to.be.instanceOf(CatalogFileError)
    expect((err as Error).message).to.contain(source)
    return (err as CatalogFileError).problems
  }
  throw new Error('expected the file to be rejected')
}

const CSV_HEADER = 'product_key,name,description,images,store_visible,price_key,price_currency,price_unit_amount,price_recurring_interval,sku,stock_qty,track_inventory,title,image'

describe('catalog files', () => {
  it('takes product, price and variant fields from the create schemas, normalising currency case and recurring defaults', () => {
    const file = parseCatalog(
      `products:
  - key: tee
    name: Tee
    tags: [a, a, b]
    prices:
      - {key: tee-eur, currency: EUR, unit_amount: 2500}
      - {key: tee-club, currency: eur, unit_amount: 900, recurring: {interval: month}}
    options: {Size: [S, M]}
    variants:
      - {sku: TEE-S, options: {Size: S}, features: [soft, soft], price: tee-club}
`,
      'yaml',
      'catalog.yaml',
    )
    const tee = file.products[0]!
    expect(tee.prices[0]!.currency).to.equal('eur')
    expect(tee.prices[1]!.recurring).to.deep.equal({interval: 'month', interval_count: 1, usage_type: 'licensed'})
    expect(tee.tags).to.deep.equal(['a', 'b'])
    expect(tee.variants[0]!.features).to.deep.equal(['soft'])
  })

  it('names the file, line and field of every YAML error', () => {
    const found = problems(
      `products:
  - key: tee
    name: Tee
    prices:
      - {key: tee-eur, currency: eur, unit_amount: 100}
    options: {Size: [S, M]}
    variants:
      - sku: TEE-X
        options: {Size: XL}
        price: nope
        colour: red
`,
      'yaml',
    )
    expect(found).to.include.members([
      'line 5: products[0].prices[0].unit_amount: must be at least 250 minor units',
      "line 8: products[0].variants[0]: Unrecognized key: \"colour\"",
    ])
    // References are checked once every object is valid.
    const refs = problems(
      `products:
  - key: tee
    name: Tee
    prices: [{key: tee-eur, currency: eur, unit_amount: 2500}]
    options: {Size: [S, M]}
    variants:
      - sku: TEE-X
        options: {Size: XL}
        price: nope
`,
      'yaml',
    )
    expect(refs).to.deep.equal([
      "line 9: products[0].variants[0].price: price 'nope' is not a price key of product 'tee'",
      "line 8: products[0].variants[0].options.Size: 'XL' is not a value of option 'Size'",
    ])
  })

  it('names the line of a JSON error too', () => {
    const json = JSON.stringify({products: [{key: 'a', name: 'A', prices: [{key: 'a-eur', currency: 'eur', unit_amount: 10}]}]}, null, 2)
    expect(problems(json, 'json')).to.deep.equal(['line 10: products[0].prices[0].unit_amount: must be at least 250 minor units'])
    expect(problems('{"products": [', 'json')[0]).to.match(/^JSON: /)
  })

  it('rejects duplicate keys and skus across the file', () => {
    const found = problems(
      `products:
  - {key: a, name: A, variants: [{sku: X, options: {}}]}
  - {key: a, name: B, variants: [{sku: X, options: {}}]}
`,
      'yaml',
    )
    expect(found).to.include("line 3: products[1].key: duplicate product key 'a'")
    expect(found).to.include("line 3: products[1].variants[0].sku: duplicate sku 'X'")
  })

  it('reads CSV with five option groups, product columns left empty on later rows, and names the line of an error', () => {
    const groups = ['Size', 'Color', 'Material', 'Fit', 'Sleeve']
    const header = `${CSV_HEADER},${groups.map((g) => `option:${g}`).join(',')}`
    const csv = [
      header,
      'tee,Tee,Soft,https://cdn.example.com/a.png|https://cdn.example.com/b.png,true,tee-eur,eur,2500,,T-1,5,true,,,S,Red,Cotton,Slim,Short',
      'tee,,,,,tee-eur,eur,2500,,T-2,5,true,,,M,Blue,Linen,Regular,Long',
      'tee,,,,,tee-gold,eur,4500,,T-3,,false,Gold,,L,Gold,Silk,Loose,None',
      'mug,Mug,,,,mug-eur,eur,1200,,,,,,,,,,,',
    ].join('\n')
    const file = parseCatalog(csv, 'csv', 'catalog.csv')
    const [tee, mug] = file.products
    expect(Object.keys(tee!.options)).to.deep.equal(groups)
    expect(tee!.options.Sleeve).to.deep.equal(['Short', 'Long', 'None'])
    expect(tee!.images).to.deep.equal(['https://cdn.example.com/a.png', 'https://cdn.example.com/b.png'])
    expect(tee!.prices.map((p) => p.key)).to.deep.equal(['tee-eur', 'tee-gold'])
    expect(tee!.variants.map((v) => [v.sku, v.price, Object.keys(v.options).length])).to.deep.equal([
      ['T-1', undefined, 5],
      ['T-2', undefined, 5],
      ['T-3', 'tee-gold', 5],
    ])
    expect(mug!.variants).to.deep.equal([])

    // CSV written from the parsed file reads back the same.
    expect(parseCatalog(serializeCatalog(file, 'csv'), 'csv', 'again.csv')).to.deep.equal(file)

    const bad = csv.replace('T-2,5,true', 'T-2,five,true')
    expect(problems(bad, 'csv')).to.deep.equal(["line 3, column stock_qty: 'five' must be a whole number"])
  })

  it('says a CSV error in the file\'s own terms: line, column header as written, value, and what it must be', () => {
    const csv = [
      CSV_HEADER + ',option: Size',
      'tee,Tee,,,,tee-eur,eur,2500,,T-1,5,true,,,S',
      'cap,Cap,,,maybe,cap-eur,EURO,25.5,fortnight,,,,,,',
      'mug,Mug,,,,mug-eur,eur,100,,,,,,,',
    ].join('\n')
    const found = problems(csv, 'csv', 'shop/catalog.csv')
    expect(found).to.deep.include.members([
      "line 3, column store_visible: 'maybe' must be true or false",
      "line 3, column price_unit_amount: '25.5' must be a whole number",
      "line 4, column price_unit_amount: '100' must be at least 250 minor units",
    ])
    expect(found).to.include("line 3, column price_currency: 'EURO' must be a 3-letter lowercase ISO currency code")
    expect(found.join('\n')).to.match(/line 3, column price_recurring_interval: 'fortnight' must be one of day, week, month, year/)
    expect(found.join('\n')).not.to.match(/products\[|prices\[|Invalid input/)
  })

  it('names an unknown CSV column as unknown, with the column it is probably meant to be', () => {
    const csv = ['product_key,nam,price_key,price_currency,price_unit_amount,colour', 'tee,Tee,tee-eur,eur,2500,red'].join('\n')
    expect(problems(csv, 'csv')).to.deep.equal([
      "line 1: unknown column 'nam' (did you mean 'name'?)",
      "line 1: unknown column 'colour' (an option group's column is 'option:<group>', e.g. 'option:colour')",
    ])
  })

  it('publishes the format as JSON Schema with the create schemas\' fields', () => {
    const schema = catalogJsonSchema() as any
    const product = schema.properties.products.items
    expect(product.required).to.include.members(['key', 'name'])
    expect(product.properties).to.include.keys('statement_descriptor', 'tax_code', 'prices', 'options', 'variants')
    expect(product.properties.prices.items.properties).to.include.keys('unit_amount', 'recurring', 'default')
    expect(product.properties.variants.items.properties).to.include.keys('sku', 'stock_qty', 'features', 'image')
  })

  it('a catalogue file that is not there is named with where it was looked for, not ENOENT', async () => {
    const err = await loadCatalog('no-such-dir/catalog.yaml').then(() => undefined, (e: unknown) => e)
    expect(err).to.be.instanceOf(CatalogFileError)
    expect((err as Error).message).to.equal(`no-such-dir/catalog.yaml: no such file (looked for ${process.cwd()}/no-such-dir/catalog.yaml)`)
    const dir = await loadCatalog('test').then(() => undefined, (e: unknown) => e)
    expect((err as Error).message + (dir as Error).message).not.to.contain('ENOENT')
    expect((dir as Error).message).to.equal('test: is a directory, not a catalogue file')
  })
})
