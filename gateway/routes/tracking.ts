import { Type } from 'typebox'
import { ApiError, REDIS_KEYS, normalHost, type TokenClaims } from '../../protocol/mod.ts'
import { type TrackingRecorder, type TrackingRequest } from '../../stores/events/mod.ts'
import { route, type RequestContext } from '../http/route.ts'
import { servesCertificateFor, trackingHostOf } from '../http/tracking_host.ts'

/** The smallest transparent 1×1 GIF (43 bytes). */
export const PIXEL_GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64')
const NO_STORE = { 'Cache-Control': 'no-store, no-cache, must-revalidate, private', Pragma: 'no-cache' }
/** The unsubscribe pages load nothing and their form posts only to their own origin. */
const PAGE_HEADERS = {
  ...NO_STORE,
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
  'Referrer-Policy': 'no-referrer'
}

/**
 * The tracking endpoints carry no API key, so the per-key limit cannot hold them: each client address gets its own
 * bucket instead, so that one client cannot flood an organisation's events (the token is checked after, so a
 * stream of garbage tokens is metered too).
 */
async function meter (ctx: RequestContext): Promise<void> {
  const perMinute = ctx.deps.config.tracking.ratePerMinute
  if (perMinute === 0) return
  let d
  try {
    d = await ctx.deps.limiter.take(REDIS_KEYS.trackingRate(ctx.ip, perMinute), perMinute)
  } catch (err) {
    // Without Redis the meter lets requests through: a reader's image or redirect matters more than the meter,
    // and the signed token still decides what is recorded.
    ctx.deps.log.warn({ err }, 'tracking rate limit unavailable; request not metered')
    return
  }
  ctx.deps.metrics.rateDecisions.tracking[d.allowed ? 'allowed' : 'limited'].inc()
  if (!d.allowed) {
    throw new ApiError('rate_limited', `Rate limit of ${perMinute} tracking requests per minute per address exceeded.`, {
      retryAfter: d.retryAfterS
    })
  }
}

/** The same words for every refused host; the host itself is never written back. */
const MISDIRECTED = 'This host serves no tracking links: it is neither this installation\'s public host nor a verified tracking host.'

async function claimsOf (ctx: RequestContext, kind: TokenClaims['k']): Promise<{ rec: TrackingRecorder, claims: TokenClaims }> {
  await meter(ctx)
  const host = trackingHostOf(ctx.deps.cp, ctx.deps.config.http.publicUrl, ctx.headers.host)
  if (host === undefined) throw new ApiError('misdirected_request', MISDIRECTED)
  const rec = ctx.deps.tracking
  const claims = rec.verify(ctx.params.token ?? '', kind)
  // The same answer for every bad token, so a forger learns nothing about which part was wrong.
  if (claims === undefined) throw new ApiError('not_found', 'This link is not valid.')
  // A domain's tracking host serves its own organisation's links only: no other customer's redirects under its name.
  if (host !== 'public' && host.org_id !== claims.o) throw new ApiError('misdirected_request', MISDIRECTED)
  return { rec, claims }
}

function requestOf (ctx: RequestContext): TrackingRequest {
  return { ip: ctx.ip, userAgent: ctx.headers.userAgent }
}

