/**
 * What every HTML page of the gateway shares (the hosted checkout, its embed, the storefront and its
 * outcome pages): escaping, money and time as a buyer reads them, one look, and the security headers.
 * Every page is sent through `sendHtml`, so none can leave without its CSP and `nosniff`.
 */
import {randomBytes} from 'node:crypto'

import type {FastifyReply} from 'fastify'

import {displayMoney} from '@payapp/sdk/currency'

export const esc = (s: unknown) =>
  String(s ?? '').replace(/[&<>"']/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'})[c]!)

/** `2500, 'eur'` → `€25.00`, with the currency table's digits. */
export const money = displayMoney

/** "in 30 minutes (21:27 UTC)": the gateway clock's view, which a test may have moved. */
export function humanExpiry(expiresAt: number, now: number): string {
  const minutes = Math.max(0, Math.round((expiresAt - now) / 60))
  const span = minutes < 90 ? `${minutes} minute${minutes === 1 ? '' : 's'}` : `${Math.round(minutes / 60)} hours`
  const at = new Date(expiresAt * 1000)
  const clock = at.toISOString().slice(11, 16)
  const day = minutes >= 24 * 60 - 60 ? `${at.toISOString().slice(0, 10)} ` : ''
  return `in ${span} (${day}${clock} UTC)`
}

export interface PageOptions {
  title: string
  body: string
  /** The store the buyer is dealing with, shown above the card. */
  store?: string
  testMode?: boolean
  /** An inline script, allowed by the page's nonce only. */
  script?: string
  /** Less margin, for a page shown in an iframe. */
  compact?: boolean
}

export interface SendOptions {
  /** Only the embed page may be framed, by any origin; every other page refuses framing. */
  frameable?: boolean
  /** Origins a form on the page may post or be redirected to, besides the gateway itself. */
  formTargets?: string[]
}

/** A rendered page and the nonce its inline style and script carry. */
export interface Html {
  html: string
  nonce: string
}

export function htmlPage(opts: PageOptions): Html {
  const nonce = randomBytes(16).toString('base64')
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(opts.title)}</title><style nonce="${nonce}">
body{font:16px/1.5 system-ui,sans-serif;max-width:30rem;margin:2.5rem auto;padding:0 1rem;color:#1a1a1a}
header{display:flex;align-items:center;justify-content:space-between;margin-bottom:1rem}.store{font-weight:600;font-size:1.1rem}
.badge{background:#fff4d6;color:#7a5200;border-radius:.3rem;padding:.1rem .45rem;font-size:.75rem;font-weight:600;letter-spacing:.03em}
.card{border:1px solid #ddd;border-radius:.75rem;padding:1.5rem}.total{font-size:1.75rem;font-weight:600;margin:.25rem 0}
.muted{color:#666;font-size:.875rem}.items{list-style:none;padding:0;margin:0 0 1rem}.items li{display:flex;justify-content:space-between;gap:1rem;padding:.5rem 0;border-bottom:1px solid #eee}
.variant{display:block;color:#555;font-size:.875rem}.price{white-space:nowrap;text-align:right}
button{font:inherit;padding:.6rem 1rem;border-radius:.5rem;border:1px solid #333;cursor:pointer;background:#fff}
button.pay{background:#1a1a1a;color:#fff}label{display:block;margin:.5rem 0}input{font:inherit;width:100%;padding:.4rem;box-sizing:border-box}
[role=alert]{background:#fdecea;color:#8a1c12;border-radius:.4rem;padding:.5rem .75rem}.ok{background:#e8f5e9;color:#1b5e20;border-radius:.4rem;padding:.5rem .75rem}
.products{list-style:none;padding:0;margin:0}.products li{display:flex;justify-content:space-between;gap:1rem;padding:.75rem 0;border-bottom:1px solid #eee}.products li:last-child{border:0}
.products h2{font-size:1rem;margin:0}.products p{margin:.25rem 0 0}a{color:#1a4fd6}
body.compact{margin:.75rem auto}body.compact .card{padding:1rem 1.25rem}body.compact h1{margin:.25rem 0 .75rem;font-size:1.5rem}
</style></head><body${opts.compact ? ' class="compact"' : ''}>
<header><span class="store">${esc(opts.store ?? 'payapp')}</span>${opts.testMode ? '<span class="badge">TEST MODE</span>' : ''}</header>
<main class="card">${opts.body}</main>
<p class="muted">payapp reference gateway${opts.testMode ? ' — test mode: no real card is charged' : ''}.</p>
${opts.script ? `<script nonce="${nonce}">${opts.script}</script>` : ''}</body></html>`
  return {html, nonce}
}

/**
 * Sends a page with the headers every gateway page carries: a CSP that allows only the page's own
 * nonce-marked style and script, `nosniff`, no referrer (a checkout URL carries its client secret), no
 * caching, and framing refused except on the embed page.
 */
export function sendHtml(reply: FastifyReply, status: number, page: Html, opts: SendOptions = {}) {
  const csp = [
    "default-src 'none'",
    `style-src 'nonce-${page.nonce}'`,
    `script-src 'nonce-${page.nonce}'`,
    "img-src 'self' https: data:",
    "connect-src 'self'",
    // Browsers check form-action on the redirect after a POST too: the success URL's origin must be listed.
    `form-action 'self'${[...new Set(opts.formTargets ?? [])].map((o) => ` ${o}`).join('')}`,
    "base-uri 'none'",
    ...(opts.frameable ? [] : ["frame-ancestors 'none'"]),
  ].join('; ')
  if (!opts.frameable) reply.header('x-frame-options', 'DENY')
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('content-security-policy', csp)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store')
    .send(page.html)
}

/** The origin of an http(s) URL, for a CSP source list; nothing for anything else. */
export function originOf(url: string | null | undefined): string[] {
  if (!url || !URL.canParse(url)) return []
  const u = new URL(url)
  return u.protocol === 'https:' || u.protocol === 'http:' ? [u.origin] : []
}
