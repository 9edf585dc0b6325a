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
  'subscriptions.create': async ({tx, scope, body}) => created(await subscriptionView(tx, scope, await createSubscription(tx, scope, {...body, plan: await planOfPrice(tx, scope, body.price_id)}))),
  async 'subscriptions.list'({tx, scope, door, query}) {
    const page = await listSubscriptions(tx, scope, query)
    if (door === 'app') return rawList(page)
    // The merchant API shows an incomplete subscription with its client secret; every other row is
    // spliced as stored, and none is read again by id.
    const rows: string[] = []
    for (const row of page.rows) {
      const sub = JSON.parse(row) as Subscription
      rows.push(sub.status === 'incomplete' ? JSON.stringify(await subscriptionView(tx, scope, sub)) : row)
    }
    return rawList({rows, hasMore: page.hasMore})
  },
  'subscriptions.retrieve': async ({tx, scope, params}) => subscriptionView(tx, scope, await requireSubscription(tx, scope, params.id)),
  'subscriptions.cancel': ({tx, scope, params, body}) => cancelSubscription(tx, scope, params.id, body.at_period_end),
  'customers.retrieve': ({tx, scope, params}) => requireCustomer(tx, scope, params.id),
  'fraudWarnings.list': ({tx, scope, query}) => listFraudWarnings(tx, scope, query),
  'fraudWarnings.retrieve': ({tx, scope, params}) => getFraudWarning(tx, scope, params.id),
  'fraudWarnings.testCreate': async ({tx, scope, body}) => created(await createFraudWarning(tx, scope, body)),
} satisfies HandlersFor
