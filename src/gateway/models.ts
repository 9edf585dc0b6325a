/**
 * Stored documents shared by several route modules. Each is the internal record; routes serve views
 * of it (the App API's live and sandbox shapes of a payment differ, the record is one).
 */

/** A payment attempt or a completed payment (kind `payment`). */
export interface PaymentDoc {
  /** What `/payments/{id}` takes: the charge id (`ch_`) in live, the row id (`py_`) in the sandbox. */
  id: string
  object: 'payment'
  livemode: boolean
  status: 'succeeded' | 'processing' | 'pending' | 'failed' | 'refunded' | 'partially_refunded' | 'disputed'
  amount: number
  amount_refunded: number
  currency: string
  fee: {service_fee_eur: number; service_fee_charge_currency: number; psp_fee_eur: number; currency: string}
  session_id: string | null
  invoice_id: string | null
  order: string | null
  payment_intent: string
  charge: string
  customer: {id: string | null; name: string | null; email: string | null}
  card: {brand: string; last4: string; country: string; funding: string}
  payment_method: string
  description: string | null
  reference: string | null
  metadata: Record<string, string>
  source: 'store' | 'api' | 'invoice' | 'payment_link'
  failure_code: string | null
  failure_message: string | null
  created: number
  succeeded_at: number | null
}

/** A refund of a payment (kind `refund`). */
export interface RefundDoc {
  id: string
  object: 'refund'
  livemode: boolean
  payment: string
  amount: number
  currency: string
  status: 'succeeded' | 'pending' | 'failed'
  reason: string | null
  created: number
}
