/**
 * The hosted checkout page a session's `checkout_url` points at (`/checkout/{id}?cs=<client_secret>`,
 * and `/embed` for an iframe). On localhost the buyer is simulated: the page pays with a test card or
 * declines, through the same completion as `POST /_admin/checkouts/{id}/complete`. The client secret
 * authorises exactly this: loading and paying its own session, and its receipt page (spec: Authentication).
 *
 * Every POST answers with a 303 (post/redirect/get), so reloading a page never pays or declines twice.
 * The embed page pays through `fetch`, tells the embedding page the outcome with `postMessage`
 * (docs/embedded-checkout.md) and moves the top window to the success URL; without script its form
 * targets `_top`.
 */
import type {FastifyInstance, FastifyRequest} from 'fastify'

import {sendError} from '../app.js'
import {clientSecretMatches, completeSession, findSession as findAnySession} from '../domain/checkout.js'
import {optionsOf} from '../domain/option-groups.js'
import {variantView} from '../domain/variants.js'
import {ApiError} from '../errors.js'
import type {Tx} from '../domain/context.js'
import type {Platform} from '../platform.js'
import type {Scope, SessionDoc} from '../storage/documents.js'
import {esc, htmlPage, humanExpiry, money, originOf, sendHtml} from './html.js'

/** A form or query field as text; a JSON body or a repeated query key may carry anything else. */
const text = (v: unknown) => (typeof v === 'string' ? v : '')

/** The `type` of every message the embed page posts to its parent window. */
const EMBED_MESSAGE_TYPE = 'payapp.checkout'
/** The `type` of the embedding page's optional reply to `paid`: "handled, move the top window now". */
const EMBED_ACK_TYPE = 'payapp.checkout.ack'
/**
 * How long the embed page waits for that reply before it moves the top window anyway. A browser does not
 * promise to run the parent's `message` handler before a navigation it did not start unloads the parent
 * (Chromium dropped it under load), so a page that must see `paid` replies; one that does not reply loses
 * nothing but this wait.
 */
export const EMBED_ACK_WAIT_MS = 1000

const NOTICES = {
  declined: 'Your card was declined (test). Nothing was charged; try again or use another card.',
  invalid: 'Enter a name (2 to 120 characters) and a valid e-mail address.',
} as const

const gone = () => new ApiError(410, 'invalid_state', 'session_expired', 'This checkout is no longer open')

/** The session a (session id, client secret) pair opens, in any state, or 404. */
async function findSession(tx: Tx, request: FastifyRequest): Promise<{scope: Scope; session: SessionDoc; cs: string}> {
  const {id} = request.params as {id: string}
  const cs = text((request.query as {cs?: unknown}).cs)
  // Swept first: a session past its time is expired, so its page is gone.
  const found = await findAnySession(tx, id)
  if (!found || !cs || !clientSecretMatches(found.session, cs)) throw new ApiError(404, 'not_found', 'resource_missing', 'No such checkout session')
  return {...found, cs}
}

/** An open session, or 410: the secret dies with the open state (spec), except for the receipt page. */
async function loadOpen(tx: Tx, request: FastifyRequest) {
  const found = await findSession(tx, request)
  if (found.session.status !== 'open') throw gone()
  return found
}

const pageUrl = (session: SessionDoc, cs: string, suffix = '') => `/checkout/${encodeURIComponent(session.id)}${suffix}?cs=${encodeURIComponent(cs)}`

async function storeName(tx: Tx, scope: Scope): Promise<string> {
  const merchant = await tx.merchant(scope.merchant)
  return merchant?.store.display_name ?? merchant?.company ?? 'Checkout'
}

/** A line as a buyer reads it: the product, its variant as `L / Blue`, unit price × quantity, line total. */
async function lineRow(tx: Tx, scope: Scope, line: SessionDoc['line_items'][number]): Promise<string> {
  const product = line.product_id ? await tx.get('product', scope, line.product_id) : undefined
  const variant = line.variant_id ? await tx.get('variant', scope, line.variant_id) : undefined
  const variantTitle = product && variant && !variant.is_default ? variantView(variant, product, await optionsOf(tx, scope, product.id)).title : null
  const name = product?.name ?? line.name
  const unit = money(line.amount, line.currency)
  return `<li><span>${esc(name)}${variantTitle && variantTitle !== name ? `<span class="variant">${esc(variantTitle)}</span>` : ''}<span class="variant">${esc(unit)} × ${line.quantity}</span></span><span class="price">${esc(money(line.amount * line.quantity, line.currency))}</span></li>`
}

