/**
 * Billing and risk on the merchant API (spec: Subscriptions, Fraud warnings; secret keys): subscriptions
 * and their customers, and fraud warnings with the test helper. Rules live in domain/subscriptions.ts,
 * domain/customers.ts and domain/fraud-warnings.ts.
 */
import type {Subscription} from '@payapp/sdk/schemas/commerce'
import {created, rawList, type HandlersFor} from '../app.js'
import {requireCustomer} from '../domain/customers.js'
import {createFraudWarning, getFraudWarning, listFraudWarnings} from '../domain/fraud-warnings.js'
import {cancelSubscription, createSubscription, listSubscriptions, planOfPrice, requireSubscription, subscriptionView} from '../domain/subscriptions.js'

export const billingHandlers = {
  'subscriptions.create': ({gw, scope, body}) => created(subscriptionView(gw, scope, createSubscription(gw, scope, {...body, plan: planOfPrice(gw, scope, body.price_id)}))),
  'subscriptions.list'({gw, scope, door, query}) {
    const page = listSubscriptions(gw, scope, query)
    if (door === 'app') return rawList(page)
    // The merchant API shows an incomplete subscription with its client secret; every other row is
    // spliced as stored, and none is read again by id.
    const rows = page.rows.map((row) => {
      const sub = JSON.parse(row) as Subscription
      return sub.status === 'incomplete' ? JSON.stringify(subscriptionView(gw, scope, sub)) : row
    })
    return rawList({rows, hasMore: page.hasMore})
  },
  'subscriptions.retrieve': ({gw, scope, params}) => subscriptionView(gw, scope, requireSubscription(gw, scope, params.id)),
  'subscriptions.cancel': ({gw, scope, params, body}) => cancelSubscription(gw, scope, params.id, body.at_period_end),
  'customers.retrieve': ({gw, scope, params}) => requireCustomer(gw, scope, params.id),
  'fraudWarnings.list': ({gw, scope, query}) => listFraudWarnings(gw, scope, query),
  'fraudWarnings.retrieve': ({gw, scope, params}) => getFraudWarning(gw, scope, params.id),
  'fraudWarnings.testCreate': ({gw, scope, body}) => created(createFraudWarning(gw, scope, body)),
} satisfies HandlersFor
