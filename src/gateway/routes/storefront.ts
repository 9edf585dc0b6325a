/**
 * The storefront a store's `url` and a store checkout's default success and cancel URLs point at:
 * `/s/{slug}` (the store's name and its visible products with prices) and `/s/{slug}/success|cancel`,
 * the pages a buyer lands on after paying or leaving a checkout. `?env=test` shows the sandbox catalogue
 * (the default URLs of test sessions carry it). Plain HTML, no script.
 */
import type {FastifyInstance, FastifyReply, FastifyRequest} from 'fastify'

import {storefrontUrls} from '../domain/merchants.js'
import {storeBySlug, storefrontItems, type StorefrontItem} from '../domain/storefront.js'
import type {Tx} from '../domain/context.js'
import type {Platform} from '../platform.js'
import type {Env} from '../storage/documents.js'
import {esc, htmlPage, money, sendHtml} from './html.js'

async function storeOf(tx: Tx, request: FastifyRequest) {
  const merchant = await storeBySlug(tx, (request.params as {slug: string}).slug)
  const env: Env = (request.query as {env?: unknown}).env === 'test' ? 'test' : 'live'
  return merchant ? {merchant, env} : undefined
}

function priceLabel({price}: StorefrontItem): string {
  if (!price) return '<span class="muted">Not for sale yet</span>'
  const every = price.recurring ? ` / ${price.recurring.interval_count > 1 ? `${price.recurring.interval_count} ` : ''}${price.recurring.interval}` : ''
  return esc(money(price.unit_amount, price.currency) + every)
}

const notFound = (reply: FastifyReply) =>
  sendHtml(reply, 404, htmlPage({title: 'Store not found', body: '<h1>Store not found</h1><p>No store lives at this address.</p>'}))

export function registerStorefront(app: FastifyInstance, platform: Platform): void {
  app.get('/s/:slug', async (request, reply) => {
    const found = await platform.read(async (tx) => {
      const store = await storeOf(tx, request)
      return store && {...store, items: await storefrontItems(tx, store.merchant, store.env)}
    })
    if (!found) return notFound(reply)
    const {merchant, env, items} = found
    const list = items.length
      ? `<ul class="products">${items
          .map(
            (item) =>
              `<li><div><h2>${esc(item.product.name)}</h2>${item.product.description ? `<p class="muted">${esc(item.product.description)}</p>` : ''}</div><span class="price">${priceLabel(item)}</span></li>`,
          )
          .join('')}</ul>`
      : '<p class="muted">No products yet.</p>'
    const closed = merchant.store.status !== 'live' ? '<p role="alert">This store is not taking orders at the moment.</p>' : ''
    const name = merchant.store.display_name
    return sendHtml(reply, 200, htmlPage({title: name, store: name, testMode: env === 'test', body: `<h1>${esc(name)}</h1>${closed}${list}`}))
  })

  for (const [outcome, heading, text] of [
    ['success', 'Thank you for your order', 'Your payment was received. A receipt is on its way to your e-mail address.'],
    ['cancel', 'Checkout canceled', 'You left the checkout; nothing was charged.'],
  ] as const) {
    app.get(`/s/:slug/${outcome}`, async (request, reply) => {
      const found = await platform.read((tx) => storeOf(tx, request))
      if (!found) return notFound(reply)
      const name = found.merchant.store.display_name
      const home = storefrontUrls(`/s/${encodeURIComponent(found.merchant.store.slug)}`, found.env).home
      const body = `<h1>${heading}</h1><p class="${outcome === 'success' ? 'ok' : 'muted'}">${text}</p><p><a href="${esc(home)}">Back to ${esc(name)}</a></p>`
      return sendHtml(reply, 200, htmlPage({title: `${heading} — ${name}`, store: name, testMode: found.env === 'test', body}))
    })
  }
}
