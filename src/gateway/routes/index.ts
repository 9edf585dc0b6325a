/** Every route module of the gateway, merged into one handler table keyed by endpoint id. */
import type {FastifyInstance} from 'fastify'

import type {Platform} from '../platform.js'
import type {Handlers} from '../app.js'
import type {AdminRouteDef} from '../admin.js'
import type {Seeder} from '../seed.js'
import {storeHandlers} from './store.js'
import {accountHandlers} from './account.js'
import {subscriptionLinkHandlers} from './subscription-links.js'
import {adminAccountRoutes} from '../admin-account.js'
import {seedAccount} from '../account-seed.js'
import {seedSales} from '../sales-seed.js'
import {catalogHandlers, catalogSeeder} from './catalog.js'
import {checkoutHandlers} from './checkouts.js'
import {orderHandlers} from './orders.js'
import {paymentHandlers} from './payments.js'
import {registerSessionRoutes} from './sessions.js'
import {registerHostedCheckout} from './hosted-checkout.js'
import {adminCheckoutRoutes} from '../admin-checkout.js'
import {webhookAdminRoutes} from '../webhooks.js'

export const handlers: Partial<Handlers> = {
  ...storeHandlers,
  ...accountHandlers,
  ...subscriptionLinkHandlers,
  ...catalogHandlers,
  ...checkoutHandlers,
  ...orderHandlers,
  ...paymentHandlers,
}

/** Admin helper routes (the simulated buyer and outside world) contributed by route modules. */
export const adminRoutes: AdminRouteDef[] = [
  ...adminAccountRoutes,
  ...adminCheckoutRoutes,
  ...webhookAdminRoutes,
]

/** Sample-data seeders, run per environment by `--seed`. */
// Back-dated account history first, today's sales last: lists are newest first by insertion.
export const seeders: Seeder[] = [catalogSeeder, seedAccount, seedSales]

/** Routes outside the two APIs' endpoint table (merchant checkout-session routes, hosted pages). */
export const extraRoutes: Array<(app: FastifyInstance, platform: Platform) => void> = [
  registerSessionRoutes,
  registerHostedCheckout,
]
