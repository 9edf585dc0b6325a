/**
 * Catalogue namespaces: store, products (with their prices, option groups and variants), option
 * groups, option values, variants and files. Each method only names its endpoint and maps its
 * arguments onto `call`; the path, method, scope and schemas come from the endpoint table.
 */
import type {ListParams, DefineMethod, RequestOptions} from '../types.js'
import type {BodyOf} from '../endpoints.js'
import {uploadForm, type UploadInput, type UploadMeta} from './upload.js'

/** Products with their prices, option groups and variants: the part of the catalogue the merchant API shares too. */
export function productResources(define: DefineMethod) {
  return {
    list: define('products.list', (call) => (params?: ListParams<'products.list'>, opts?: RequestOptions) => call({...opts, query: params})),
    retrieve: define('products.retrieve', (call) => (productId: string, opts?: RequestOptions) => call({...opts, params: {id: productId}})),
    create: define('products.create', (call) => (body: BodyOf<'products.create'>, opts?: RequestOptions) => call({...opts, body})),
    update: define('products.update', (call) => (productId: string, body: BodyOf<'products.update'>, opts?: RequestOptions) =>
      call({...opts, params: {id: productId}, body}),
    ),
    archive: define('products.archive', (call) => (productId: string, opts?: RequestOptions) => call({...opts, params: {id: productId}})),

    prices: {
      list: define('prices.list', (call) => (productId: string, params?: ListParams<'prices.list'>, opts?: RequestOptions) =>
        call({...opts, params: {id: productId}, query: params}),
      ),
      create: define('prices.create', (call) => (productId: string, body: BodyOf<'prices.create'>, opts?: RequestOptions) =>
        call({...opts, params: {id: productId}, body}),
      ),
      update: define('prices.update', (call) => (productId: string, priceId: string, body: BodyOf<'prices.update'>, opts?: RequestOptions) =>
        call({...opts, params: {id: productId, price: priceId}, body}),
      ),
    },

    options: {
      list: define('options.list', (call) => (productId: string, params?: ListParams<'options.list'>, opts?: RequestOptions) =>
        call({...opts, params: {id: productId}, query: params}),
      ),
      create: define('options.create', (call) => (productId: string, body: BodyOf<'options.create'>, opts?: RequestOptions) =>
        call({...opts, params: {id: productId}, body}),
      ),
    },

    variants: {
      list: define('variants.list', (call) => (productId: string, params?: ListParams<'variants.list'>, opts?: RequestOptions) =>
        call({...opts, params: {id: productId}, query: params}),
      ),
      create: define('variants.create', (call) => (productId: string, body: BodyOf<'variants.create'>, opts?: RequestOptions) =>
        call({...opts, params: {id: productId}, body}),
      ),
    },
  }
}

export function catalogResources(define: DefineMethod) {
  return {
    store: {
      retrieve: define('store.retrieve', (call) => (opts?: RequestOptions) => call({...opts})),
    },

    products: productResources(define),

    options: {
      update: define('options.update', (call) => (groupId: string, body: BodyOf<'options.update'>, opts?: RequestOptions) =>
        call({...opts, params: {id: groupId}, body}),
      ),
      delete: define('options.delete', (call) => (groupId: string, opts?: RequestOptions) => call({...opts, params: {id: groupId}})),
      values: {
        create: define('values.create', (call) => (groupId: string, body: BodyOf<'values.create'>, opts?: RequestOptions) =>
          call({...opts, params: {id: groupId}, body}),
        ),
      },
    },

    values: {
      delete: define('values.delete', (call) => (valueId: string, opts?: RequestOptions) => call({...opts, params: {id: valueId}})),
    },

    variants: {
      update: define('variants.update', (call) => (variantId: string, body: BodyOf<'variants.update'>, opts?: RequestOptions) =>
        call({...opts, params: {id: variantId}, body}),
      ),
      delete: define('variants.delete', (call) => (variantId: string, opts?: RequestOptions) => call({...opts, params: {id: variantId}})),
    },

    files: {
      /** Uploads a file (a path, Buffer, Readable or Blob) of at most 5 MB; use the result's `path` as an image or evidence. */
      upload: define('files.create', (call) => async (file: UploadInput, meta?: UploadMeta, opts?: RequestOptions) =>
        call({...opts, form: await uploadForm(file, meta)}),
      ),
    },
  }
}
