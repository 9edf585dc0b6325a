/**
 * What both SQL backends (sqlite.ts, postgres.ts) share: the guard on names spliced into SQL, and which
 * methods of each table write (a read handle refuses them), the webhook endpoint row's parsing, and an objects row.
 */
import type {CredentialRecord, CredentialTable, InsertOptions, Kind, Scope, WebhookEndpointRecord} from './storage.js'

/** Field names and kinds come from code, never from a request; checked anyway since they are spliced into SQL. */
const NAME = /^[a-z_.]+$/
export function name(text: string): string {
  if (!NAME.test(text)) throw new Error(`not a field or kind name: ${text}`)
  return text
}

/** The names of the methods that write, per table: a read handle refuses them, a unit's handle records them. */
export const WRITES: Record<string, ReadonlySet<string>> = {
  '': new Set(['insert', 'save', 'replaceIf', 'increment', 'remove', 'wipe', 'setMeta', 'saveMerchant', 'putBlob']),
  credentials: new Set(['insert', 'revoke']),
  idempotency: new Set(['claim', 'plan', 'finish', 'answer', 'releaseInFlight', 'prune']),
  webhooks: new Set(['insertEndpoint', 'removeEndpoint', 'setSecrets', 'enqueue', 'recordAttempt', 'claim', 'release']),
  jobs: new Set(['insert', 'remove', 'cancel']),
  rates: new Set(['hit', 'prune']),
  faults: new Set(['insert', 'update', 'remove', 'clear']),
  leases: new Set(['acquire', 'release']),
}
export const TABLES = ['credentials', 'idempotency', 'webhooks', 'jobs', 'rates', 'faults', 'leases'] as const

/** A write method of a read handle: fails loudly, so a write outside a unit is never silently kept. */
export const refuseWrite = (method: string) => () => Promise.reject(new Error(`storage: ${method} outside a unit of work (use platform.write)`))

/** A `webhook_endpoints` row as both engines store it: the event list and earlier secrets as JSON text. */
export type EndpointRow = Omit<WebhookEndpointRecord, 'events' | 'previous_secrets'> & {events: string; previous_secrets: string | null}

export const endpointRecord = (row: EndpointRow | undefined): WebhookEndpointRecord | undefined =>
  row && {...row, events: JSON.parse(row.events) as string[], previous_secrets: row.previous_secrets ? (JSON.parse(row.previous_secrets) as WebhookEndpointRecord['previous_secrets']) : []}

/** A `credentials` row as both engines insert it: the scopes and origins as JSON text. */
export const credentialRow = (r: Parameters<CredentialTable['insert']>[0]) => ({
  id: r.id,
  token_hash: r.tokenHash,
  kind: r.kind,
  merchant: r.merchant,
  env: r.env,
  scopes: JSON.stringify(r.scopes),
  hint: r.hint,
  app_name: r.appName,
  created: r.created,
  origins: r.origins ? JSON.stringify(r.origins) : null,
})

/** The columns of a `credentials` row that make its record (`credentialRecord`), as both engines select them. */
export const CREDENTIAL_COLUMNS = 'id, kind, merchant, env, scopes, hint, origins'
export type CredentialRow = Omit<CredentialRecord, 'scopes' | 'origins'> & {scopes: string; origins: string | null}

export const credentialRecord = (row: CredentialRow | undefined): CredentialRecord | undefined =>
  row && {...row, scopes: JSON.parse(row.scopes) as string[], origins: row.origins ? (JSON.parse(row.origins) as string[]) : null}

/** An `objects` row as both engines insert it: the document as JSON text, its scope, parent and unique key. */
export const objectRow = (kind: Kind, scope: Scope, doc: {id: string}, opts: InsertOptions) => ({
  id: doc.id,
  kind,
  merchant: scope.merchant,
  env: scope.env,
  parent: opts.parent ?? null,
  created: opts.created,
  data: JSON.stringify(doc),
  unique_key: opts.key ?? null,
})
