/** Every handler of the endpoint table, merged into one object that must cover the table (`Handlers`). */
import type {Handlers} from '../app.js'
import {EXPIRE_SESSION_JOB, expireSessionJob} from '../domain/checkout.js'
import {subscriptionJobs} from '../domain/subscriptions.js'
import type {Tx} from '../domain/context.js'
import type {Job} from '../storage/storage.js'
import {accountHandlers} from './account.js'
import {billingHandlers} from './billing.js'
import {catalogHandlers} from './catalog.js'
import {commerceHandlers} from './commerce.js'

export const handlers: Handlers = {
  ...catalogHandlers,
  ...commerceHandlers,
  ...accountHandlers,
  ...billingHandlers,
}

export {adminHandlers} from './admin.js'

/** What each kind of scheduled job does, in the unit of work the scheduler opens for it (see scheduler.ts). */
export function jobHandlers(): Record<string, (tx: Tx, job: Job) => Promise<void>> {
  return {
    ...subscriptionJobs(),
    [EXPIRE_SESSION_JOB]: expireSessionJob,
  }
}
