/**
 * The platform's refusals name HTTP routes and body fields; a CLI user needs the command or flag that
 * fixes them. One table, by error code, used by the base command's error handler.
 */
import {PayappError} from '@payapp/sdk/errors'

const HINTS: Record<string, string> = {
  evidence_required: 'attach it first: payapp orders evidence add ORDER_ID --tracking-number … --carrier … (or --file, --note)',
  livemode_required: 'live installations only: pass --env live with a live token',
  livemode_forbidden: 'sandbox only: pass --env test with a test token',
  stock_qty_required: 'pass --stock-qty with --track-inventory',
  variants_exist: 'delete the variants first: payapp products variants list PRODUCT_ID, then payapp products variants delete VARIANT_ID',
  value_in_use: 'delete the variants that use it first: payapp products variants delete VARIANT_ID',
  price_immutable: 'create a new price (payapp products prices create) and archive this one (--no-active)',
  parameter_immutable: 'create a new link (payapp subscription-links create) and archive this one (payapp subscription-links archive)',
  idempotency_key_reused: 'this --idempotency-key was used with another body: use a new key for a different request',
}

/** The CLI way out of an API error, if the table knows one. */
export function errorHint(err: unknown): string | undefined {
  if (!(err instanceof PayappError) || !err.code) return undefined
  return HINTS[err.code]
}
