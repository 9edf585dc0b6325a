import {writeCommand} from '../../cli/command-factory.js'
import {sessionDetails} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

/** The platform's rules for a session's contents (spec: Checkout session request), so a missing one fails before any request. */
function sessionNeeds(body: Record<string, unknown>): string[] {
  if (body.mode === 'subscription') return body.line_items === undefined ? ['line-items'] : []
  if (body.line_items !== undefined) return []
  // A raw-amount payment.
  const needs: [string, string][] = [['amount', 'amount'], ['currency', 'currency'], ['customer_name', 'customer-name'], ['customer_email', 'customer-email']]
  return needs.filter(([field]) => body[field] === undefined || body[field] === '').map(([, flag]) => flag)
}

export default writeCommand({
  endpoint: 'checkoutSessions.create',
  summary: endpoints['checkoutSessions.create'].summary + ' (merchant API: needs the secret key).',
  description:
    'Uses the profile\'s secret key ("payapp login --secret-key …") or PAYAPP_SECRET_KEY. A raw amount needs --amount, --currency, --customer-name and --customer-email; line items (--data or --line-items as JSON) may name a variant, whose price decides and whose stock is held for 24 hours; subscription mode needs --line-items.',
  examples: [
    '<%= config.bin %> sessions create --amount 1999 --currency eur --customer-name "Ada Buyer" --customer-email ada@example.com',
    '<%= config.bin %> sessions create --data \'{"line_items":[{"variant":"3f1c6a2e-8b4d-4f0a-9c7e-2d5b1a6e9f30","quantity":2}]}\' --json',
    '<%= config.bin %> sessions create --amount 1999 --currency eur --customer-name "Ada Buyer" --customer-email ada@example.com --idempotency-key order-17',
  ],
  requires: sessionNeeds,
  render: (s) => sessionDetails(s),
})
