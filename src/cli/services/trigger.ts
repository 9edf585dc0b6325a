/**
 * `payapp trigger`: causes a real event on a local gateway for every event type the gateway emits,
 * through its public APIs and the admin helpers that play the buyer, the bank and the card network —
 * no fabricated payloads, so what an app receives is what the real state change produces.
 *
 * `--override field=value` sets fields of the objects the trigger creates. Each recipe names the
 * fields it takes and validates them with the platform's own schemas before anything runs: an unknown
 * or ignored field is an error (the Stripe CLI silently ignores them).
 */
import {z} from 'zod'

import type {EventType} from '@payapp/sdk/events'
import type {GatewayAdmin} from '@payapp/sdk/admin'
import type {MerchantClient, StoreClient} from '@payapp/sdk/client'
import {adminPayoutCreate, adminRefundCreate, adminDisputeCreate} from '@payapp/sdk/schemas/admin'
import {fraudWarningTestCreate, subscriptionCreate} from '@payapp/sdk/schemas/billing'
import {amount, currency} from '@payapp/sdk/schemas/common'
import type {PlatformEvent, Subscription} from '@payapp/sdk/schemas/commerce'
import {storeCheckoutCreate} from '@payapp/sdk/schemas/commerce'
import {usageError} from '../exit-codes.js'
import {money} from '../output.js'

export interface TriggerDeps {
  store: StoreClient
  /** The merchant API with the same secret key (sessions, subscriptions, fraud-warning test helper). */
  merchantApi: MerchantClient
  admin: GatewayAdmin
  merchant: string
  env: 'live' | 'test'
  baseUrl: string
}

export interface TriggerResult {
  object: 'trigger'
  event: string
  /** What was done, in order, one line each. */
  steps: string[]
  /** Every event the steps caused, oldest first. */
  events: PlatformEvent[]
}

type Overrides = Record<string, unknown>

interface Recipe {
  /** Fields `--override` may set; strict, validated before anything runs. */
  overrides: z.ZodObject
  /** A catalogue fixture made (or found) before the event log is marked, so its events are not the trigger's. */
  fixture?: FixtureKind
  run(deps: RunDeps, o: Overrides, steps: string[]): Promise<void>
}

type FixtureKind = 'one_time' | 'recurring'
type RunDeps = TriggerDeps & {fixtures: Map<FixtureKind, {product: string; price: string}>}

// ---------------------------------------------------------------- fixtures

/** Marks what `trigger` creates, so repeated runs reuse it instead of filling the catalogue. */
const FIXTURE = 'payapp_fixture'

async function fixtureProduct(deps: RunDeps, steps: string[], kind: FixtureKind): Promise<{product: string; price: string}> {
  const known = deps.fixtures.get(kind)
  if (known) return known
  const fixture = await findOrCreateFixture(deps, steps, kind)
  deps.fixtures.set(kind, fixture)
  return fixture
}

async function findOrCreateFixture(deps: TriggerDeps, steps: string[], kind: FixtureKind): Promise<{product: string; price: string}> {
  const tag = kind === 'one_time' ? 'trigger' : 'trigger-subscription'
  const page = await deps.store.products.list({limit: 100})
  const found = page.data.find((p) => p.active && p.default_price && p.metadata?.[FIXTURE] === tag)
  if (found) {
    steps.push(`Using product ${found.id} (${found.name})`)
    return {product: found.id, price: found.default_price!}
  }
  const price = kind === 'one_time' ? {currency: 'eur', unit_amount: 2000} : {currency: 'eur', unit_amount: 900, recurring: {interval: 'month' as const}}
  const created = await deps.store.products.create({name: kind === 'one_time' ? 'payapp trigger fixture' : 'payapp trigger plan', metadata: {[FIXTURE]: tag}, price})
  steps.push(`Created product ${created.id} with a ${money(price.unit_amount, price.currency)}${kind === 'one_time' ? '' : ' monthly'} price`)
  return {product: created.id, price: created.default_price!}
}

// ---------------------------------------------------------------- recipes

const buyerOverrides = storeCheckoutCreate.pick({quantity: true}).partial().extend({customer_name: z.string().trim().min(2).max(120), customer_email: z.email()}).partial()

