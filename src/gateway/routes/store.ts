import type {Handlers} from '../app.js'
import {storeView} from '../admin.js'
import {notFound} from '../errors.js'

export const storeHandlers: Partial<Handlers> = {
  'store.retrieve'({gw, scope}) {
    const merchant = gw.merchant(scope.merchant)
    if (!merchant) throw notFound('store')
    return storeView(merchant, scope.env, gw.baseUrl)
  },
}
