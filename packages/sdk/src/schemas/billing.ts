/**
 * Billing and risk on the merchant API: subscription requests, customers, and fraud warnings
 * (spec: Subscriptions, Fraud warnings). The subscription and invoice objects live in commerce.ts,
 * shared with the App API's reads.
 */
import * as z from 'zod'

import {metadata, openEnum, resource, timestamp, uuid} from './common.js'

// ---------------------------------------------------------------- customers

/** The merchant-side customer a subscription bills (spec: only the `cus_` prefix is shown). */
export const customer = resource('customer', {
  name: z.string().nullable(),
  email: z.string().nullable(),
  created: timestamp,
})
export type Customer = z.infer<typeof customer>

// ---------------------------------------------------------------- subscriptions

/** Body of `POST /v1/subscriptions`. */
export const subscriptionCreate = z.strictObject({
  price_id: z.string().min(1).describe('A recurring price of the merchant'),
  customer: z.string().regex(/^cus_/, 'must be a customer id (cus_…)').optional().describe('An existing customer; name and e-mail are taken from it'),
  customer_name: z.string().trim().min(2).max(120).optional().describe('Required unless customer has a name'),
  customer_email: z.email().optional().describe('Required unless customer has one'),
  quantity: z.number().int().min(1).max(10_000).default(1),
  trial_days: z.number().int().min(1).max(730).optional().describe("Days of trial; default: the price's trial_period_days"),
  metadata: metadata.optional(),
})
export type SubscriptionCreate = z.input<typeof subscriptionCreate>

/** Body of `POST /v1/subscriptions/{id}/cancel`. */
export const subscriptionCancel = z.strictObject({
  at_period_end: z.boolean().default(true).describe('Keep it running until current_period_end (default) or end it now'),
})
export type SubscriptionCancel = z.input<typeof subscriptionCancel>

export const subscriptionsListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  starting_after: z.string().optional(),
  status: z.string().optional(),
  customer: z.string().optional(),
})

/** What renewal charges do after confirmation; `fail` drives dunning. */
export const RENEWAL_OUTCOMES = ['succeed', 'fail'] as const

// ---------------------------------------------------------------- fraud warnings

export const FRAUD_TYPES = [
  'card_never_received',
  'fraudulent_card_application',
  'made_with_counterfeit_card',
  'made_with_lost_card',
  'made_with_stolen_card',
  'misc',
  'unauthorized_use_of_card',
] as const
export const FRAUD_WARNING_STATUSES = ['open', 'refunded', 'disputed'] as const

export const fraudWarning = resource('fraud_warning', {
  charge_id: z.string().nullable(),
  payment_intent_id: z.string().nullable(),
  fraud_type: openEnum(FRAUD_TYPES).nullable(),
  amount: z.number().nullable(),
  currency: z.string().nullable(),
  status: openEnum(FRAUD_WARNING_STATUSES),
  actionable: z.boolean(),
  created: timestamp,
  updated: timestamp,
  resolved: timestamp.nullable(),
})
export type FraudWarning = z.infer<typeof fraudWarning>

/** Query of `GET /v1/fraud_warnings`; `actionable` is the literal text `true` or `false`. */
export const fraudWarningsListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(25),
  starting_after: uuid.optional(),
  status: z.enum(FRAUD_WARNING_STATUSES).optional(),
  actionable: z.enum(['true', 'false']).optional(),
  created_gte: z.coerce.number().int().min(0).optional(),
  created_lte: z.coerce.number().int().min(0).optional(),
})
export type FraudWarningsListQuery = z.input<typeof fraudWarningsListQuery>

/** Body of `POST /v1/test_helpers/fraud_warnings` (test secret keys only). */
export const fraudWarningTestCreate = z.strictObject({
  amount: z.number().int().min(1).max(100_000_000).optional().describe("Default 2500, or the linked payment's amount"),
  currency: z
    .string()
    .regex(/^[a-z]{3}$/, 'must be a 3-letter lowercase ISO currency code')
    .optional()
    .describe("Default usd, or the linked payment's currency"),
  fraud_type: z.enum(FRAUD_TYPES).default('unauthorized_use_of_card'),
  charge_id: z.string().min(1).max(255).optional().describe("A label, or the charge id of one of the merchant's payments to link it to"),
})
export type FraudWarningTestCreate = z.input<typeof fraudWarningTestCreate>