async function checkoutFor(deps: RunDeps, o: Overrides, steps: string[]) {
  const {product} = await fixtureProduct(deps, steps, 'one_time')
  const checkout = await deps.store.checkouts.create({product_id: product, quantity: (o.quantity as number | undefined) ?? 1})
  steps.push(`Created checkout session ${checkout.session_id}`)
  return checkout.session_id
}

const buyer = (o: Overrides) => ({
  ...(o.customer_name === undefined ? {} : {customer_name: o.customer_name as string}),
  ...(o.customer_email === undefined ? {} : {customer_email: o.customer_email as string}),
})

async function paidSale(deps: RunDeps, o: Overrides, steps: string[]) {
  const session = await checkoutFor(deps, o, steps)
  const done = await deps.admin.checkouts.complete(session, {outcome: 'paid', ...buyer(o)})
  steps.push(`Paid checkout session ${session}: payment ${done.payment.id}`)
  return done
}

const sale: Recipe = {overrides: buyerOverrides, fixture: 'one_time', run: async (deps, o, steps) => void (await paidSale(deps, o, steps))}

const declined: Recipe = {
  fixture: 'one_time',
  overrides: buyerOverrides,
  async run(deps, o, steps) {
    const session = await checkoutFor(deps, o, steps)
    const done = await deps.admin.checkouts.complete(session, {outcome: 'declined', ...buyer(o)})
    steps.push(`Declined the buyer's card: payment ${done.payment.id}`)
  },
}

const expired: Recipe = {
  fixture: 'one_time',
  overrides: storeCheckoutCreate.pick({quantity: true}).partial(),
  async run(deps, o, steps) {
    const session = await checkoutFor(deps, o, steps)
    await deps.admin.checkouts.expire(session)
    steps.push(`Expired checkout session ${session}`)
  },
}

const processing: Recipe = {
  fixture: 'one_time',
  overrides: buyerOverrides,
  async run(deps, o, steps) {
    const session = await checkoutFor(deps, o, steps)
    const done = await deps.admin.checkouts.complete(session, {outcome: 'processing', ...buyer(o)})
    steps.push(`Started a payment awaiting confirmation: payment ${done.payment.id}`)
  },
}

const sessionUpdated: Recipe = {
  overrides: z.strictObject({reference: z.string().max(200)}).partial(),
  async run(deps, o, steps) {
    const session = await deps.merchantApi.checkout.sessions.create({
      amount: 2000,
      currency: 'eur',
      customer_name: 'Test Customer',
      customer_email: 'customer@example.com',
    })
    steps.push(`Created checkout session ${session.id} on the merchant API`)
    const updated = await deps.merchantApi.checkout.sessions.updateViaPost(session.id, {reference: (o.reference as string | undefined) ?? 'trigger', revision: session.revision})
    steps.push(`Updated checkout session ${session.id} to revision ${updated.revision}`)
  },
}

const refunded: Recipe = {
  fixture: 'one_time',
  overrides: buyerOverrides.extend(adminRefundCreate.pick({amount: true}).partial().shape),
  async run(deps, o, steps) {
    const done = await paidSale(deps, {...o, amount: undefined}, steps)
    const refund = await deps.admin.payments.refund(done.payment.id, o.amount === undefined ? {} : {amount: o.amount as number})
    steps.push(`Refunded ${refund.refund.amount} of payment ${done.payment.id}: refund ${refund.refund.id}`)
  },
}

const disputed: Recipe = {
  fixture: 'one_time',
  overrides: buyerOverrides.extend(adminDisputeCreate.pick({reason: true}).partial().shape),
  async run(deps, o, steps) {
    const done = await paidSale(deps, o, steps)
    const dispute = await deps.admin.payments.dispute(done.payment.id, o.reason === undefined ? {} : {reason: o.reason as string})
    steps.push(`Disputed payment ${done.payment.id}: dispute ${dispute.dispute.id}`)
  },
}

const orderUpdated: Recipe = {
  fixture: 'one_time',
  overrides: buyerOverrides,
  async run(deps, o, steps) {
    const done = await paidSale(deps, o, steps)
    if (!done.order) throw new Error('The sale made no store order')
    await deps.store.orders.update(done.order.id, {status: 'processing'})
    steps.push(`Moved order ${done.order.id} to processing`)
  },
}

