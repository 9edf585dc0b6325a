/**
 * The App API's reads of the merchant's account and money (spec: App API): the merchant profile,
 * payments, refunds, disputes, payouts, balance, invoices (live only), subscriptions, analytics, and
 * subscription links (live only). The token's environment decides shapes: live answers with charges,
 * the sandbox with payment and refund rows.
 */
import {created, rawList, storedList, type HandlersFor} from '../app.js'
import {analyticsSummary, balance} from '../domain/balance.js'
import {listDisputes} from '../domain/disputes.js'
import {listInvoices, requireInvoice} from '../domain/invoices.js'
import {merchantView} from '../domain/merchants.js'
import {findPayment, listPayments, listRefundedPayments, paymentView, requirePayment} from '../domain/payments.js'
import {createLink, requireLink, updateLink} from '../domain/subscription-links.js'
import {notFound} from '../errors.js'

export const accountHandlers = {
  'merchant.retrieve'({gw, scope}) {
    const merchant = gw.merchant(scope.merchant)
    if (!merchant) throw notFound('merchant', scope.merchant)
    return merchantView(merchant, scope.env)
  },

  // The endpoint table declares the status filter (paymentsListQuery); the runner has parsed it.
  'payments.list': ({gw, scope, query}) => listPayments(gw, scope, query),
  'payments.retrieve'({gw, scope, door, params}) {
    if (door === 'app') return paymentView(requirePayment(gw, scope, params.id))
    // The merchant API also finds a payment by its payment intent or charge.
    const payment = findPayment(gw, scope, params.id)
    if (!payment) throw notFound('payment', params.id, 'resource_missing')
    return paymentView(payment)
  },
  // The sandbox lists refund rows; live lists the refunded charges themselves.
  'refunds.list': ({gw, scope, query}) => (scope.env === 'test' ? rawList(gw.storage.pageRaw('refund', scope, query)) : listRefundedPayments(gw, scope, query)),
  'disputes.list': ({gw, scope, query}) => listDisputes(gw, scope, query),
  'payouts.list': storedList('payout'),
  'balance.retrieve': ({gw, scope}) => balance(gw, scope),
  'invoices.list': ({gw, scope, door, query}) => rawList(listInvoices(gw, scope, query, door === 'merchant')),
  'invoices.retrieve': ({gw, scope, door, params}) => requireInvoice(gw, scope, params.id, door === 'merchant'),
  'analytics.summary': ({gw, scope, query}) => analyticsSummary(gw, scope, query.days),

  'subscriptionLinks.list': storedList('subscription_link'),
  'subscriptionLinks.retrieve': ({gw, scope, params}) => requireLink(gw, scope, params.id),
  'subscriptionLinks.create': ({gw, scope, body}) => created(createLink(gw, scope, body)),
  'subscriptionLinks.update': ({gw, scope, params, body}) => updateLink(gw, scope, requireLink(gw, scope, params.id), body),
  'subscriptionLinks.archive': ({gw, scope, params}) => updateLink(gw, scope, requireLink(gw, scope, params.id), {active: false}),
} satisfies HandlersFor
