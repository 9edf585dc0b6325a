/**
 * The store catalogue, one implementation for both doors (spec: Store catalogue API): the store,
 * products and prices, option groups and values, variants, files. Rules live in domain/*.ts; the App
 * API's products carry no prices unless a list asks for them (`expand`, the same products:read scope as
 * `/products/{id}/prices`), the store API's do.
 */
import {created, rawList, type HandlersFor} from '../app.js'
import {sweepExpired} from '../domain/checkout.js'
import {storeFile} from '../domain/files.js'
import {storeView} from '../domain/merchants.js'
import {
  addValue,
  createOptionGroup,
  deleteOptionGroup,
  deleteValue,
  groupWithValues,
  listGroups,
  lockProduct,
  optionGroupView,
  optionsNamed,
  optionsOf,
  renameOptionGroup,
  requireGroup,
} from '../domain/option-groups.js'
import {createPrice, requirePrice, updatePrice} from '../domain/prices.js'
import {archiveProduct, createProduct, listProducts, productDetail, requireProduct, updateProduct} from '../domain/products.js'
import {createVariant, deleteVariant, listVariants, lockVariant, requireVariant, updateVariant, variantChecks, variantView} from '../domain/variants.js'
import {notFound} from '../errors.js'

const MERCHANT_PRODUCTS_LIMIT = 20

export const catalogHandlers = {
  async 'store.retrieve'({tx, scope}) {
    const merchant = await tx.merchant(scope.merchant)
    if (!merchant) throw notFound('store')
    return storeView(merchant, scope.env, tx.baseUrl)
  },

  // ---------------------------------------------------------------- products and prices

  async 'products.list'({tx, scope, door, query, request}) {
    // The merchant API's product list defaults to 20 (spec); the App and store APIs' lists to 25.
    const limit = door === 'merchant' && (request.query as {limit?: unknown}).limit === undefined ? MERCHANT_PRODUCTS_LIMIT : query.limit
    // Expiry is lazy: sessions past their time release their stock before variants are shown.
    if (query.expand?.includes('data.variants')) await sweepExpired(tx, scope)
    return rawList(await listProducts(tx, scope, door !== 'app', {...query, limit}))
  },
  'products.create': async ({tx, scope, door, body}) => created(await productDetail(tx, scope, door !== 'app', await createProduct(tx, scope, body))),
  async 'products.retrieve'({tx, scope, door, params}) {
    // Expiry is lazy: sessions past their time release their stock before variants are shown.
    await sweepExpired(tx, scope)
    return productDetail(tx, scope, door !== 'app', await requireProduct(tx, scope, params.id))
  },
  async 'products.update'({tx, scope, door, params, body}) {
    await sweepExpired(tx, scope)
    return productDetail(tx, scope, door !== 'app', await updateProduct(tx, scope, await lockProduct(tx, scope, params.id, 'exclusive'), body))
  },
  async 'products.modify'({tx, scope, params, body}) {
    await sweepExpired(tx, scope)
    return productDetail(tx, scope, true, await updateProduct(tx, scope, await lockProduct(tx, scope, params.id, 'exclusive'), body))
  },
  async 'products.defaultPrice'({tx, scope, params, body}) {
    await sweepExpired(tx, scope)
    return productDetail(tx, scope, true, await updateProduct(tx, scope, await lockProduct(tx, scope, params.id, 'exclusive'), {default_price_id: body.price}))
  },
  'products.archive': async ({tx, scope, params}) => archiveProduct(tx, scope, await lockProduct(tx, scope, params.id, 'exclusive')),

  async 'prices.list'({tx, scope, params, query}) {
    return rawList(await tx.pageRaw('price', scope, {...query, parent: (await requireProduct(tx, scope, params.id)).id}))
  },
  // A product and its prices change under the product's lock (a price may become its default): concurrent
  // changes of one product take turns, and none overwrites another's (storage's save refuses a stale copy too).
  'prices.create': async ({tx, scope, params, body}) => created(await createPrice(tx, scope, await lockProduct(tx, scope, params.id, 'exclusive'), body)),
  async 'prices.update'({tx, scope, params, body}) {
    const product = await lockProduct(tx, scope, params.id, 'exclusive')
    return updatePrice(tx, scope, product, await requirePrice(tx, scope, product, params.price), body)
  },

  // ---------------------------------------------------------------- option groups and values

  'options.list': async ({tx, scope, params, query}) => listGroups(tx, scope, await requireProduct(tx, scope, params.id), query),
  async 'options.create'({tx, scope, params, body}) {
    const {group, values} = await createOptionGroup(tx, scope, await lockProduct(tx, scope, params.id, 'exclusive'), body)
    return created(optionGroupView(group, values))
  },
  'options.update': async ({tx, scope, params, body}) => groupWithValues(tx, scope, await renameOptionGroup(tx, scope, await requireGroup(tx, scope, params.id), body.name)),
  'options.delete': async ({tx, scope, params}) => deleteOptionGroup(tx, scope, await requireGroup(tx, scope, params.id)),
  async 'values.create'({tx, scope, params, body}) {
    const group = requireGroup(tx, scope, params.id)
    await addValue(tx, scope, await group, body)
    return created(await groupWithValues(tx, scope, await group))
  },
  'values.delete': ({tx, scope, params}) => deleteValue(tx, scope, params.id),

  // ---------------------------------------------------------------- variants

  async 'variants.list'({tx, scope, params, query}) {
    // Expiry is lazy: sessions past their time release their stock before variants are shown.
    await sweepExpired(tx, scope)
    return listVariants(tx, scope, await requireProduct(tx, scope, params.id), query)
  },
  async 'variants.create'({tx, scope, params, body}) {
    // Read together with the checks' reads (one round trip on PostgreSQL); a missing product's options are none, and unused.
    // The product's lock is issued first, so the reads behind it see a concurrent option change's commit (lockProduct).
    const named = body.options.map((o) => o.value)
    const [product, options, checks] = await Promise.all([
      lockProduct(tx, scope, params.id, 'shared'),
      optionsNamed(tx, scope, params.id, named),
      variantChecks(tx, scope, params.id, body),
    ])
    return created(variantView(await createVariant(tx, scope, product, body, options, checks), product, options))
  },
  async 'variants.update'({tx, scope, params, body}) {
    await sweepExpired(tx, scope)
    const variant = await lockVariant(tx, scope, params.id)
    const product = await requireProduct(tx, scope, variant.product)
    return variantView(await updateVariant(tx, scope, product, variant, body), product, await optionsOf(tx, scope, product.id))
  },
  'variants.delete': async ({tx, scope, params}) => deleteVariant(tx, await requireVariant(tx, scope, params.id)),

  // app.ts has read the multipart upload (and fingerprinted its bytes for idempotency) by now.
  'files.create': async ({tx, scope, upload}) => created(await storeFile(tx, scope, upload!)),
} satisfies HandlersFor