const productOverrides = z.strictObject({name: z.string().trim().min(1).max(200), unit_amount: amount, currency}).partial()

const productCreated: Recipe = {
  overrides: productOverrides,
  async run(deps, o, steps) {
    const p = await deps.store.products.create({
      name: (o.name as string | undefined) ?? 'payapp trigger product',
      metadata: {[FIXTURE]: 'trigger-catalog'},
      price: {currency: (o.currency as string | undefined) ?? 'eur', unit_amount: (o.unit_amount as number | undefined) ?? 1000},
    })
    steps.push(`Created product ${p.id} with price ${p.default_price}`)
  },
}

const productUpdated: Recipe = {
  fixture: 'one_time',
  overrides: productOverrides.pick({name: true}),
  async run(deps, o, steps) {
    const {product} = await fixtureProduct(deps, steps, 'one_time')
    await deps.store.products.update(product, {description: 'Updated by payapp trigger', ...(o.name ? {name: o.name as string} : {})})
    steps.push(`Updated product ${product}`)
  },
}

const priceUpdated: Recipe = {
  fixture: 'one_time',
  overrides: z.strictObject({nickname: z.string().max(200)}).partial(),
  async run(deps, o, steps) {
    const {product, price} = await fixtureProduct(deps, steps, 'one_time')
    await deps.store.products.prices.update(product, price, {nickname: (o.nickname as string | undefined) ?? 'payapp trigger'})
    steps.push(`Updated price ${price}`)
  },
}

const payout = (status: 'pending' | 'paid' | 'failed'): Recipe => ({
  overrides: adminPayoutCreate.pick({amount: true, currency: true}).partial(),
  async run(deps, o, steps) {
    const p = await deps.admin.payouts.create({merchant: deps.merchant, env: deps.env, amount: (o.amount as number | undefined) ?? 5000, currency: (o.currency as string | undefined) ?? 'eur', status})
    steps.push(`Created a ${status} payout ${p.id}`)
  },
})

const subscriptionOverrides = subscriptionCreate.pick({quantity: true, trial_days: true, customer_name: true, customer_email: true, metadata: true}).partial()

async function newSubscription(deps: RunDeps, o: Overrides, steps: string[], defaults: {trial_days?: number} = {}): Promise<Subscription> {
  const {price} = await fixtureProduct(deps, steps, 'recurring')
  const trialDays = (o.trial_days as number | undefined) ?? defaults.trial_days
  const sub = await deps.merchantApi.subscriptions.create({
    price_id: price,
    customer_name: 'Trigger Customer',
    customer_email: 'trigger@example.com',
    ...o,
    ...(trialDays === undefined ? {} : {trial_days: trialDays}),
  })
  steps.push(`Created subscription ${sub.id} for customer ${sub.customer}`)
  return sub
}

async function confirmed(deps: RunDeps, o: Overrides, steps: string[], defaults?: {trial_days?: number}): Promise<Subscription> {
  const sub = await newSubscription(deps, o, steps, defaults)
  const done = await deps.admin.subscriptions.confirm(sub.id, {outcome: 'paid'})
  steps.push(`Confirmed its client secret: ${done.subscription.status}${done.invoice ? `, invoice ${done.invoice.id} paid` : ''}`)
  return sub
}

const subscriptionCreated: Recipe = {overrides: subscriptionOverrides, fixture: 'recurring', run: async (deps, o, steps) => void (await newSubscription(deps, o, steps))}
const subscriptionConfirmed: Recipe = {overrides: subscriptionOverrides, fixture: 'recurring', run: async (deps, o, steps) => void (await confirmed(deps, o, steps))}

const subscriptionDeleted: Recipe = {
  fixture: 'recurring',
  overrides: subscriptionOverrides,
  async run(deps, o, steps) {
    const sub = await confirmed(deps, o, steps)
    await deps.merchantApi.subscriptions.cancel(sub.id, {at_period_end: false})
    steps.push(`Canceled subscription ${sub.id} now`)
  },
}

