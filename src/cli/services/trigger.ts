/**
 * `payapp trigger`: causes real events on a local gateway through the store API (secret key) and the
 * admin helpers that play the buyer — no fabricated payloads, so what an app receives is what a real
 * sale produces.
 */
import type {GatewayAdmin, StoreClient} from '../../sdk/index.js'
import type {PlatformEvent} from '../../sdk/schemas/commerce.js'

export const TRIGGER_EVENTS = ['checkout.session.completed', 'checkout.session.expired', 'payment_intent.payment_failed', 'charge.refunded'] as const
export type TriggerEvent = (typeof TRIGGER_EVENTS)[number]

/** Marks the product `trigger` sells, so repeated runs reuse it instead of filling the catalogue. */
const FIXTURE_METADATA = {payapp_fixture: 'trigger'}

export interface TriggerDeps {
  store: StoreClient
  admin: GatewayAdmin
  merchant: string
  env: 'live' | 'test'
}

export interface TriggerResult {
  object: 'trigger'
  event: TriggerEvent
  /** What was done, in order, one line each. */
  steps: string[]
  /** Every event the steps caused, oldest first. */
  events: PlatformEvent[]
}

async function fixtureProduct(store: StoreClient, steps: string[]): Promise<string> {
  const page = await store.products.list({limit: 100})
  const found = page.data.find((p) => p.active && p.default_price && p.metadata?.payapp_fixture === FIXTURE_METADATA.payapp_fixture)
  if (found) {
    steps.push(`Using product ${found.id} (${found.name})`)
    return found.id
  }
  const created = await store.products.create({name: 'payapp trigger fixture', metadata: FIXTURE_METADATA, price: {currency: 'eur', unit_amount: 2000}})
  steps.push(`Created product ${created.id} with a 20.00 EUR price`)
  return created.id
}

async function newestEventId(deps: TriggerDeps): Promise<string | undefined> {
  return (await deps.admin.events.list({merchant: deps.merchant, env: deps.env, limit: 1})).data[0]?.id
}

export async function trigger(event: TriggerEvent, deps: TriggerDeps): Promise<TriggerResult> {
  const steps: string[] = []
  const product = await fixtureProduct(deps.store, steps)
  const before = await newestEventId(deps)

  const checkout = await deps.store.checkouts.create({product_id: product})
  steps.push(`Created checkout session ${checkout.session_id}`)
  if (event === 'checkout.session.expired') {
    await deps.admin.checkouts.expire(checkout.session_id)
    steps.push(`Expired checkout session ${checkout.session_id}`)
  } else {
    const outcome = event === 'payment_intent.payment_failed' ? 'declined' : 'paid'
    const done = await deps.admin.checkouts.complete(checkout.session_id, {outcome})
    steps.push(outcome === 'paid' ? `Paid checkout session ${checkout.session_id}: payment ${done.payment.id}` : `Declined the buyer's card: payment ${done.payment.id}`)
    if (event === 'charge.refunded') {
      const refunded = await deps.admin.payments.refund(done.payment.id)
      steps.push(`Refunded payment ${done.payment.id}: refund ${refunded.refund.id}`)
    }
  }

  const recent = (await deps.admin.events.list({merchant: deps.merchant, env: deps.env, limit: 1000})).data
  const cut = before ? recent.findIndex((e) => e.id === before) : -1
  const events = (cut >= 0 ? recent.slice(0, cut) : recent).reverse()
  return {object: 'trigger', event, steps, events}
}
