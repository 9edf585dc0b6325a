/**
 * Customers (spec: only the `cus_` prefix is shown): the merchant-side customer a subscription bills,
 * `{id, object, livemode, name, email, created}`. Created with a subscription (`customer.created`) or
 * named by `customer` on a new one; read with `GET /v1/customers/{id}`.
 */
import {invalid} from '../errors.js'
import {newId} from '../ids.js'
import type {Tx} from './context.js'
import type {CustomerDoc, Scope} from '../storage/documents.js'
import {requireDoc, stamp} from './shared.js'

export const requireCustomer = async (tx: Tx, scope: Scope, id: string, param?: string) => requireDoc(tx, 'customer', scope, id, 'customer', 'resource_missing', param)

export async function createCustomer(tx: Tx, scope: Scope, contact: {name: string | null; email: string | null}): Promise<CustomerDoc> {
  const customer: CustomerDoc = {...stamp(tx, scope, 'customer', newId('cus', 14)), ...contact}
  await tx.insert('customer', scope, customer, {created: customer.created})
  await tx.emit(scope, 'customer.created', customer)
  return customer
}

/**
 * The customer a new subscription bills: the one named by `customer` (its name and e-mail win; the body
 * may only fill what it lacks, else 400 `customer_mismatch`), or a new one from `customer_name` and
 * `customer_email`.
 */
export async function resolveCustomer(tx: Tx, scope: Scope, input: {customer?: string; customer_name?: string; customer_email?: string}): Promise<CustomerDoc> {
  if (input.customer === undefined) {
    const contact = {name: input.customer_name ?? null, email: input.customer_email ?? null}
    requireContact(contact)
    return createCustomer(tx, scope, contact)
  }
  const found = await requireCustomer(tx, scope, input.customer, 'customer')
  for (const [field, sent] of [['name', input.customer_name], ['email', input.customer_email]] as const) {
    if (sent !== undefined && found[field] !== null && found[field] !== sent) {
      throw invalid('customer_mismatch', `customer_${field} differs from the ${field} of customer ${found.id}; omit it to use the customer's`, `customer_${field}`)
    }
  }
  const filled = {...found, name: found.name ?? input.customer_name ?? null, email: found.email ?? input.customer_email ?? null}
  requireContact(filled)
  if (filled.name !== found.name || filled.email !== found.email) await tx.save(filled)
  return filled
}

function requireContact(c: {name: string | null; email: string | null}) {
  if (c.name === null) throw invalid('parameter_missing', 'Missing required parameter: customer_name (or a customer that has a name)', 'customer_name')
  if (c.email === null) throw invalid('parameter_missing', 'Missing required parameter: customer_email (or a customer that has one)', 'customer_email')
}
