/**
 * The one secret-masking rule for everything payapp prints or serves: tokens, secret keys, admin keys
 * and webhook signing secrets are shown by their kind and last characters, never in full.
 */

/**
 * `app_test_…WXYZ`: the prefix up to the second underscore plus the last 4 characters. The tail is
 * shown only when the rest is long enough that 4 characters reveal little.
 */
export function mask(secret: string | undefined | null): string {
  if (!secret) return ''
  const prefix = /^(?:[A-Za-z]{1,10}_){1,2}/.exec(secret)?.[0] ?? ''
  const rest = secret.slice(prefix.length)
  return rest.length >= 12 ? `${prefix}…${rest.slice(-4)}` : `${prefix}…`
}
