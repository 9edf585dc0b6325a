/** Every handler of the endpoint table, merged into one object that must cover the table (`Handlers`). */
import type {Handlers} from '../app.js'
import {accountHandlers} from './account.js'
import {catalogHandlers} from './catalog.js'
import {commerceHandlers} from './commerce.js'

export const handlers: Handlers = {
  ...catalogHandlers,
  ...commerceHandlers,
  ...accountHandlers,
}

export {adminHandlers} from './admin.js'
