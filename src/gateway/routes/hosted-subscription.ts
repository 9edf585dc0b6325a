/**
 * The browser side of a subscription's first payment: `GET /subscriptions/confirm?client_secret=…`
 * shows what the buyer agrees to, and its form confirms the client secret — pay (or, with a trial,
 * store the card) or decline — through the same `confirmSubscription` as the admin helper. The
 * client secret authorises exactly this; it stops working once the subscription left `incomplete`.
 */
import type {FastifyInstance, FastifyReply, FastifyRequest} from 'fastify'

import {confirmSubscription, subscriptionForClientSecret} from '../domain/subscriptions.js'
import {ApiError, invalid} from '../errors.js'
import type {Tx} from '../domain/context.js'
import type {Platform} from '../platform.js'
import {esc, htmlPage, money, sendHtml} from './html.js'

/** A page in the look and with the security headers of every gateway page (html.ts). */
function html(reply: FastifyReply, status: number, title: string, body: string, testMode = true) {
  return sendHtml(reply, status, htmlPage({title, testMode, body: `<h1>${esc(title)}</h1>${body}`}))
}

/** The incomplete subscription a client secret opens, or a 404 that leaks nothing (410 once it is no longer incomplete). */
async function load(tx: Tx, request: FastifyRequest) {
  const secret = (request.query as {client_secret?: unknown}).client_secret
  const found = typeof secret === 'string' ? await subscriptionForClientSecret(tx, secret) : ({state: 'unknown'} as const)
  if (found.state === 'unknown') throw new ApiError(404, 'not_found', 'resource_missing', 'No such subscription confirmation')
  if (found.state === 'ended') throw new ApiError(410, 'invalid_state', 'subscription_not_incomplete', 'This subscription no longer awaits confirmation')
  return {scope: found.scope, sub: found.sub, secret: secret as string}
}

export function registerHostedSubscription(app: FastifyInstance, platform: Platform): void {
  void app.register(async (scoped) => {
    scoped.addContentTypeParser('application/x-www-form-urlencoded', {parseAs: 'string', bodyLimit: 4096}, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)))
    })
    scoped.setErrorHandler((error: Error & {statusCode?: number}, _request, reply) => {
      // Fastify's own 4xx (a body over the limit, an unsupported type) stay 4xx: bad input is never a 500.
      const status = error instanceof ApiError ? error.status : error.statusCode && error.statusCode < 500 ? error.statusCode : 500
      return html(reply, status, 'Subscription', `<p>${esc(status >= 500 ? 'The gateway failed to show this page; try again.' : error.message)}</p>`)
    })

    scoped.get('/subscriptions/confirm', async (request, reply) => {
      const {sub, secret} = await platform.read((tx) => load(tx, request))
      const price = money(sub.amount, sub.currency)
      const what = sub.intent_type === 'setup' ? `Start a free trial until ${new Date(sub.trial_end! * 1000).toISOString().slice(0, 10)}, then ${price}` : `Pay ${price} now`
      return html(
        reply,
        200,
        'Confirm your subscription',
        `<p>${esc(what)} (subscription ${esc(sub.id)}).</p>
<form method="post" action="/subscriptions/confirm?client_secret=${encodeURIComponent(secret)}">
<button name="outcome" value="paid">${sub.intent_type === 'setup' ? 'Save test card' : 'Pay with test card'}</button><button name="outcome" value="declined">Decline</button></form>`,
        !sub.livemode,
      )
    })

    scoped.post('/subscriptions/confirm', async (request, reply) => {
      // Never a default: a form that lost its button's value must not pay (as on the hosted checkout).
      const outcome = (request.body as {outcome?: unknown} | undefined)?.outcome
      if (outcome !== 'paid' && outcome !== 'declined') throw invalid('parameter_invalid', 'outcome must be paid or declined', 'outcome')
      const result = await platform.write(async (tx) => {
        const {scope, sub} = await load(tx, request)
        return confirmSubscription(tx, scope, sub.id, {outcome})
      })
      const status = result.subscription.status
      if (status === 'incomplete') return html(reply, 402, 'Card declined', `<p>Your card was declined (test). Go back and try again.</p>`)
      return html(reply, 200, status === 'trialing' ? 'Trial started' : 'Subscribed', `<p>Subscription ${esc(result.subscription.id)} is ${esc(status)}.</p>`)
    })
  })
}