function escapeHtml (s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

const PAGE_HEAD = '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">' +
  '<meta name="robots" content="noindex">'
const PAGE_BODY = '<body style="font-family:sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem">'

/**
 * What the form of the confirmation page posts: the page's button, told apart from a mailbox provider's RFC 8058
 * one-click POST (`List-Unsubscribe=One-Click`, or any other body) so it can answer a page of its own.
 */
const CONFIRM_FIELD = 'confirm=page'

/**
 * The confirmation page of a GET: it unsubscribes nobody (mail scanners open every link of a message). The form
 * posts to the page's own URL (no `action`), so nothing of the request is written back into the page.
 */
function confirmPage (email: string): string {
  return `${PAGE_HEAD}<title>Unsubscribe</title></head>${PAGE_BODY}` +
    `<h1>Unsubscribe?</h1><p>Stop these emails to ${escapeHtml(email)}?</p>` +
    '<form method="post"><input type="hidden" name="confirm" value="page">' +
    '<button type="submit" style="font-size:1rem;padding:.5rem 1rem">Unsubscribe</button></form></body></html>'
}

function unsubscribedPage (email: string): string {
  return `${PAGE_HEAD}<title>Unsubscribed</title></head>${PAGE_BODY}` +
    `<h1>You are unsubscribed</h1><p>${escapeHtml(email)} will no longer receive these emails.</p></body></html>`
}

const tokenParam = 'Signed token from the message; a forged, altered or (open and click) expired one is 404 `not_found`. ' +
  'Metered per client address (`OB_TRACKING_RATE_LIMIT`, 429 `rate_limited` with `Retry-After` over it). Answered only on the ' +
  'host of OB_PUBLIC_URL (or an address) and on the verified tracking host of the link\'s organisation; any other `Host` is 421 ' +
  '`misdirected_request`. Query parameters other than the token are ignored: mail clients, link scanners and campaign tools ' +
  'append their own (`utm_source`, `fbclid`), and the link must keep working.'

/** What the body of an unsubscribe POST holds: the page's button, or RFC 8058's one-click field (not checked: see the handler). */
const OneClickForm = Type.Object({
  'List-Unsubscribe': Type.Optional(Type.Literal('One-Click', { description: 'RFC 8058 one-click, as mailbox providers send it' })),
  confirm: Type.Optional(Type.Literal('page', { description: 'The confirmation page\'s button' }))
})

export const trackingRoutes = [
  route({
    method: 'get',
    path: '/t/host',
    permission: null,
    unmetered: true,
    summary: 'Whether this installation serves a host name: for a reverse proxy that obtains certificates on demand',
    description: 'Answers an empty 200 when `domain` is the host of OB_PUBLIC_URL or the verified tracking host of a verified ' +
      'domain, and 421 `misdirected_request` otherwise (addresses and `localhost` included: no certificate is issued for ' +
      'them). Caddy\'s `on_demand_tls { ask … }` calls it so. Metered per client address as the tracking endpoints are.',
    tag: 'Tracking',
    query: Type.Object({ domain: Type.String({ minLength: 1, maxLength: 253, description: 'The host name a certificate is asked for' }) }),
    responses: {
      200: { description: 'Served: a certificate may be obtained for it' },
      400: { description: 'validation_error: domain missing or empty' },
      421: { description: 'misdirected_request' },
      429: { description: 'rate_limited' }
    },
    handler: async (ctx) => {
      await meter(ctx)
      const host = normalHost(ctx.query.get('domain') ?? '')
      if (!servesCertificateFor(ctx.deps.cp, ctx.deps.config.http.publicUrl, host)) throw new ApiError('misdirected_request', MISDIRECTED)
      return { status: 200, headers: NO_STORE }
    }
  }),
  route({
    method: 'get',
    path: '/t/o/:token',
    permission: null,
    unmetered: true,
    ignoreUnknownQuery: true,
    summary: 'Open-tracking pixel',
    description: `Answers a 1×1 transparent GIF and records an \`opened\` event. ${tokenParam}`,
    tag: 'Tracking',
    responses: {
      200: { description: 'image/gif, 43 bytes, Cache-Control: no-store' },
      404: { description: 'not_found' },
      421: { description: 'misdirected_request' },
      429: { description: 'rate_limited' }
    },
    handler: async (ctx) => {
      const { rec, claims } = await claimsOf(ctx, 'o')
      // The reader sees the image at once whatever happens to the event; a lost open is better than a broken image.
      await rec.opened(claims, requestOf(ctx), (err) => ctx.deps.log.warn({ err, message_id: claims.m }, 'open event not recorded'))
      return { status: 200, headers: NO_STORE, raw: { contentType: 'image/gif', data: PIXEL_GIF } }
    }
  }),
  route({
    method: 'get',
    path: '/t/c/:token',
    permission: null,
    unmetered: true,
    ignoreUnknownQuery: true,
    summary: 'Click-tracking redirect',
    description: `Redirects (302) to the original URL and records a \`clicked\` event. ${tokenParam}`,
    tag: 'Tracking',
    responses: {
      302: { description: 'Location: the original URL' },
      404: { description: 'not_found' },
      421: { description: 'misdirected_request' },
      429: { description: 'rate_limited' }
    },
    handler: async (ctx) => {
      const { rec, claims } = await claimsOf(ctx, 'c')
      await rec.clicked(claims, requestOf(ctx), (err) => ctx.deps.log.warn({ err, message_id: claims.m }, 'click event not recorded'))
      return { status: 302, headers: { ...NO_STORE, Location: claims.u! } }
    }
  }),
  route({
    method: 'get',
    path: '/t/u/:token',
    permission: null,
    unmetered: true,
    ignoreUnknownQuery: true,
    summary: 'Unsubscribe link: a confirmation page',
    description: 'Answers a page asking to confirm, with a button that POSTs to the same URL; opening the link (as mail scanners ' +
      `do) unsubscribes nobody and records nothing. ${tokenParam}`,
    tag: 'Tracking',
    responses: {
      200: { description: 'text/html confirmation page with a form' },
      404: { description: 'not_found' },
      421: { description: 'misdirected_request' },
      429: { description: 'rate_limited' }
    },
    handler: async (ctx) => {
      const { claims } = await claimsOf(ctx, 'u')
      return { status: 200, headers: PAGE_HEADERS, raw: { contentType: 'text/html; charset=utf-8', data: confirmPage(claims.r) } }
    }
  }),
  route({
    method: 'post',
    path: '/t/u/:token',
    permission: null,
    unmetered: true,
    ignoreUnknownQuery: true,
    summary: 'Unsubscribe: the confirmation page\'s button, or the RFC 8058 one-click POST',
    description: 'Suppresses the recipient for the sending organisation. The confirmation page\'s button (form field `confirm=page`) ' +
      'records `unsubscribed` with method `link` and answers a page saying so; any other POST, as mailbox providers send ' +
      `\`List-Unsubscribe=One-Click\` (form-encoded or multipart), records method \`one-click\` and answers an empty 200. ${tokenParam}`,
    tag: 'Tracking',
    bodyDoc: {
      'application/x-www-form-urlencoded': OneClickForm,
      'multipart/form-data': OneClickForm
    },
    responses: {
      200: { description: 'Unsubscribed: a text/html page for the page\'s button, else an empty body' },
      404: { description: 'not_found' },
      421: { description: 'misdirected_request' },
      429: { description: 'rate_limited' },
      503: { description: 'service_unavailable: try again' }
    },
    handler: async (ctx) => {
      // The one-click body is not checked: the signed token is the authority, and some providers send it as
      // multipart. There is no JSON body schema on this route, so the raw body is left alone.
      const { rec, claims } = await claimsOf(ctx, 'u')
      const fromPage = ctx.rawBody.length <= 64 && ctx.rawBody.toString('latin1').split('&').includes(CONFIRM_FIELD)
      await unsubscribe(ctx, rec, claims, fromPage ? 'link' : 'one-click')
      if (!fromPage) return { status: 200, headers: NO_STORE }
      return { status: 200, headers: PAGE_HEADERS, raw: { contentType: 'text/html; charset=utf-8', data: unsubscribedPage(claims.r) } }
    }
  })
]

async function unsubscribe (ctx: RequestContext, rec: TrackingRecorder, claims: TokenClaims, method: 'link' | 'one-click'): Promise<void> {
  try {
    if (await rec.unsubscribed(claims, method)) ctx.deps.metrics.suppressionsAdded.unsubscribe.inc()
  } catch (err) {
    ctx.deps.log.error({ err, message_id: claims.m }, 'unsubscribe not recorded')
    throw new ApiError('service_unavailable', 'The unsubscription could not be recorded; please try again.', { retryAfter: 5, cause: err })
  }
}
