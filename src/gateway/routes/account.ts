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
  async 'merchant.retrieve'({tx, scope}) {
    const merchant = await tx.merchant(scope.merchant)
    if (!merchant) throw notFound('merchant', scope.merchant)
    return merchantView(merchant, scope.env)
  },

  // The endpoint table declares the status filter (paymentsListQuery); the runner has parsed it.
  'payments.list': ({tx, scope, query}) => listPayments(tx, scope, query),
  async 'payments.retrieve'({tx, scope, door, params}) {
    if (door === 'app') return paymentView(await requirePayment(tx, scope, params.id))
    // The merchant API also finds a payment by its payment intent or charge.
    const payment = await findPayment(tx, scope, params.id)
    if (!payment) throw notFound('payment', params.id, 'resource_missing')
    return paymentView(payment)
  },
  // The sandbox lists refund rows; live lists the refunded charges themselves.
  'refunds.list': async ({tx, scope, query}) => (scope.env === 'test' ? rawList(await tx.pageRaw('refund', scope, query)) : listRefundedPayments(tx, scope, query)),
  'disputes.list': ({tx, scope, query}) => listDisputes(tx, scope, query),
  'payouts.list': storedList('payout'),
  'balance.retrieve': ({tx, scope}) => balance(tx, scope),
  'invoices.list': async ({tx, scope, door, query}) => rawList(await listInvoices(tx, scope, query, door === 'merchant')),
  'invoices.retrieve': ({tx, scope, door, params}) => requireInvoice(tx, scope, params.id, door === 'merchant'),
  'analytics.summary': ({tx, scope, query}) => analyticsSummary(tx, scope, query.days),

  'subscriptionLinks.list': storedList('subscription_link'),
  'subscriptionLinks.retrieve': ({tx, scope, params}) => requireLink(tx, scope, params.id),
  'subscriptionLinks.create': async ({tx, scope, body}) => created(await createLink(tx, scope, body)),
  'subscriptionLinks.update': async ({tx, scope, params, body}) => updateLink(tx, scope, await requireLink(tx, scope, params.id), body),
  'subscriptionLinks.archive': async ({tx, scope, params}) => updateLink(tx, scope, await requireLink(tx, scope, params.id), {active: false}),
} satisfies HandlersFor
