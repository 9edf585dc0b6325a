/** `npm start`: prints the store and its products (settings in .env, see .env.example). */
import {PayappError} from 'payapp/sdk'

import {catalogue} from './catalogue.js'

const token = process.env.PAYAPP_TOKEN
if (!token) {
  console.error('Missing PAYAPP_TOKEN: copy .env.example to .env and fill it in (see README.md)')
  process.exit(1)
}

try {
  const {store, products} = await catalogue({token, baseUrl: process.env.PAYAPP_BASE_URL ?? 'http://127.0.0.1:4242'})
  console.log(`${store}: ${products.length} product(s)`)
  for (const p of products) console.log(`  ${p.id}  ${p.name}${p.active ? '' : ' (archived)'}`)
} catch (error) {
  // The platform's own message and code, with its request id for support; no stack trace.
  if (!(error instanceof PayappError)) throw error
  console.error(`${error.message} (${error.code ?? error.type}, request ${error.requestId ?? 'n/a'})`)
  process.exit(1)
}