function embedScript(session: SessionDoc): string {
  const data = JSON.stringify({type: EMBED_MESSAGE_TYPE, session_id: session.id}).replace(/</g, '\\u003c')
  return `(() => {
  const base = ${data};
  const form = document.querySelector('form.pay-form');
  const notice = document.getElementById('notice');
  const tell = (outcome) => window.parent.postMessage({...base, outcome}, '*');
  // After 'paid': move the top window once the embedding page replies that it handled the message, or after the wait.
  const moveTop = (url) => {
    let moved = false;
    const go = () => { if (moved) return; moved = true; window.removeEventListener('message', onAck); window.top.location.href = url; };
    const onAck = (e) => { if (e.source === window.parent && e.data && e.data.type === ${JSON.stringify(EMBED_ACK_TYPE)} && e.data.session_id === base.session_id) go(); };
    window.addEventListener('message', onAck);
    setTimeout(go, ${EMBED_ACK_WAIT_MS});
    tell('paid');
  };
  const show = (message, html) => { notice.hidden = false; notice.setAttribute('role', 'alert'); if (html) notice.innerHTML = html; else notice.textContent = message; };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    // Read the form (with the button pressed) before disabling the buttons: a disabled button is not submitted.
    const body = new URLSearchParams(new FormData(form, event.submitter));
    const buttons = form.querySelectorAll('button');
    buttons.forEach((b) => { b.disabled = true; });
    try {
      const res = await fetch(form.action, {method: 'POST', body, headers: {accept: 'application/json'}});
      const result = await res.json();
      if (result.outcome === 'paid') {
        notice.className = 'ok'; show('Payment received. Continuing…');
        moveTop(result.redirect_url);
        return;
      }
      if (result.outcome === 'declined') tell('declined');
      show(result.message || (result.error && result.error.message) || 'This checkout is no longer open.');
    } catch {
      show('The checkout could not be reached; try again.');
    }
    buttons.forEach((b) => { b.disabled = false; });
  });
  document.querySelector('a.back')?.addEventListener('click', () => tell('canceled'));
  tell('ready');
})();`
}

async function checkoutPage(tx: Tx, scope: Scope, session: SessionDoc, cs: string, opts: {embed: boolean; notice?: keyof typeof NOTICES}) {
  let items = ''
  for (const line of session.line_items) items += await lineRow(tx, scope, line)
  const action = pageUrl(session, cs, '/pay')
  const back = session.cancel_url
    ? `<p><a class="back" href="${esc(session.cancel_url)}"${opts.embed ? ' target="_top"' : ''}>Back to store</a></p>`
    : ''
  const store = await storeName(tx, scope)
  const body = `<h1>Checkout</h1><ul class="items">${items}</ul>
<p class="muted">Total</p><p class="total">${esc(money(session.amount, session.currency))}</p>
<p id="notice"${opts.notice ? ' role="alert"' : ' hidden'}>${opts.notice ? esc(NOTICES[opts.notice]) : ''}</p>
<form class="pay-form" method="post" action="${esc(action)}"${opts.embed ? ' target="_top"' : ''}>
<label>Name <input name="customer_name" value="Test Customer" minlength="2" maxlength="120" required></label>
<label>E-mail <input name="customer_email" type="email" value="customer@example.com" required></label>
<p><button class="pay" name="outcome" value="paid">Pay ${esc(money(session.amount, session.currency))} with test card</button>
<button name="outcome" value="declined">Decline</button></p></form>
${back}<p class="muted">This checkout expires ${esc(humanExpiry(session.expires_at, tx.now(scope)))}.</p>`
  return htmlPage({title: `Checkout — ${store}`, store, testMode: !session.livemode, body, script: opts.embed ? embedScript(session) : undefined, compact: opts.embed})
}

