/**
 * App API reads of money movements: payments, refunds and disputes. The token's environment decides
 * the shape: live answers with charges (`ch_` ids), the sandbox with payment and refund rows.
 */
import {LIVE_PAYMENT_STATUSES} from '../../sdk/schemas/commerce.js'
import {rawList, Reply, type Handlers} from '../app.js'
import {disputeView, paymentView, sql, type DisputeDoc} from '../checkout.js'
import type {Scope} from '../db.js'
import {invalid, notFound} from '../errors.js'
import type {PaymentDoc} from '../models.js'
import type {Platform} from '../platform.js'

const LIVE_STATUSES: readonly string[] = LIVE_PAYMENT_STATUSES

/** A page of documents of a kind, newest first, narrowed by an extra SQL condition on the document. */
function pageWhere<T>(gw: Platform, scope: Scope, kind: string, where: string, args: unknown[], limit: number, offset: number) {
  const rows = sql(gw, `SELECT data FROM objects WHERE merchant = ? AND env = ? AND kind = ? AND ${where} ORDER BY seq DESC LIMIT ? OFFSET ?`).all(
    scope.merchant,
    scope.env,
    kind,
    ...args,
    limit + 1,
    offset,
  ) as {data: string}[]
  const hasMore = rows.length > limit
  return {docs: rows.slice(0, limit).map((r) => JSON.parse(r.data) as T), hasMore}
}

const listOf = (data: unknown[], hasMore: boolean) => new Reply(200, {object: 'list', has_more: hasMore, data})

export const paymentHandlers: Partial<Handlers> = {
  'payments.list'({gw, scope, query}) {
    // Only live filters by status (spec); the sandbox ignores the parameter.
    // The endpoint table declares this query (paymentsListQuery); the runner has parsed it.
    const status = scope.env === 'live' ? (query as {status?: string}).status : undefined
    if (status !== undefined && !LIVE_STATUSES.includes(status)) {
      throw invalid('parameter_invalid_enum', `status must be one of ${LIVE_STATUSES.join(', ')}`, 'status')
    }
    const page =
      status === undefined
        ? pageWhere<PaymentDoc>(gw, scope, 'payment', '1', [], query.limit, query.offset)
        : // The live view shows a processing payment as pending: the filter matches what the list shows.
          pageWhere<PaymentDoc>(gw, scope, 'payment', `json_extract(data, '$.status') IN (?, ?)`, [status, status === 'pending' ? 'processing' : status], query.limit, query.offset)
    return listOf(page.docs.map(paymentView), page.hasMore)
  },

  'payments.retrieve'({gw, scope, params}) {
    // A live payment is stored under its charge id and a sandbox one under its row id: the id the route takes.
    const payment = gw.storage.get<PaymentDoc>('payment', scope, params.id)
    if (!payment) throw notFound('payment', params.id)
    return paymentView(payment)
  },

  'refunds.list'({gw, scope, query}) {
    if (scope.env === 'test') {
      const page = gw.storage.pageRaw('refund', scope, query.limit, query.offset)
      return rawList(page.rows, page.hasMore)
    }
    // Live lists the refunded charges themselves, each with its running amount_refunded.
    const page = pageWhere<PaymentDoc>(gw, scope, 'payment', `json_extract(data, '$.amount_refunded') > 0`, [], query.limit, query.offset)
    return listOf(page.docs.map(paymentView), page.hasMore)
  },

  'disputes.list'({gw, scope, query}) {
    const page = pageWhere<DisputeDoc>(gw, scope, 'dispute', '1', [], query.limit, query.offset)
    const now = gw.now()
    return listOf(
      page.docs.map((d) => disputeView(d, now)),
      page.hasMore,
    )
  },
}
