import uWS from 'uWebSockets.js'
import type { Subscription } from '@nats-io/transport-node'
import { ApiError, envelopeOf, eventSubject, isSuspended, type EventRecord, type OrgRecord } from '../../protocol/mod.ts'
import { authenticate, hasPermission } from '../auth.ts'
import type { GatewayDeps } from '../deps.ts'
import { SocketCounter } from './socket_caps.ts'
import { isEnvironment, refuseEnvironment, refuseUpgrade, type Environment } from './upgrade_refusals.ts'
import { applyFilter } from './stream_filter.ts'
import {
  AUTH_TIMEOUT_MS, CLOSE_CODES, IDLE_TIMEOUT_S, MAX_BUFFERED_BYTES, MAX_CLIENT_MESSAGE_BYTES, send, SUSPENDED, type Socket, type SocketState
} from './stream_socket.ts'

export const EVENT_STREAM_PATH = '/v1/events/stream'
export { CLOSE_CODES }

interface OrgFeed { sub: Subscription, sockets: Set<Socket> }

export interface EventStream {
  readonly sockets: number
  /** Closes every socket with 1001 and refuses new ones. */
  close: () => void
}

/**
 * GET /v1/events/stream: the organisation's events as webhook envelopes, live, of one environment (`live` unless
 * `?environment=test` or a filter message asks for sandbox events). One NATS core subscription
 * on `ob.evt.<org>.>` per organisation is shared by all of its sockets and dropped with the last one.
 * Open sockets are capped per client address (checked at the upgrade, authenticated or not) and per API key
 * (checked at `auth`), so one client cannot hold the process's memory and file descriptors.
 */
