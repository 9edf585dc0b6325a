/**
 * The store catalogue, one implementation for both doors (spec: Store catalogue API): the store,
 * products and prices, option groups and values, variants, files. Rules live in domain/*.ts; the App
 * API's products carry no prices, the store API's do.
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
  optionGroupView,
  optionsOf,
  renameOptionGroup,
  requireGroup,
} from '../domain/option-groups.js'
import {createPrice, requirePrice, updatePrice} from '../domain/prices.js'
import {archiveProduct, createProduct, listProducts, productDetail, requireProduct, updateProduct} from '../domain/products.js'
import {createVariant, deleteVariant, listVariants, requireVariant, updateVariant, variantView} from '../domain/variants.js'
import {notFound} from '../errors.js'

const MERCHANT_PRODUCTS_LIMIT = 20

export const catalogHandlers = {
  'store.retrieve'({gw, scope}) {
    const merchant = gw.merchant(scope.merchant)
    if (!merchant) throw notFound('store')
    return storeView(merchant, scope.env, gw.baseUrl)
  },

  // ---------------------------------------------------------------- products and prices

  'products.list'({gw, scope, door, query, request}) {
    // The merchant API's product list defaults to 20 (spec); the App and store APIs' lists to 25.
    const limit = door === 'merchant' && (request.query as {limit?: unknown}).limit === undefined ? MERCHANT_PRODUCTS_LIMIT : query.limit
    return rawList(listProducts(gw, scope, door !== 'app', {...query, limit}))
  },
  'products.create': ({gw, scope, door, body}) => created(productDetail(gw, scope, door !== 'app', createProduct(gw, scope, body))),
  'products.retrieve'({gw, scope, door, params}) {
    // Expiry is lazy: sessions past their time release their stock before variants are shown.
    sweepExpired(gw, scope)
    return productDetail(gw, scope, door !== 'app', requireProduct(gw, scope, params.id))
  },
  'products.update'({gw, scope, door, params, body}) {
    sweepExpired(gw, scope)
    return productDetail(gw, scope, door !== 'app', updateProduct(gw, scope, requireProduct(gw, scope, params.id), body))
  },
  'products.modify'({gw, scope, params, body}) {
    sweepExpired(gw, scope)
    return productDetail(gw, scope, true, updateProduct(gw, scope, requireProduct(gw, scope, params.id), body))
  },
  'products.defaultPrice'({gw, scope, params, body}) {
    sweepExpired(gw, scope)
    return productDetail(gw, scope, true, updateProduct(gw, scope, requireProduct(gw, scope, params.id), {default_price_id: body.price}))
  },
  'products.archive': ({gw, scope, params}) => archiveProduct(gw, scope, requireProduct(gw, scope, params.id)),

  'prices.list'({gw, scope, params, query}) {
    return rawList(gw.storage.pageRaw('price', scope, {...query, parent: requireProduct(gw, scope, params.id).id}))
  },
  'prices.create': ({gw, scope, params, body}) => created(createPrice(gw, scope, requireProduct(gw, scope, params.id), body)),
  'prices.update'({gw, scope, params, body}) {
    const product = requireProduct(gw, scope, params.id)
    return updatePrice(gw, scope, product, requirePrice(gw, scope, product, params.price), body)
  },

  // ---------------------------------------------------------------- option groups and values

  'options.list': ({gw, scope, params, query}) => listGroups(gw, scope, requireProduct(gw, scope, params.id), query),
  'options.create'({gw, scope, params, body}) {
    const {group, values} = createOptionGroup(gw, scope, requireProduct(gw, scope, params.id), body)
    return created(optionGroupView(group, values))
  },
  'options.update': ({gw, scope, params, body}) => groupWithValues(gw, scope, renameOptionGroup(gw, scope, requireGroup(gw, scope, params.id), body.name)),
  'options.delete': ({gw, scope, params}) => deleteOptionGroup(gw, scope, requireGroup(gw, scope, params.id)),
  'values.create'({gw, scope, params, body}) {
    const group = requireGroup(gw, scope, params.id)
    addValue(gw, scope, group, body)
    return created(groupWithValues(gw, scope, group))
  },
  'values.delete': ({gw, scope, params}) => deleteValue(gw, scope, params.id),

  // ---------------------------------------------------------------- variants

  'variants.list'({gw, scope, params, query}) {
    // Expiry is lazy: sessions past their time release their stock before variants are shown.
    sweepExpired(gw, scope)
    return listVariants(gw, scope, requireProduct(gw, scope, params.id), query)
  },
  'variants.create'({gw, scope, params, body}) {
    const product = requireProduct(gw, scope, params.id)
    const options = optionsOf(gw, scope, product.id)
    return created(variantView(createVariant(gw, scope, product, body, options), product, options))
  },
  'variants.update'({gw, scope, params, body}) {
    sweepExpired(gw, scope)
    const variant = requireVariant(gw, scope, params.id)
    const product = requireProduct(gw, scope, variant.product)
    return variantView(updateVariant(gw, scope, product, variant, body), product, optionsOf(gw, scope, product.id))
  },
  'variants.delete': ({gw, scope, params}) => deleteVariant(gw, requireVariant(gw, scope, params.id)),

  // app.ts has read the multipart upload (and fingerprinted its bytes for idempotency) by now.
  'files.create': ({gw, scope, upload}) => created(storeFile(gw, scope, upload!)),
} satisfies HandlersFor
