/**
 * The merchant API's namespaces (`/v1`, MerchantClient): checkout sessions, products with their
 * prices, refunds and payments. Its own tree, because two of its methods share a name with another
 * door's but not its endpoint (`products.update` is POST here, PATCH on the App and store APIs;
 * `refunds.list` needs a charge or payment intent here).
 */
import type {BodyOf} from '../endpoints.js'
import type {DefineMethod, ListParams, RequestOptions} from '../types.js'
import {productResources} from './catalog.js'
import {commerceResources} from './commerce.js'

export function merchantResources(define: DefineMethod) {
  // The methods the merchant API shares with the other doors are the same methods.
  const products = productResources(define)
  const {payments, invoices, subscriptions, customers, fraudWarnings} = commerceResources(define)
  return {
    checkout: {
      sessions: {
        /** A raw-amount session (secret key), or one of `line_items` (any key; variants reserve stock). */
        create: define('checkoutSessions.create', (call) => (body: BodyOf<'checkoutSessions.create'>, opts?: RequestOptions) => call({...opts, body})),
        list: define('checkoutSessions.list', (call) => (params?: ListParams<'checkoutSessions.list'>, opts?: RequestOptions) => call({...opts, query: params})),
        retrieve: define('checkoutSessions.retrieve', (call) => (sessionId: string, opts?: RequestOptions) => call({...opts, params: {id: sessionId}})),
        /** Pass the `revision` you read to fail with `revision_conflict` instead of overwriting a concurrent change. */
        update: define('checkoutSessions.update', (call) => (sessionId: string, body: BodyOf<'checkoutSessions.update'>, opts?: RequestOptions) =>
          call({...opts, params: {id: sessionId}, body}),
        ),
        /** The same update as POST `/update`, for networks that block PATCH. */
        updateViaPost: define('checkoutSessions.updateViaPost', (call) => (sessionId: string, body: BodyOf<'checkoutSessions.updateViaPost'>, opts?: RequestOptions) =>
          call({...opts, params: {id: sessionId}, body}),
        ),
        expire: define('checkoutSessions.expire', (call) => (sessionId: string, opts?: RequestOptions) => call({...opts, params: {id: sessionId}})),
      },
    },

    products: {
      list: products.list,
      retrieve: products.retrieve,
      create: products.create,
      update: define('products.modify', (call) => (productId: string, body: BodyOf<'products.modify'>, opts?: RequestOptions) =>
        call({...opts, params: {id: productId}, body}),
      ),
      archive: products.archive,
      setDefaultPrice: define('products.defaultPrice', (call) => (productId: string, priceId: string, opts?: RequestOptions) =>
        call({...opts, params: {id: productId}, body: {price: priceId}}),
      ),
      prices: {list: products.prices.list, create: products.prices.create},
    },

    refunds: {
      create: define('refunds.create', (call) => (body: BodyOf<'refunds.create'>, opts?: RequestOptions) => call({...opts, body})),
      /** The refunds of one payment: pass `charge` (or `payment_intent`). */
      list: define('refunds.search', (call) => (params: ListParams<'refunds.search'>, opts?: RequestOptions) => call({...opts, query: params})),
      retrieve: define('refunds.retrieve', (call) => (refundId: string, opts?: RequestOptions) => call({...opts, params: {id: refundId}})),
    },

    payments,
    // The billing routes of the merchant door (keepDoor drops the App-API-only methods of these namespaces).
    invoices,
    subscriptions,
    customers,
    fraudWarnings,
  }
}
