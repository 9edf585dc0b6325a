/** Every route module of the gateway, merged into one handler table keyed by endpoint id. */
import type {FastifyInstance} from 'fastify'

import type {Platform} from '../platform.js'
import type {Handlers} from '../app.js'
import type {AdminRouteDef} from '../admin.js'
import type {Seeder} from '../seed.js'
import {storeHandlers} from './store.js'

export const handlers: Partial<Handlers> = {
  ...storeHandlers,
}

/** Admin helper routes (the simulated buyer and outside world) contributed by route modules. */
export const adminRoutes: AdminRouteDef[] = []

/** Sample-data seeders, run per environment by `--seed`. */
export const seeders: Seeder[] = []

/** Routes outside the two APIs' endpoint table (merchant checkout-session routes, hosted pages). */
export const extraRoutes: Array<(app: FastifyInstance, platform: Platform) => void> = []
