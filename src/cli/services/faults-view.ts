/** One line per fault-injection rule, for `gateway faults add|list`. */
import type {AdminFault} from '@payapp/sdk/admin'

export function faultLine(f: AdminFault): string {
  const how = [f.probability < 1 ? `p=${f.probability}${f.seed !== null ? ` seed ${f.seed}` : ''}` : null, f.remaining !== null ? `${f.remaining} left` : null, `${f.hits} hit${f.hits === 1 ? '' : 's'}`]
    .filter(Boolean)
    .join(', ')
  if (f.scope === 'webhooks') {
    const what = [
      f.duplicate ? 'duplicate' : null,
      f.delay_seconds !== null ? `delay ${f.delay_seconds} s` : null,
      f.reorder ? 'reorder' : null,
      f.fail_attempts !== null ? `fail ${f.fail_attempts} attempt${f.fail_attempts === 1 ? '' : 's'}` : null,
    ]
      .filter(Boolean)
      .join(', ')
    const where = [`${f.event_type ?? '*'} webhooks`, f.endpoint ? `to ${f.endpoint}` : null, f.merchant ? `of ${f.merchant}` : null].filter(Boolean).join(' ')
    return `${f.id}  ${what} on ${where} (${how})`
  }
  const what = [f.status !== null ? `${f.status}${f.error ? ` ${f.error.type}/${f.error.code}` : ''}` : null, f.latency_ms ? `+${f.latency_ms} ms` : null]
    .filter(Boolean)
    .join(' ')
  const where = [f.route ?? 'every API route', f.merchant ? `of ${f.merchant}` : null].filter(Boolean).join(' ')
  return `${f.id}  ${what} on ${where} (${how})`
}
