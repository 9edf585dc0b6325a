/**
 * Merchants and their one store (spec: Merchant, Store): created through the admin API or the seed,
 * served as the App API's merchant profile and both doors' store. A sandbox reset wipes one merchant's
 * test documents and nothing else.
 */
import type * as admin from '@payapp/sdk/schemas/admin'
import type {Store} from '@payapp/sdk/schemas/catalog'
import type {Merchant} from '@payapp/sdk/schemas/commerce'
import {ApiError, conflict, notFound} from '../errors.js'
import {newId} from '../ids.js'
import type {Tx} from './context.js'
import type {Env, Kind, MerchantDoc, Scope} from '../storage/documents.js'

export async function requireMerchant(tx: Tx, id: string, param: string | undefined = 'merchant'): Promise<MerchantDoc> {
  const merchant = await tx.merchant(id)
  if (!merchant) throw notFound('merchant', id, 'resource_missing', param)
  return merchant
}

/** The store as a door serves it: its storefront URL points at this gateway. */
export function storeView(merchant: MerchantDoc, env: Env, baseUrl: string): Store & {object: 'store'} {
  return {
    id: merchant.store.id,
    object: 'store',
    livemode: env === 'live',
    slug: merchant.store.slug,
    display_name: merchant.store.display_name,
    status: merchant.store.status,
    approval: merchant.store.approval,
    logo_url: merchant.store.logo_url,
    cover_url: merchant.store.cover_url,
    url: `${baseUrl}/s/${merchant.store.slug}`,
  }
}

/**
 * The storefront's pages in `env`: its home (`store.url`), and the success and cancel pages a store
 * checkout returns the buyer to by default. Test sessions carry `?env=test` so they show the sandbox.
 */
export function storefrontUrls(storeUrl: string, env: Env): {home: string; success: string; cancel: string} {
  const q = env === 'test' ? '?env=test' : ''
  return {home: storeUrl + q, success: `${storeUrl}/success${q}`, cancel: `${storeUrl}/cancel${q}`}
}

/** The App API's merchant profile. */
export function merchantView(m: MerchantDoc, env: Env): Merchant {
  return {id: m.id, object: 'merchant', livemode: env === 'live', company: m.company, country: m.country, vat_number: m.vat_number, status: m.status, created: m.created}
}

/** The admin API's merchant: the record with its store as the live door serves it. */
export const adminMerchantView = async (tx: Tx, merchant: MerchantDoc) => ({...merchant, store: storeView(merchant, 'live', tx.baseUrl)})

/** A merchant with a live, approved store unless `store` says otherwise; the slug is unique by its id's tail. */
export async function createMerchant(tx: Tx, body: admin.AdminMerchantCreateOut): Promise<MerchantDoc> {
  const id = newId('mch', 16)
  const company = body.company ?? 'Demo Merchant'
  const slug = body.store?.slug ?? `${company.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 40) || 'store'}-${id.slice(-6).toLowerCase()}`
  const doc: MerchantDoc = {
    id,
    object: 'merchant',
    company,
    country: (body.country ?? 'DE').toUpperCase(),
    vat_number: body.vat_number ?? null,
    status: body.status,
    ...(body.plan ? {plan: body.plan} : {}),
    created: tx.now({merchant: id}),
    store: {
      id: newId('store', 16),
      slug,
      display_name: body.store?.display_name ?? company,
      status: body.store?.status ?? 'live',
      approval: body.store?.approval ?? 'approved',
      logo_url: null,
      cover_url: null,
    },
  }
  await tx.saveMerchant(doc)
  return doc
}

/** Wipes the merchant's test-environment documents; live data and credentials stay. */
export async function resetSandbox(tx: Tx, merchant: string) {
  await requireMerchant(tx, merchant)
  const removed = await tx.wipe({merchant, env: 'test'})
  return {object: 'sandbox_reset' as const, merchant, deleted_objects: removed}
}

/**
 * The gate of every create the merchant's plan counts: 409 `merchant_not_ready` while onboarding is
 * unfinished, 402 once the plan's limit of that kind is used up in this environment.
 */
export async function requireCanCreate(tx: Tx, scope: Scope, kind: Extract<Kind, 'product' | 'checkout_session'>): Promise<void> {
  const merchant = await requireMerchant(tx, scope.merchant)
  if (merchant.status === 'not_ready') {
    throw conflict('merchant_not_ready', 'The merchant has not finished onboarding; creates are refused until it is active')
  }
  const limitOf = (m: MerchantDoc) => (kind === 'product' ? m.plan?.product_limit : m.plan?.checkout_limit)
  if (limitOf(merchant) === undefined) return
  // Counted under the merchant's lock: concurrent creates take turns, so the last one allowed is the last one stored.
  const limit = limitOf((await tx.merchant(scope.merchant, 'exclusive')) ?? merchant)
  if (limit === undefined) return
  const used = (await tx.ids(kind, scope, [])).length
  if (used >= limit) {
    const code = kind === 'product' ? 'product_limit_reached' : 'checkout_limit_reached'
    throw new ApiError(402, code, code, `The merchant's plan allows ${limit} ${kind === 'product' ? 'products' : 'checkout sessions'}; upgrade the plan to create more`)
  }
}
