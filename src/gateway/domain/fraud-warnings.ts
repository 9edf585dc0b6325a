/**
 * Fraud warnings (spec: Fraud warning): an issuer's early notice that a charge may be fraudulent.
 *
 *   open ─ full refund of the charge recorded → refunded
 *   open | refunded ─ dispute recorded → disputed   (takes precedence over refunded)
 *
 * A partial refund alone changes nothing. `fraud_warning.updated` is emitted only when the stored
 * `status` or `actionable` changes, never for a timestamp alone. The refund and dispute paths call
 * `onChargeRefunded` / `onChargeDisputed`, whichever API recorded them. Nothing here knows about HTTP.
 */
import type {z} from 'zod'

import type {fraudWarningsListQuery} from '@payapp/sdk/schemas/billing'
import {invalid} from '../errors.js'
import {newId, newUuid} from '../ids.js'
import type {Tx} from './context.js'
import type {FraudWarningDoc, PaymentDoc, Scope} from '../storage/documents.js'
import {requireDoc, stamp} from './shared.js'

type FraudWarning = FraudWarningDoc
/** The test helper's defaults for a warning on no real charge (spec). */
const DEFAULT_AMOUNT = 2500
const DEFAULT_CURRENCY = 'usd'

/** A warning as stored: the public object, linked (as its parent) to the payment it names when there is one. */
export async function createFraudWarning(
  tx: Tx,
  scope: Scope,
  input: {amount?: number; currency?: string; fraud_type: FraudWarning['fraud_type']; charge_id?: string},
): Promise<FraudWarning> {
  const now = tx.now(scope)
  const named = input.charge_id === undefined ? undefined : await paymentByCharge(tx, scope, input.charge_id)
  // Its state decides the warning's, so it is read again under its lock: a refund or dispute of it in another unit
  // either commits first (the warning is stored refunded or disputed) or waits for this one (and then moves it).
  const payment = named && ((await tx.lock('payment', scope, named.id, 'exclusive')) ?? named)
  const warning: FraudWarning = {
    ...stamp(tx, scope, 'fraud_warning', newUuid(), now),
    charge_id: payment?.charge ?? input.charge_id ?? newId('ch', 24),
    payment_intent_id: payment?.payment_intent ?? newId('pi', 24),
    fraud_type: input.fraud_type,
    amount: input.amount ?? payment?.amount ?? DEFAULT_AMOUNT,
    currency: input.currency ?? payment?.currency ?? DEFAULT_CURRENCY,
    status: 'open',
    actionable: true,
    updated: now,
    resolved: null,
  }
  // A warning on a charge that was already refunded or disputed is stored in that state (spec: created may already be so).
  if (payment?.status === 'disputed') Object.assign(warning, {status: 'disputed', actionable: false, resolved: now})
  else if (payment?.status === 'refunded') Object.assign(warning, {status: 'refunded', actionable: false, resolved: now})
  await tx.insert('fraud_warning', scope, warning, {parent: payment?.id ?? null, created: now})
  await tx.emit(scope, 'fraud_warning.created', warning)
  return warning
}

/** A payment of the scope by its charge id (`ch_…`) or its own id. */
async function paymentByCharge(tx: Tx, scope: Scope, charge: string): Promise<PaymentDoc | undefined> {
  return await tx.get('payment', scope, charge) ?? (await tx.where('payment', scope, [{field: 'charge', eq: charge}]))[0]
}

/** Moves a warning; emits `fraud_warning.updated` only when status or actionable changed. */
async function move(tx: Tx, scope: Scope, warning: FraudWarning, status: FraudWarning['status']): Promise<void> {
  const actionable = status === 'open' ? warning.actionable : false
  if (warning.status === status && warning.actionable === actionable) return
  const now = tx.now(scope)
  const next: FraudWarning = {...warning, status, actionable, updated: now, resolved: status === 'open' ? null : (warning.resolved ?? now)}
  await tx.save(next)
  await tx.emit(scope, 'fraud_warning.updated', next)
}

async function warningsOf(tx: Tx, scope: Scope, payment: PaymentDoc): Promise<FraudWarning[]> {
  return await tx.all('fraud_warning', scope, payment.id)
}

/** A refund was recorded on `payment`: when it is now refunded in full, its open warnings are `refunded`. */
export async function onChargeRefunded(tx: Tx, scope: Scope, payment: PaymentDoc): Promise<void> {
  if (payment.amount_refunded < payment.amount) return
  for (const w of await warningsOf(tx, scope, payment)) if (w.status === 'open') await move(tx, scope, w, 'refunded')
}

/** A dispute was recorded on `payment`: its warnings are `disputed`, whatever their refund state. */
export async function onChargeDisputed(tx: Tx, scope: Scope, payment: PaymentDoc): Promise<void> {
  for (const w of await warningsOf(tx, scope, payment)) await move(tx, scope, w, 'disputed')
}

export const getFraudWarning = async (tx: Tx, scope: Scope, id: string) => requireDoc(tx, 'fraud_warning', scope, id, 'fraud warning')

/** Newest first, keyset-paginated on (created, id); every filter of the spec. */
export async function listFraudWarnings(tx: Tx, scope: Scope, query: z.output<typeof fraudWarningsListQuery> & {offset?: number}) {
  const all = await tx.all('fraud_warning', scope)
  const newestFirst = (a: FraudWarning, b: FraudWarning) => b.created - a.created || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)
  all.sort(newestFirst)
  let start = 0
  if (query.starting_after !== undefined) {
    const cursor = all.findIndex((w) => w.id === query.starting_after)
    if (cursor < 0) throw invalid('resource_missing', `No such fraud warning to start after: '${query.starting_after}'`, 'starting_after')
    start = cursor + 1
  }
  const actionable = query.actionable === undefined ? undefined : query.actionable === 'true'
  const matches = all
    .slice(start)
    .filter(
      (w) =>
        (query.status === undefined || w.status === query.status) &&
        (actionable === undefined || w.actionable === actionable) &&
        (query.created_gte === undefined || w.created >= Number(query.created_gte)) &&
        (query.created_lte === undefined || w.created <= Number(query.created_lte)),
    )
  // `offset` (the SDK's paging) skips within the filtered rows, after the cursor.
  const rest = matches.slice(query.offset ?? 0)
  return {object: 'list' as const, has_more: rest.length > query.limit, data: rest.slice(0, query.limit)}
}