const invoiceFailed: Recipe = {
  fixture: 'recurring',
  overrides: subscriptionOverrides.omit({trial_days: true}),
  async run(deps, o, steps) {
    const sub = await newSubscription(deps, o, steps)
    await deps.admin.subscriptions.confirm(sub.id, {outcome: 'declined'})
    steps.push(`Declined the first payment of subscription ${sub.id}`)
  },
}

const trialWillEnd: Recipe = {
  fixture: 'recurring',
  overrides: subscriptionOverrides.extend({trial_days: z.number().int().min(1).max(3)}).partial(),
  // A trial of at most 3 days is reminded of when its card is stored: no clock move needed.
  run: async (deps, o, steps) => void (await confirmed(deps, o, steps, {trial_days: 3})),
}

const fraudCreated: Recipe = {
  overrides: fraudWarningTestCreate.pick({amount: true, currency: true, fraud_type: true}).partial(),
  async run(deps, o, steps) {
    const w = await deps.merchantApi.fraudWarnings.testCreate(o)
    steps.push(`Created fraud warning ${w.id}`)
  },
}

const fraudUpdated: Recipe = {
  fixture: 'one_time',
  overrides: fraudWarningTestCreate.pick({fraud_type: true}).partial(),
  async run(deps, o, steps) {
    const done = await paidSale(deps, {}, steps)
    const w = await deps.merchantApi.fraudWarnings.testCreate({...o, charge_id: done.payment.id})
    steps.push(`Created fraud warning ${w.id} on payment ${done.payment.id}`)
    await deps.admin.payments.refund(done.payment.id)
    steps.push(`Refunded payment ${done.payment.id} in full: the warning is refunded`)
  },
}

/** Subscription links live in live installations only: a short-lived live installation creates one. */
const subscriptionLink = (then: 'created' | 'updated' | 'archived'): Recipe => ({
  overrides: z.strictObject({name: z.string().min(1).max(120), amount, currency, interval: z.enum(['day', 'week', 'month', 'year'])}).partial(),
  async run(deps, o, steps) {
    const {AppClient} = await import('@payapp/sdk/client')
    const inst = await deps.admin.installations.create({merchant: deps.merchant, env: 'live', scopes: ['subscriptions:read', 'subscriptions:write'], app_name: 'payapp trigger'})
    steps.push(`Installed a temporary live app ${inst.id} (subscription links are live only)`)
    try {
      const app = new AppClient({baseUrl: deps.baseUrl, token: inst.token, maxRetries: 0})
      const link = await app.subscriptionLinks.create({
        amount: (o.amount as number | undefined) ?? 900,
        currency: (o.currency as string | undefined) ?? 'eur',
        interval: (o.interval as 'month' | undefined) ?? 'month',
        ...(o.name === undefined ? {} : {name: o.name as string}),
      })
      steps.push(`Created subscription link ${link.id}`)
      if (then === 'updated') await app.subscriptionLinks.update(link.id, {description: 'Updated by payapp trigger'})
      if (then === 'archived') await app.subscriptionLinks.archive(link.id)
      if (then !== 'created') steps.push(`${then === 'updated' ? 'Updated' : 'Archived'} subscription link ${link.id}`)
    } finally {
      await deps.admin.installations.revoke(inst.id)
      steps.push(`Revoked the temporary installation ${inst.id}`)
    }
  },
})

/** Every event type the gateway emits (the event table, packages/sdk/src/events.ts), and what causes it: a new type without a recipe does not compile. */
export const RECIPES = {
  'checkout.session.completed': sale,
  'checkout.session.expired': expired,
  'checkout.session.updated': sessionUpdated,
  'payment.succeeded': sale,
  'payment.failed': declined,
  'payment.processing': processing,
  'payment_intent.payment_failed': declined,
  'store.order.created': sale,
  'store.order.updated': orderUpdated,
  'refund.created': refunded,
  'charge.refunded': refunded,
  'payment.refunded': refunded,
  'charge.dispute.created': disputed,
  'payment.disputed': disputed,
  'product.created': productCreated,
  'product.updated': productUpdated,
  'price.created': productCreated,
  'price.updated': priceUpdated,
  'payout.created': payout('pending'),
  'payout.paid': payout('paid'),
  'payout.failed': payout('failed'),
  'customer.created': subscriptionCreated,
  'subscription.created': subscriptionCreated,
  'subscription.updated': subscriptionConfirmed,
  'subscription.deleted': subscriptionDeleted,
  'customer.subscription.trial_will_end': trialWillEnd,
  'invoice.created': subscriptionConfirmed,
  'invoice.paid': subscriptionConfirmed,
  'invoice.payment_succeeded': subscriptionConfirmed,
  'invoice.payment_failed': invoiceFailed,
  'fraud_warning.created': fraudCreated,
  'fraud_warning.updated': fraudUpdated,
  'subscription_link.created': subscriptionLink('created'),
  'subscription_link.updated': subscriptionLink('updated'),
  'subscription_link.archived': subscriptionLink('archived'),
} as const satisfies Record<EventType, Recipe>

