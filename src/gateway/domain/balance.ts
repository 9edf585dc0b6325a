/**
 * The merchant's money (spec: App API balance and analytics): computed from the stored payments and
 * payouts of the token's merchant and environment, per currency. Rules:
 * - captured payments (succeeded, refunded in part or whole, disputed) count; processing, pending and
 *   failed ones never reached the merchant;
 * - a payment stays pending for `SETTLEMENT_SECONDS`, then joins the available balance, net of its
 *   refunds and fee; a disputed payment's unrefunded amount is withheld while the dispute runs;
 * - payouts leave the available balance unless they failed.
 */
import type {AnalyticsSummary, Balance, Payout} from '@payapp/sdk/schemas/commerce'
import type {Tx} from './context.js'
import type {PaymentDoc, Scope} from '../storage/documents.js'

const DAY = 86_400
/** A payment counts as pending for this long before it joins the available balance (spec: not shown). */
export const SETTLEMENT_SECONDS = 2 * DAY

/** Payments whose money reached the merchant; processing, pending and failed ones never did. */
const CAPTURED = new Set<PaymentDoc['status']>(['succeeded', 'partially_refunded', 'refunded', 'disputed'])
/** Payouts whose amount has left the balance; a failed payout returns it. */
const PAID_OUT = new Set<Payout['status']>(['pending', 'in_transit', 'paid'])

/** What a captured payment leaves in the balance, in its own currency. */
function netOfPayment(p: PaymentDoc): number {
  const kept = p.status === 'disputed' ? 0 : p.amount - p.amount_refunded
  return kept - p.fee.service_fee_charge_currency
}

function add(sums: Map<string, number>, currency: string, amount: number) {
  sums.set(currency, (sums.get(currency) ?? 0) + amount)
}

export async function balance(tx: Tx, scope: Scope): Promise<Balance> {
  const settledBy = tx.now(scope) - SETTLEMENT_SECONDS
  const available = new Map<string, number>()
  const pending = new Map<string, number>()
  for (const p of await tx.all('payment', scope)) {
    if (CAPTURED.has(p.status)) add(p.created > settledBy ? pending : available, p.currency, netOfPayment(p))
  }
  for (const payout of await tx.all('payout', scope)) {
    if (PAID_OUT.has(payout.status)) add(available, payout.currency, -payout.amount)
  }
  const currencies = [...new Set([...available.keys(), ...pending.keys()])].sort()
  const amounts = (sums: Map<string, number>) => currencies.map((currency) => ({amount: sums.get(currency) ?? 0, currency}))
  return {object: 'balance', livemode: scope.env === 'live', available: amounts(available), pending: amounts(pending)}
}

/** Gross, refunded and net volume of the captured payments of the last `days` days, per currency. */
export async function analyticsSummary(tx: Tx, scope: Scope, days: number): Promise<AnalyticsSummary> {
  const until = tx.now(scope)
  const since = until - days * DAY
  const totals = new Map<string, {gross: number; refunded: number; disputed: number; payments: number; refunds: number}>()
  for (const p of await tx.all('payment', scope)) {
    if (!CAPTURED.has(p.status) || p.created < since || p.created > until) continue
    let t = totals.get(p.currency)
    if (!t) totals.set(p.currency, (t = {gross: 0, refunded: 0, disputed: 0, payments: 0, refunds: 0}))
    t.gross += p.amount
    t.payments += 1
    if (p.amount_refunded > 0) {
      t.refunded += p.amount_refunded
      t.refunds += 1
    }
    if (p.status === 'disputed') t.disputed += p.amount - p.amount_refunded
  }
  const currencies = [...totals.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([currency, t]) => ({
      currency,
      gross_volume: t.gross,
      refunded_volume: t.refunded,
      net_volume: t.gross - t.refunded - t.disputed,
      payment_count: t.payments,
      refund_count: t.refunds,
      average_payment: Math.round(t.gross / t.payments),
    }))
  return {object: 'analytics_summary', livemode: scope.env === 'live', days, since, until, currencies}
}
