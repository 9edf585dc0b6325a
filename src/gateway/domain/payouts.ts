/**
 * Payouts (spec: payouts are the platform's, not reachable by apps): created by the admin API and the
 * seed. A payout not yet settled is expected on the bank account `PAYOUT_TRANSIT_SECONDS` after it is
 * created; `payout.created`, then `payout.paid` / `payout.failed` once settled.
 */
import type {Payout} from '@payapp/sdk/schemas/commerce'
import {newId} from '../ids.js'
import type {Tx} from './context.js'
import type {PayoutDoc, Scope} from '../storage/documents.js'
import {stamp} from './shared.js'

const DAY = 86_400
/** Spec: not shown. */
const PAYOUT_TRANSIT_SECONDS = 2 * DAY

export async function createPayout(tx: Tx, scope: Scope, input: {amount: number; currency: string; status: Payout['status']}, created = tx.now(scope)): Promise<PayoutDoc> {
  const settled = input.status === 'paid' || input.status === 'failed'
  const payout: PayoutDoc = {
    ...stamp(tx, scope, 'payout', newId('po', 24), created),
    amount: input.amount,
    currency: input.currency,
    status: input.status,
    arrival_date: settled ? created : created + PAYOUT_TRANSIT_SECONDS,
  }
  await tx.insert('payout', scope, payout, {created})
  await tx.emit(scope, 'payout.created', payout)
  if (settled) await tx.emit(scope, input.status === 'paid' ? 'payout.paid' : 'payout.failed', payout)
  return payout
}