export type TriggerEvent = keyof typeof RECIPES
export const TRIGGER_EVENTS = Object.keys(RECIPES) as TriggerEvent[]

/** A value as typed: numbers and booleans as such, JSON objects and arrays parsed, anything else text. */
function typed(value: string): unknown {
  if (/^-?\d+(\.\d+)?$/.test(value) || value === 'true' || value === 'false' || value === 'null' || /^[[{]/.test(value)) {
    try {
      return JSON.parse(value)
    } catch {
      return value
    }
  }
  return value
}

/**
 * `field=value` pairs (`metadata.key=value` for one map entry) as the recipe's validated overrides;
 * a usage error naming the field for anything the recipe does not take or that fails its rule.
 */
export function parseOverrides(event: TriggerEvent, pairs: readonly string[]): Overrides {
  const recipe: Recipe = RECIPES[event]
  const raw: Record<string, unknown> = {}
  for (const pair of pairs) {
    const at = pair.indexOf('=')
    if (at <= 0) throw usageError(`--override takes field=value, got "${pair}"`, '--override')
    const [field, value] = [pair.slice(0, at), pair.slice(at + 1)]
    const dot = field.indexOf('.')
    if (dot > 0) {
      const [parent, key] = [field.slice(0, dot), field.slice(dot + 1)]
      const map = (raw[parent] ??= {}) as Record<string, unknown>
      if (typeof map !== 'object' || map === null) throw usageError(`--override ${field}: ${parent} is set twice`, '--override')
      map[key] = value
    } else raw[field] = typed(value)
  }
  const allowed = Object.keys(recipe.overrides.shape)
  const parsed = recipe.overrides.strict().safeParse(raw)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const field = issue.code === 'unrecognized_keys' ? issue.keys[0] : issue.path.join('.')
    const why = issue.code === 'unrecognized_keys' ? `not a field "trigger ${event}" sets` : issue.message
    throw usageError(`--override ${field}: ${why} (it takes: ${allowed.length ? allowed.join(', ') : 'no overrides'})`, '--override')
  }
  // Only what was sent: schema defaults belong to the platform, not to the trigger.
  return Object.fromEntries(Object.keys(raw).map((k) => [k, (parsed.data as Overrides)[k]]))
}

async function newestEventId(deps: TriggerDeps, env: 'live' | 'test'): Promise<string | undefined> {
  return (await deps.admin.events.list({merchant: deps.merchant, env, limit: 1})).data[0]?.id
}

export async function trigger(event: TriggerEvent, overrides: Overrides, triggerDeps: TriggerDeps): Promise<TriggerResult> {
  const steps: string[] = []
  const recipe: Recipe = RECIPES[event]
  const deps: RunDeps = {...triggerDeps, fixtures: new Map()}
  if (recipe.fixture) await fixtureProduct(deps, steps, recipe.fixture)
  // Subscription links exist in live only, so their events are in the live log.
  const env = event.startsWith('subscription_link.') ? 'live' : deps.env
  const before = await newestEventId(deps, env)
  await recipe.run(deps, overrides, steps)
  const recent = (await deps.admin.events.list({merchant: deps.merchant, env, limit: 1000})).data
  const cut = before ? recent.findIndex((e) => e.id === before) : -1
  const events = (cut >= 0 ? recent.slice(0, cut) : recent).reverse()
  if (!events.some((e) => e.type === event)) throw new Error(`The steps ran but the gateway emitted no ${event}; events seen: ${events.map((e) => e.type).join(', ') || 'none'}`)
  return {object: 'trigger', event, steps, events}
}
