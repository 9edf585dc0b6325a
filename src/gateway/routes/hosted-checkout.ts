/**
 * The hosted checkout page a session's `checkout_url` points at (`/checkout/{id}?cs=<client_secret>`,
 * and `/embed` for an iframe). On localhost the buyer is simulated: the page pays with a test card or
 * declines, through the same completion as `POST /_admin/checkouts/{id}/complete`. The client secret
 * authorises exactly this: loading and paying its own session (spec: Authentication).
 */
import type {FastifyInstance, FastifyReply, FastifyRequest} from 'fastify'

import {displayMoney as money} from '../../sdk/currency.js'
import {completeSession, sessionForClientSecret} from '../domain/checkout.js'
import {ApiError} from '../errors.js'
import type {Platform} from '../platform.js'
import type {Scope, SessionDoc} from '../storage/documents.js'

/** A form or query field as text; a JSON body or a repeated query key may carry anything else. */
const text = (v: unknown) => (typeof v === 'string' ? v : '')

const esc = (s: unknown) =>
  String(s ?? '').replace(/[&<>"']/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'})[c]!)

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)}</title><style>
body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a}
.card{border:1px solid #ddd;border-radius:.75rem;padding:1.5rem}.total{font-size:1.75rem;font-weight:600}
.muted{color:#666;font-size:.875rem}button{font:inherit;padding:.6rem 1rem;border-radius:.5rem;border:1px solid #333;cursor:pointer}
button.pay{background:#1a1a1a;color:#fff}label{display:block;margin:.5rem 0}input{font:inherit;width:100%;padding:.4rem;box-sizing:border-box}
</style></head><body><div class="card">${body}</div>
<p class="muted">payapp reference gateway — a simulated checkout; no card is charged.</p></body></html>`
}

/** The session a (session id, client secret) pair opens, or why it does not. */
function loadSession(platform: Platform, request: FastifyRequest): {scope: Scope; session: SessionDoc} {
  const {id} = request.params as {id: string}
  const found = sessionForClientSecret(platform, id, text((request.query as {cs?: unknown}).cs))
  if (found.state === 'unknown') throw new ApiError(404, 'not_found', 'resource_missing', 'No such checkout session')
  // The secret dies with the open state (spec): a finished session cannot be loaded again.
  if (found.state === 'ended') throw new ApiError(410, 'invalid_state', 'session_expired', 'This checkout is no longer open')
  return found
}

function sendPage(reply: FastifyReply, status: number, html: string) {
  return reply.code(status).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(html)
}

function checkoutPage(session: SessionDoc, cs: string, notice?: string): string {
  const items = session.line_items
    .map((l) => `<li>${esc(l.name)}${l.sku ? ` <span class="muted">(${esc(l.sku)})</span>` : ''} × ${l.quantity}</li>`)
    .join('')
  const action = `/checkout/${encodeURIComponent(session.id)}/pay?cs=${encodeURIComponent(cs)}`
  return page(
    'Checkout',
    `<h1>Checkout</h1><ul>${items}</ul><p class="total">${esc(money(session.amount, session.currency))}</p>
${notice ? `<p role="alert">${esc(notice)}</p>` : ''}
<form method="post" action="${esc(action)}">
<label>Name <input name="customer_name" value="Test Customer" minlength="2" maxlength="120" required></label>
<label>E-mail <input name="customer_email" type="email" value="customer@example.com" required></label>
<p><button class="pay" name="outcome" value="paid">Pay with test card</button>
<button name="outcome" value="declined">Decline</button></p></form>
<p class="muted">Expires ${esc(new Date(session.expires_at * 1000).toISOString())}</p>`,
  )
}

export function registerHostedCheckout(app: FastifyInstance, platform: Platform): void {
  void app.register(async (scoped) => {
    // Browsers post forms urlencoded; only these routes accept that.
    scoped.addContentTypeParser('application/x-www-form-urlencoded', {parseAs: 'string', bodyLimit: 16 * 1024}, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)))
    })
    scoped.setErrorHandler((error: Error & {statusCode?: number}, _request, reply) => {
      const status = error instanceof ApiError ? error.status : error.statusCode && error.statusCode < 500 ? error.statusCode : 500
      // An unexpected failure's own message is internal: the buyer's page never shows it.
      const message = status >= 500 ? 'The gateway failed to show this checkout; try again.' : error.message
      return sendPage(reply, status, page('Checkout', `<h1>${status === 410 ? 'This checkout has ended' : 'Checkout unavailable'}</h1><p>${esc(message)}</p>`))
    })

    for (const url of ['/checkout/:id', '/checkout/:id/embed']) {
      scoped.get(url, async (request, reply) => {
        const {session} = loadSession(platform, request)
        return sendPage(reply, 200, checkoutPage(session, (request.query as {cs: string}).cs))
      })
    }

    scoped.post('/checkout/:id/pay', async (request, reply) => {
      const form = (request.body ?? {}) as Record<string, unknown>
      const outcome = form.outcome === 'declined' ? 'declined' : 'paid'
      const name = text(form.customer_name).trim()
      const email = text(form.customer_email).trim()
      const result = platform.storage.transaction(() => {
        const {scope, session} = loadSession(platform, request)
        if (name.length < 2 || name.length > 120 || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) return {session, invalid: true as const}
        return {session, completion: completeSession(platform, scope, session, outcome, {name, email})}
      })
      const cs = (request.query as {cs: string}).cs
      if ('invalid' in result) return sendPage(reply, 400, checkoutPage(result.session, cs, 'Enter a name (2 to 120 characters) and a valid e-mail address.'))
      if (outcome === 'declined') return sendPage(reply, 402, checkoutPage(result.session, cs, 'Your card was declined (test). Try again.'))
      const successUrl = result.session.success_url
      // Normalised by the URL parser: a value stored before URLs were validated whole can still not break the header.
      if (successUrl) return reply.code(303).header('location', new URL(successUrl).href).send()
      const payment = result.completion.payment
      return sendPage(reply, 200, page('Paid', `<h1>Payment received</h1><p class="total">${esc(money(payment.amount, payment.currency))}</p><p class="muted">Payment ${esc(payment.id)}</p>`))
    })
  })
}
