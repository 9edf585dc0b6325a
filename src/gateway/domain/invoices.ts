/**
 * Invoices (spec: the App API lists them in live only): issued by the platform for each subscription
 * period in both environments (sandbox webhooks need `invoice.*` too), and by hand through the admin API
 * (live only). The App API's sandbox lists none rather than refusing the token; an invoice becomes its
 * subscription's latest; a paid one also emits `invoice.paid` and `invoice.payment_succeeded`.
 */
import type {z} from 'zod'

import type * as admin from '@payapp/sdk/schemas/admin'
import type {Invoice} from '@payapp/sdk/schemas/commerce'
import {invalid, notFound} from '../errors.js'
import {newId} from '../ids.js'
import type {Tx} from './context.js'
import type {InvoiceDoc, Scope, SubscriptionDoc} from '../storage/documents.js'
import type {RawPage} from '../storage/storage.js'
import {stamp} from './shared.js'

export interface InvoiceInput {
  subscription: SubscriptionDoc | null
  customer: string | null
  amount: number
  currency: string
  status: Invoice['status']
  period_start: number
  period_end: number
  billing_reason: NonNullable<Invoice['billing_reason']>
}

export function requireLive(scope: Scope): Scope {
  if (scope.env !== 'live') throw invalid('livemode_required', 'Invoices are issued by hand in live only; sandbox invoices come from subscriptions', 'env')
  return scope
}

/** A page of invoices; the App API's sandbox sees none (spec), the merchant API its own environment's (`withSandbox`). */
export async function listInvoices(tx: Tx, scope: Scope, page: {limit: number; offset: number}, withSandbox = false): Promise<RawPage> {
  return scope.env === 'live' || withSandbox ? await tx.pageRaw('invoice', scope, page) : {rows: [], ids: [], hasMore: false}
}

export async function requireInvoice(tx: Tx, scope: Scope, id: string, withSandbox = false): Promise<InvoiceDoc> {
  const invoice = scope.env === 'live' || withSandbox ? await tx.get('invoice', scope, id) : undefined
  if (!invoice) throw notFound('invoice', id)
  return invoice
}

/** Issues an invoice and makes it its subscription's latest; `invoice.created` (and `invoice.paid` when born paid). */
export async function createInvoice(tx: Tx, scope: Scope, input: InvoiceInput): Promise<InvoiceDoc> {
  const paid = input.status === 'paid'
  const invoice: InvoiceDoc = {
    ...stamp(tx, scope, 'invoice', newId('in', 24)),
    subscription: input.subscription?.id ?? null,
    customer: input.customer,
    amount_due: input.amount,
    amount_paid: paid ? input.amount : 0,
    currency: input.currency,
    status: input.status,
    period_start: input.period_start,
    period_end: input.period_end,
    billing_reason: input.billing_reason,
    attempt_count: 0,
    next_payment_attempt: null,
    dunning_stage: null,
    payment: null,
  }
  await tx.insert('invoice', scope, invoice, {parent: invoice.subscription, created: invoice.created})
  if (input.subscription) await tx.save({...input.subscription, latest_invoice: invoice.id})
  await tx.emit(scope, 'invoice.created', invoice)
  if (paid) await emitPaid(tx, scope, invoice)
  return invoice
}

export async function emitPaid(tx: Tx, scope: Scope, invoice: InvoiceDoc): Promise<void> {
  await tx.emit(scope, 'invoice.paid', invoice)
  await tx.emit(scope, 'invoice.payment_succeeded', invoice)
}

/** The admin API's invoice: for a subscription (its amount, currency and period) or a bare amount. */
export async function issueInvoice(tx: Tx, scope: Scope, body: z.output<typeof admin.adminInvoiceCreate>): Promise<InvoiceDoc> {
  requireLive(scope)
  const sub = body.subscription === undefined ? null : (await tx.get('subscription', scope, body.subscription) ?? null)
  if (body.subscription !== undefined && !sub) throw notFound('subscription', body.subscription, 'subscription_not_found', 'subscription')
  if (sub && body.currency !== undefined && body.currency !== sub.currency) throw invalid('currency_mismatch', 'currency differs from the subscription', 'currency')
  const amount = body.amount ?? sub?.amount
  if (amount === undefined) throw invalid('parameter_missing', 'Missing required parameter: amount (or send subscription)', 'amount')
  const now = tx.now(scope)
  return createInvoice(tx, scope, {
    subscription: sub,
    customer: sub?.customer ?? null,
    amount,
    currency: body.currency ?? sub?.currency ?? 'eur',
    status: body.status,
    period_start: sub?.current_period_start ?? now,
    period_end: sub?.current_period_end ?? now,
    billing_reason: 'manual',
  })
}
