/**
 * The gateway's admin API (`/_admin`, `Authorization: Bearer <admin_key>`): a fixed contract that users'
 * test suites script against to set up merchants, credentials, the test clock and simulated buyers.
 */
import {z} from 'zod'

import {amount, currency, environment, scope} from './common.js'

export const adminMerchantCreate = z.strictObject({
  company: z.string().trim().min(1).max(200).optional(),
  country: z.string().regex(/^[A-Za-z]{2}$/).optional(),
  vat_number: z.string().max(40).nullable().optional(),
  store: z
    .strictObject({
      slug: z.string().regex(/^[a-z0-9][a-z0-9-]{1,62}$/).optional(),
      display_name: z.string().trim().min(1).max(120).optional(),
      status: z.enum(['draft', 'live', 'paused']).optional(),
      approval: z.enum(['pending', 'approved', 'rejected']).optional(),
    })
    .optional(),
})
export type AdminMerchantCreate = z.input<typeof adminMerchantCreate>

export const adminInstallationCreate = z.strictObject({
  merchant: z.string().min(1),
  env: environment,
  scopes: z.array(scope).default([]),
  app_name: z.string().max(120).optional(),
})
export type AdminInstallationCreate = z.input<typeof adminInstallationCreate>

export const adminKeyCreate = z.strictObject({
  merchant: z.string().min(1),
  mode: environment,
  scopes: z.array(scope).default([]),
})
export type AdminKeyCreate = z.input<typeof adminKeyCreate>

export const adminClockAdvance = z.strictObject({
  advance_seconds: z.number().int().min(0).max(10 * 365 * 86400),
})

export const adminSandboxReset = z.strictObject({merchant: z.string().min(1)})

export const adminCheckoutComplete = z.strictObject({
  outcome: z.enum(['paid', 'declined']).default('paid'),
  customer_name: z.string().trim().min(2).max(120).optional(),
  customer_email: z.email().optional(),
})

export const adminRefundCreate = z.strictObject({
  amount: z.number().int().min(1).optional().describe('Minor units; default: the rest of the payment'),
  reason: z.string().max(200).optional(),
})

export const adminDisputeCreate = z.strictObject({
  reason: z.string().max(100).default('fraudulent'),
  evidence_due_in_days: z.number().int().min(-365).max(365).default(7),
})

export const adminPayoutCreate = z.strictObject({
  merchant: z.string().min(1),
  env: environment,
  amount: z.number().int().min(1),
  currency,
  status: z.enum(['pending', 'in_transit', 'paid', 'failed']).default('paid'),
})

export const adminInvoiceCreate = z.strictObject({
  merchant: z.string().min(1),
  env: environment,
  subscription: z.string().optional(),
  amount: amount.optional(),
  currency: currency.optional(),
  status: z.enum(['open', 'paid', 'void', 'uncollectible']).default('paid'),
})

export const adminSubscriptionCreate = z.strictObject({
  merchant: z.string().min(1),
  env: environment,
  price_id: z.string().optional(),
  amount: amount.optional(),
  currency: currency.optional(),
  interval: z.enum(['day', 'week', 'month', 'year']).default('month'),
  quantity: z.number().int().min(1).default(1),
  customer_name: z.string().trim().min(2).max(120).default('Test Customer'),
  customer_email: z.email().default('customer@example.com'),
  trial_days: z.number().int().min(1).max(730).optional(),
  status: z.enum(['incomplete', 'trialing', 'active', 'past_due', 'unpaid', 'canceled']).default('active'),
})

export const adminSubscriptionCancel = z.strictObject({
  at_period_end: z.boolean().default(true),
})

export const adminInstallation = z.looseObject({
  id: z.string(),
  object: z.literal('installation'),
  token: z.string(),
  merchant: z.string(),
  store: z.string(),
  env: environment,
  scopes: z.array(z.string()),
})
export type AdminInstallation = z.infer<typeof adminInstallation>

/** An event type, `*` (every type), or a prefix pattern such as `checkout.session.*`. */
export const webhookEventPattern = z.string().regex(/^(\*|[a-z0-9_]+(\.[a-z0-9_]+)*(\.\*)?)$/, 'an event type, a prefix pattern ending in .*, or *')

export const adminWebhookEndpointCreate = z.strictObject({
  merchant: z.string().min(1),
  env: environment,
  url: z.url({protocol: /^https?$/}),
  events: z.array(webhookEventPattern).min(1).default(['*']),
  secret: z.string().min(8).max(200).optional(),
})
export type AdminWebhookEndpointCreate = z.input<typeof adminWebhookEndpointCreate>
