import {writeCommand} from '../../cli/command-factory.js'
import {pricesOf, productBlock} from '../../cli/services/catalog-view.js'

export default writeCommand({
  endpoint: 'products.create',
  // `default_price` is a synonym of `price`: one set of --price-* flags is enough (--data still takes either).
  exclude: ['default_price'],
  examples: [
    '<%= config.bin %> products create --name "T-shirt" --price-currency eur --price-unit-amount 2500',
    '<%= config.bin %> products create --name Mug --images files/abc/mug.png --tags kitchen --metadata sku_family=mugs',
    '<%= config.bin %> products create --name Mug --idempotency-key import-2026-11-22-row-17',
    '<%= config.bin %> products create --data @product.json',
    'cat product.json | <%= config.bin %> products create --data -',
  ],
  // The App API's product carries price ids only: the amounts take one more read.
  render: async (p, client) => productBlock(p, await pricesOf(client, p.id, p.prices)),
})
