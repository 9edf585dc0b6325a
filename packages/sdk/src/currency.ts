/**
 * The one currency table: how many minor units a currency has (ISO 4217) and how amounts read. The
 * gateway's fees, the CLI's tables and the hosted checkout page all format through it, so `2500 huf`
 * means the same everywhere. Amounts are integers in minor units; nothing here uses floating point
 * except `displayMoney`, which only renders.
 */

/** ISO 4217 exponents that differ from 2. Kept static: Intl's data rounds some (HUF, IDR) to 0 for display. */
const MINOR_DIGITS: Record<string, number> = {
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0, VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  CLF: 4, UYW: 4,
}

/** Digits after the decimal point for a currency (ISO 4217 minor unit); 2 for any code not listed. */
export function minorDigits(currency: string): number {
  return MINOR_DIGITS[currency.toUpperCase()] ?? 2
}

/** Minor units → major units, e.g. for converting at a rate; not for display (see `money`). */
export const toMajor = (amountMinor: number, currency: string): number => amountMinor / 10 ** minorDigits(currency)

/** Major units → minor units, rounded to the nearest whole minor unit. */
export const toMinor = (amountMajor: number, currency: string): number => Math.round(amountMajor * 10 ** minorDigits(currency))

/** `1000, 'eur'` → `10.00 EUR`; `500, 'jpy'` → `500 JPY`; `1234, 'bhd'` → `1.234 BHD`. Exact: no floating point. */
export function money(amountMinor: number | bigint, currency: string): string {
  const digits = minorDigits(currency)
  const n = BigInt(amountMinor)
  const negative = n < 0n
  const abs = (negative ? -n : n).toString().padStart(digits + 1, '0')
  const whole = abs.slice(0, abs.length - digits).replace(/\B(?=(\d{3})+(?!\d))/g, ',')
  const fraction = digits > 0 ? '.' + abs.slice(-digits) : ''
  return `${negative ? '-' : ''}${whole}${fraction} ${currency.toUpperCase()}`
}

/** `2500, 'eur'` → `€25.00`: the symbol form a buyer reads on a page, with the table's digits. */
export function displayMoney(amountMinor: number, currency: string): string {
  const digits = minorDigits(currency)
  try {
    return new Intl.NumberFormat('en', {style: 'currency', currency: currency.toUpperCase(), minimumFractionDigits: digits, maximumFractionDigits: digits}).format(
      toMajor(amountMinor, currency),
    )
  } catch {
    return money(amountMinor, currency)
  }
}