export function registerHostedCheckout(app: FastifyInstance, platform: Platform): void {
  void app.register(async (scoped) => {
    // Browsers post forms urlencoded; only these routes accept that.
    scoped.addContentTypeParser('application/x-www-form-urlencoded', {parseAs: 'string', bodyLimit: 16 * 1024}, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)))
    })
    scoped.setErrorHandler((error: Error & {statusCode?: number}, request, reply) => {
      const status = error instanceof ApiError ? error.status : error.statusCode && error.statusCode < 500 ? error.statusCode : 500
      // An unexpected failure's own message is internal: the buyer's page never shows it.
      const message = status >= 500 ? 'The gateway failed to show this checkout; try again.' : error.message
      // The embed page's fetch: the API's error envelope, like every other JSON error of the gateway.
      if (wantsJson(request)) return sendError(request, reply, error instanceof ApiError ? error : new ApiError(status, status >= 500 ? 'api_error' : 'invalid_request', undefined, message))
      const title = status === 410 ? 'This checkout has ended' : 'Checkout unavailable'
      return sendHtml(reply, status, htmlPage({title, body: `<h1>${title}</h1><p>${esc(message)}</p>`}))
    })

    for (const embed of [false, true]) {
      scoped.get(embed ? '/checkout/:id/embed' : '/checkout/:id', async (request, reply) => {
        const {session, page} = await platform.read(async (tx) => {
          const {scope, session, cs} = await loadOpen(tx, request)
          const notice = text((request.query as {notice?: unknown}).notice)
          return {session, page: await checkoutPage(tx, scope, session, cs, {embed, notice: notice in NOTICES ? (notice as keyof typeof NOTICES) : undefined})}
        })
        return sendHtml(reply, 200, page, {frameable: embed, formTargets: originOf(session.success_url)})
      })
    }

    scoped.post('/checkout/:id/pay', async (request, reply) => {
      const form = (request.body ?? {}) as Record<string, unknown>
      // Never a default: a form that lost its button's value must not pay.
      const outcome = form.outcome === 'declined' || form.outcome === 'paid' ? form.outcome : undefined
      const name = text(form.customer_name).trim()
      const email = text(form.customer_email).trim()
      const json = wantsJson(request)
      const result = await platform.write(async (tx) => {
        const {scope, session, cs} = await loadOpen(tx, request)
        if (!outcome || name.length < 2 || name.length > 120 || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) {
          return {session, cs, invalid: await checkoutPage(tx, scope, session, cs, {embed: false, notice: 'invalid'})}
        }
        await completeSession(tx, scope, session, outcome, {name, email})
        return {session, cs}
      })
      const {session, cs} = result
      // Nothing was recorded: the form is shown again, and a reload only repeats the refusal.
      if (result.invalid !== undefined) {
        // The page answered; the outcome is in the body (an error status is reserved for the envelope).
        if (json) return reply.code(200).send({outcome: 'invalid', session_id: session.id, message: NOTICES.invalid})
        return sendHtml(reply, 400, result.invalid, {formTargets: originOf(session.success_url)})
      }
      if (outcome === 'declined') {
        if (json) return reply.code(200).send({outcome, session_id: session.id, message: NOTICES.declined})
        return reply.code(303).header('location', `${pageUrl(session, cs)}&notice=declined`).send()
      }
      // Normalised by the URL parser: a value stored before URLs were validated whole can still not break the header.
      const next = session.success_url ? new URL(session.success_url).href : pageUrl(session, cs, '/done')
      if (json) return reply.code(200).send({outcome, session_id: session.id, redirect_url: next})
      return reply.code(303).header('location', next).send()
    })

    // The receipt of a session paid without a success_url (API sessions may have none).
    scoped.get('/checkout/:id/done', async (request, reply) => {
      const {session, cs, store} = await platform.read(async (tx) => {
        const found = await findSession(tx, request)
        return {...found, store: await storeName(tx, found.scope)}
      })
      if (session.status === 'open') return reply.code(303).header('location', pageUrl(session, cs)).send()
      if (session.status !== 'complete') throw gone()
      const body = `<h1>Payment received</h1><p class="ok">Thank you: ${esc(store)} received your payment.</p>
<p class="total">${esc(money(session.amount, session.currency))}</p><p class="muted">Reference ${esc(session.payment)}</p>`
      return sendHtml(reply, 200, htmlPage({title: `Paid — ${store}`, store, testMode: !session.livemode, body}))
    })
  })
}

const wantsJson = (request: FastifyRequest) => (request.headers.accept ?? '').includes('application/json')