export function registerEventStream (app: uWS.TemplatedApp, deps: GatewayDeps): EventStream {
  const log = deps.log.child({ part: 'event_stream' })
  const feeds = new Map<string, OrgFeed>()
  const all = new Set<Socket>()
  const perAddress = new SocketCounter(deps.config.eventStream.maxPerAddress)
  const perKey = new SocketCounter(deps.config.eventStream.maxPerKey)
  /** key id → its authenticated sockets, so a revocation closes them as soon as the control plane shows it. */
  const byKey = new Map<string, Set<Socket>>()
  let stopped = false

  /** The longest delay setTimeout honours (about 24.8 days); a later expiry is looked at again then. */
  const MAX_TIMER_MS = 2 ** 31 - 1

  /** Closes the socket if its key is revoked or expired; otherwise arms a timer for the key's expiry, if any. */
  function enforceKey (ws: Socket, st: SocketState, now: number): void {
    clearTimeout(st.expiry)
    st.expiry = undefined
    if (!keyStillValid(st, now)) { ws.end(CLOSE_CODES.unauthorized, 'the API key is no longer valid'); return }
    const expiresAt = deps.cp.apiKeys.get(st.keyId!)?.expires_at
    if (expiresAt === undefined) return
    const delayMs = Math.min(MAX_TIMER_MS, Math.max(0, Date.parse(expiresAt) - now) + 10)
    st.expiry = setTimeout(() => { if (st.open) enforceKey(ws, st, Date.now()) }, delayMs)
    st.expiry.unref()
  }

  const stopWatchingKeys = deps.cp.apiKeys.onChange((id, record) => {
    const sockets = byKey.get(record?.id ?? id)
    if (sockets === undefined) return
    const now = Date.now()
    for (const ws of [...sockets]) enforceKey(ws, ws.getUserData(), now)
  })

  /** A suspended organisation's sockets close with 4403 as soon as the control plane shows it; a deleted one's with 4401. */
  const stopWatchingOrgs = deps.cp.orgs.onChange((id, record) => {
    if (record !== undefined && !isSuspended(record)) return
    for (const ws of [...(feeds.get(id)?.sockets ?? [])]) endForOrg(ws, record)
  })

  function endForOrg (ws: Socket, org: OrgRecord | undefined): void {
    if (org === undefined) ws.end(CLOSE_CODES.unauthorized, 'the API key is no longer valid')
    else ws.end(CLOSE_CODES.forbidden, SUSPENDED)
  }

  function keyStillValid (st: SocketState, now: number): boolean {
    const key = deps.cp.apiKeys.get(st.keyId!)
    return key !== undefined && key.revoked_at === undefined && (key.expires_at === undefined || Date.parse(key.expires_at) > now)
  }

  function fanOut (feed: OrgFeed, data: string): void {
    let e: EventRecord
    try { e = JSON.parse(data) as EventRecord } catch { return }
    const text = JSON.stringify(envelopeOf(e))
    const env: Environment = e.environment === 'test' ? 'test' : 'live'
    const now = Date.now()
    for (const ws of feed.sockets) {
      const st = ws.getUserData()
      if (st.environment !== env) continue
      if (st.types !== undefined && !st.types.has(e.type)) continue
      // as `GET /v1/events?stream=` keeps them: by the stream the event names
      if (st.stream !== undefined && e.data?.stream !== st.stream) continue
      if (!keyStillValid(st, now)) { ws.end(CLOSE_CODES.unauthorized, 'the API key is no longer valid'); continue }
      const org = deps.cp.orgs.get(st.orgId!)
      if (org === undefined || isSuspended(org)) { endForOrg(ws, org); continue }
      if (ws.getBufferedAmount() > MAX_BUFFERED_BYTES) { ws.end(CLOSE_CODES.tooSlow, 'reading too slowly'); continue }
      let status = 1
      ws.cork(() => { status = ws.send(text) })
      if (status === 2) ws.end(CLOSE_CODES.tooSlow, 'reading too slowly')
    }
  }

  function join (ws: Socket, orgId: string): void {
    let feed = feeds.get(orgId)
    if (feed === undefined) {
      const sockets = new Set<Socket>()
      const sub = deps.nc.subscribe(eventSubject(orgId, '>'), { callback: (err, m) => { if (err === null) fanOut(feed!, m.string()) } })
      feeds.set(orgId, feed = { sub, sockets })
    }
    feed.sockets.add(ws)
  }

  function leave (ws: Socket, orgId: string): void {
    const feed = feeds.get(orgId)
    if (feed === undefined) return
    feed.sockets.delete(ws)
    if (feed.sockets.size === 0) {
      feed.sub.unsubscribe()
      feeds.delete(orgId)
    }
  }

  function onAuth (ws: Socket, st: SocketState, key: unknown): void {
    const now = Date.now()
    const authorization = typeof key === 'string' ? `Bearer ${key}` : ''
    let auth
    try {
      auth = authenticate(deps.cp, authorization, now)
    } catch (err) {
      if (!(err instanceof ApiError)) throw err
      if (err.code === 'organization_suspended') { ws.end(CLOSE_CODES.forbidden, SUSPENDED); return }
      st.refusing = true
      deps.security.authFailed({ transport: 'websocket', address: st.ip, credential: authorization, reason: err.message })
      void deps.authGuard.refusal(err, st.ip, authorization, now).catch((e: unknown) => e).then((refusal) => {
        if (!st.open) return
        if (refusal instanceof ApiError && refusal.code === 'rate_limited') {
          ws.end(CLOSE_CODES.rateLimited, 'too many failed authentications')
        } else {
          ws.end(CLOSE_CODES.unauthorized, err.message.slice(0, 100))
        }
      })
      return
    }
    if (!hasPermission(auth.key, 'read')) {
      ws.end(CLOSE_CODES.forbidden, 'this API key lacks the "read" permission')
      return
    }
    if (perKey.full(auth.key.id)) {
      ws.end(CLOSE_CODES.rateLimited, `too many event stream connections for this API key (at most ${perKey.max})`)
      return
    }
    clearTimeout(st.timer)
    perKey.add(auth.key.id)
    st.orgId = auth.org.id
    st.keyId = auth.key.id
    let sockets = byKey.get(st.keyId)
    if (sockets === undefined) byKey.set(st.keyId, sockets = new Set())
    sockets.add(ws)
    enforceKey(ws, st, now)
    join(ws, st.orgId)
    send(ws, { type: 'ready', organization_id: st.orgId })
  }

  app.ws<SocketState>(EVENT_STREAM_PATH, {
    maxPayloadLength: MAX_CLIENT_MESSAGE_BYTES,
    idleTimeout: IDLE_TIMEOUT_S,
    sendPingsAutomatically: true,
    // uWS's own cap sits above ours, so our check (close with 1013) acts before uWS would drop messages silently.
    maxBackpressure: 2 * MAX_BUFFERED_BYTES,
    upgrade: (res, req, context) => {
      if (stopped) {
        res.cork(() => { res.writeStatus('503 Service Unavailable').end() })
        return
      }
      const ip = deps.clientAddresses.of(
        Buffer.from(res.getRemoteAddressAsText()).toString(),
        deps.clientAddresses.readsForwardedFor ? req.getHeader('x-forwarded-for') : ''
      )
      if (perAddress.full(ip)) {
        refuseUpgrade(res, perAddress.max)
        return
      }
      const environment = req.getQuery('environment') ?? 'live'
      if (!isEnvironment(environment)) {
        refuseEnvironment(res)
        return
      }
      res.upgrade<SocketState>(
        { ip, open: true, environment },
        req.getHeader('sec-websocket-key'), req.getHeader('sec-websocket-protocol'), req.getHeader('sec-websocket-extensions'),
        context
      )
    },
    open: (ws) => {
      const st = ws.getUserData()
      all.add(ws)
      // Counted from here, where `close` is sure to follow; a socket that slipped past the upgrade check is closed.
      st.countedForAddress = true
      if (perAddress.add(st.ip) > perAddress.max) {
        ws.end(CLOSE_CODES.rateLimited, `too many event stream connections from this address (at most ${perAddress.max})`)
        return
      }
      st.timer = setTimeout(() => {
        if (st.open && st.orgId === undefined) ws.end(CLOSE_CODES.unauthorized, 'authenticate within 5 seconds')
      }, AUTH_TIMEOUT_MS)
      st.timer.unref()
    },
    message: (ws, raw) => {
      const st = ws.getUserData()
      if (st.refusing === true) return
      let msg: { type?: unknown, key?: unknown, types?: unknown, environment?: unknown, stream?: unknown }
      try {
        msg = JSON.parse(Buffer.from(raw).toString('utf8')) as typeof msg
        if (typeof msg !== 'object' || msg === null) throw new TypeError('not an object')
      } catch {
        if (st.orgId === undefined) ws.end(CLOSE_CODES.unauthorized, 'the first message must be {"type":"auth","key":"ob_…"}')
        else send(ws, { type: 'error', code: 'validation_error', field: 'body', message: 'messages must be JSON objects' })
        return
      }
      if (st.orgId === undefined) {
        if (msg.type === 'auth') onAuth(ws, st, msg.key)
        else ws.end(CLOSE_CODES.unauthorized, 'the first message must be {"type":"auth","key":"ob_…"}')
        return
      }
      if (msg.type === 'filter') send(ws, applyFilter(st, msg, (id) => deps.cp.streams.exists(st.orgId!, id)))
      else send(ws, { type: 'error', code: 'validation_error', field: 'type', message: 'expected "filter"' })
    },
    close: (ws) => {
      const st = ws.getUserData()
      st.open = false
      clearTimeout(st.timer)
      clearTimeout(st.expiry)
      all.delete(ws)
      if (st.countedForAddress === true) perAddress.remove(st.ip)
      if (st.keyId !== undefined) {
        perKey.remove(st.keyId)
        const sockets = byKey.get(st.keyId)
        sockets?.delete(ws)
        if (sockets?.size === 0) byKey.delete(st.keyId)
      }
      if (st.orgId !== undefined) leave(ws, st.orgId)
    }
  })

  deps.metrics.read('outbox_event_stream_sockets', (set) => { set(all.size) })
  log.debug({ path: EVENT_STREAM_PATH }, 'event stream registered')
  return {
    get sockets () { return all.size },
    close () {
      stopped = true
      stopWatchingKeys()
      stopWatchingOrgs()
      for (const ws of [...all]) ws.end(CLOSE_CODES.goingAway, 'server shutting down')
    }
  }
}
