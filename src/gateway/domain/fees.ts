/**
 * The plan fee (spec: fees are computed in EUR on the merchant's plan; rates not shown): 1.4% of the
 * amount plus 0.25 EUR, computed in EUR and charged in the payment's currency. Minor digits come from
 * the one currency table; the gateway has no FX feed, so EUR rates are fixed references.
 */
import {toMajor, toMinor} from '@payapp/sdk/currency'
import type {PaymentDoc} from '../storage/documents.js'

/** EUR per major unit of each supported currency. */
const EUR_RATE: Record<string, number> = {
  aud: 0.61, bgn: 0.511, brl: 0.17, cad: 0.68, chf: 1.05, cny: 0.13, czk: 0.04, dkk: 0.134, eur: 1, gbp: 1.17, hkd: 0.118, huf: 0.0025,
  idr: 0.000058, ils: 0.25, inr: 0.011, isk: 0.0067, jpy: 0.0062, krw: 0.00068, mxn: 0.05, myr: 0.2, nok: 0.086, nzd: 0.56, php: 0.016,
  pln: 0.23, ron: 0.2, sek: 0.087, sgd: 0.69, thb: 0.026, try: 0.028, usd: 0.92, zar: 0.05, bhd: 2.45, kwd: 3.0,
}

export const FEE_PERCENT = 1.4
export const FEE_FIXED_EUR_CENTS = 25

export function computeFee(amount: number, currency: string): PaymentDoc['fee'] {
  const eurPerUnit = EUR_RATE[currency] ?? 1
  const eurCents = toMajor(amount, currency) * eurPerUnit * 100
  const serviceFeeEur = Math.round((eurCents * FEE_PERCENT) / 100) + FEE_FIXED_EUR_CENTS
  const inCharge = toMinor(serviceFeeEur / 100 / eurPerUnit, currency)
  return {service_fee_eur: serviceFeeEur, service_fee_charge_currency: inCharge, psp_fee_eur: 0, currency}
}

/** What a failed payment costs: nothing. */
export const noFee = (currency: string): PaymentDoc['fee'] => ({service_fee_eur: 0, service_fee_charge_currency: 0, psp_fee_eur: 0, currency})
