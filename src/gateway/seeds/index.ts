/**
 * `--seed`: a demo merchant with a live, approved store, a sample catalogue and account data in both
 * environments, and all-scope credentials for both. Idempotent: on a database seeded before, it reuses
 * the merchant and prints the same credentials.
 */
import {adminMerchantCreate} from '@payapp/sdk/schemas/admin'
import {SCOPES} from '@payapp/sdk/schemas/common'
import {createMerchant} from '../domain/merchants.js'
import type {Tx} from '../domain/context.js'
import type {Platform} from '../platform.js'
import type {Env, Scope} from '../storage/documents.js'
import {seedAccount} from './account.js'
import {seedCatalog} from './catalog.js'
import {seedSales} from './sales.js'

export interface SeedResult {
  merchant: string
  store: string
  installations: Record<Env, {id: string; token: string}>
  secret_keys: Record<Env, {id: string; secret_key: string}>
}

/** A seeder fills one merchant environment with sample data through the domain's functions, so seeds obey every rule. */
export type Seeder = (tx: Tx, scope: Scope) => Promise<void>

// Back-dated account history first, today's sales last: lists are newest first by insertion.
const seeders: Seeder[] = [seedCatalog, seedAccount, seedSales]

export async function seedDemo(platform: Platform): Promise<SeedResult> {
  const previous = await platform.storage.reads.meta('seed')
  if (previous) {
    const seeded = JSON.parse(previous) as SeedResult
    if (await platform.storage.reads.merchant(seeded.merchant)) return seeded
  }
  return platform.write(async (tx) => {
    const merchant = await createMerchant(
      tx,
      adminMerchantCreate.parse({company: 'Demo Merchant GmbH', country: 'DE', vat_number: 'DE123456789', store: {slug: 'demo', display_name: 'Demo Store'}}),
    )
    const result: SeedResult = {merchant: merchant.id, store: merchant.store.id, installations: {} as SeedResult['installations'], secret_keys: {} as SeedResult['secret_keys']}
    for (const env of ['test', 'live'] as const) {
      const inst = await tx.issueCredential('installation', merchant.id, env, SCOPES, {appName: 'payapp demo'})
      const key = await tx.issueCredential('secret_key', merchant.id, env, SCOPES)
      result.installations[env] = {id: inst.id, token: inst.token}
      result.secret_keys[env] = {id: key.id, secret_key: key.token}
      for (const seeder of seeders) await seeder(tx, {merchant: merchant.id, env})
    }
    // Kept so a restart with --seed prints the same credentials; this file is the developer's own.
    await tx.setMeta('seed', JSON.stringify(result))
    return result
  })
}
