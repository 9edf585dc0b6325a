/**
 * Commerce namespaces: orders, store checkouts, and the App API's account reads (merchant, payments,
 * refunds, disputes, payouts, balance, invoices, subscriptions, analytics, subscription links).
 */
import type {ListParams, DefineMethod, QueryOf, RequestOptions} from '../types.js'
import type {BodyOf} from '../endpoints.js'

export function commerceResources(define: DefineMethod) {
  return {
    orders: {
      list: define('orders.list', (call) => (params?: ListParams<'orders.list'>, opts?: RequestOptions) => call({...opts, query: params})),
      retrieve: define('orders.retrieve', (call) => (orderId: string, opts?: RequestOptions) => call({...opts, params: {id: orderId}})),
      update: define('orders.update', (call) => (orderId: string, body: BodyOf<'orders.update'>, opts?: RequestOptions) =>
        call({...opts, params: {id: orderId}, body}),
      ),
      /** Sandbox only: an order fixture, as if a buyer had paid. */
      create: define('orders.create', (call) => (body: BodyOf<'orders.create'>, opts?: RequestOptions) => call({...opts, body})),
      evidence: {
        create: define('orders.evidence.create', (call) => (orderId: string, body: BodyOf<'orders.evidence.create'>, opts?: RequestOptions) =>
          call({...opts, params: {id: orderId}, body}),
        ),
      },
    },

    checkouts: {
      create: define('checkouts.create', (call) => (body: BodyOf<'checkouts.create'>, opts?: RequestOptions) => call({...opts, body})),
    },

    merchant: {
      retrieve: define('merchant.retrieve', (call) => (opts?: RequestOptions) => call({...opts})),
    },

    payments: {
      list: define('payments.list', (call) => (params?: ListParams<'payments.list'>, opts?: RequestOptions) => call({...opts, query: params})),
      /** `paymentId` is the charge id (`ch_`) in live and the row id (`py_`) in the sandbox. */
      retrieve: define('payments.retrieve', (call) => (paymentId: string, opts?: RequestOptions) => call({...opts, params: {id: paymentId}})),
    },

    refunds: {
      list: define('refunds.list', (call) => (params?: ListParams<'refunds.list'>, opts?: RequestOptions) => call({...opts, query: params})),
    },

    disputes: {
      list: define('disputes.list', (call) => (params?: ListParams<'disputes.list'>, opts?: RequestOptions) => call({...opts, query: params})),
    },

    payouts: {
      list: define('payouts.list', (call) => (params?: ListParams<'payouts.list'>, opts?: RequestOptions) => call({...opts, query: params})),
    },

    balance: {
      retrieve: define('balance.retrieve', (call) => (opts?: RequestOptions) => call({...opts})),
    },

    invoices: {
      list: define('invoices.list', (call) => (params?: ListParams<'invoices.list'>, opts?: RequestOptions) => call({...opts, query: params})),
      retrieve: define('invoices.retrieve', (call) => (invoiceId: string, opts?: RequestOptions) => call({...opts, params: {id: invoiceId}})),
    },

    subscriptions: {
      list: define('subscriptions.list', (call) => (params?: ListParams<'subscriptions.list'>, opts?: RequestOptions) =>
        call({...opts, query: params}),
      ),
      /** Merchant API: a new subscription, `incomplete` with its `client_secret` until confirmed. */
      create: define('subscriptions.create', (call) => (body: BodyOf<'subscriptions.create'>, opts?: RequestOptions) => call({...opts, body})),
      retrieve: define('subscriptions.retrieve', (call) => (subscriptionId: string, opts?: RequestOptions) => call({...opts, params: {id: subscriptionId}})),
      /** At period end (default) or now; a second cancel is 409 `subscription_already_canceled`. */
      cancel: define('subscriptions.cancel', (call) => (subscriptionId: string, body: BodyOf<'subscriptions.cancel'> = {}, opts?: RequestOptions) =>
        call({...opts, params: {id: subscriptionId}, body}),
      ),
    },

    customers: {
      retrieve: define('customers.retrieve', (call) => (customerId: string, opts?: RequestOptions) => call({...opts, params: {id: customerId}})),
    },

    fraudWarnings: {
      /** Newest first; filters `status`, `actionable` ('true' | 'false'), `created_gte`, `created_lte`, cursor `starting_after`. */
      list: define('fraudWarnings.list', (call) => (params?: ListParams<'fraudWarnings.list'>, opts?: RequestOptions) => call({...opts, query: params})),
      retrieve: define('fraudWarnings.retrieve', (call) => (warningId: string, opts?: RequestOptions) => call({...opts, params: {id: warningId}})),
      /** Test keys only: a synthetic warning (`fraud_warning.created`). */
      testCreate: define('fraudWarnings.testCreate', (call) => (body: BodyOf<'fraudWarnings.testCreate'> = {}, opts?: RequestOptions) => call({...opts, body})),
    },

    analytics: {
      /** Volume over the last `days` (1 to 365, default 30). */
      summary: define('analytics.summary', (call) => (params?: QueryOf<'analytics.summary'>, opts?: RequestOptions) =>
        call({...opts, query: params}),
      ),
    },

    subscriptionLinks: {
      list: define('subscriptionLinks.list', (call) => (params?: ListParams<'subscriptionLinks.list'>, opts?: RequestOptions) =>
        call({...opts, query: params}),
      ),
      retrieve: define('subscriptionLinks.retrieve', (call) => (linkId: string, opts?: RequestOptions) => call({...opts, params: {id: linkId}})),
      create: define('subscriptionLinks.create', (call) => (body: BodyOf<'subscriptionLinks.create'>, opts?: RequestOptions) => call({...opts, body})),
      update: define('subscriptionLinks.update', (call) => (linkId: string, body: BodyOf<'subscriptionLinks.update'>, opts?: RequestOptions) =>
        call({...opts, params: {id: linkId}, body}),
      ),
      archive: define('subscriptionLinks.archive', (call) => (linkId: string, opts?: RequestOptions) => call({...opts, params: {id: linkId}})),
    },
  }
}
