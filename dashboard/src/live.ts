/** A webhook envelope as the live feed sends it. */
export interface LiveEvent { id: string, type: string, timestamp: string, data: Record<string, unknown> }

type Listener = (e: LiveEvent) => void
type StateListener = (state: 'connecting' | 'live' | 'closed', detail?: string) => void

/**
 * The live feed (GET /v1/events/stream). Browsers cannot set headers on a WebSocket, so the key goes in the
 * first message. Reconnects with backoff, except after 4401/4403 (the key is no longer good for it). It carries one
 * environment's events (live unless `setEnvironment('test')`), as the API's default views do.
 */
export class LiveFeed {
  readonly #listeners = new Set<Listener>()
  readonly #stateListeners = new Set<StateListener>()
  #ws: WebSocket | undefined
  #retryMs = 1000
  #stopped = false
  #timer: number | undefined
  #environment: 'live' | 'test' = 'live'
  /** A filter was sent and not acknowledged yet: events still in flight may be of the other environment. */
  #switching = false

  constructor (private readonly key: string) {}

  start (): void { this.#stopped = false; this.#connect() }

  stop (): void {
    this.#stopped = true
    clearTimeout(this.#timer)
    this.#ws?.close(1000)
  }

  on (fn: Listener): () => void { this.#listeners.add(fn); return () => this.#listeners.delete(fn) }
  onState (fn: StateListener): () => void { this.#stateListeners.add(fn); fn(this.state); return () => this.#stateListeners.delete(fn) }

  state: 'connecting' | 'live' | 'closed' = 'closed'

  /** Which traffic the feed carries from now on (kept across reconnects). */
  setEnvironment (env: 'live' | 'test'): void {
    if (env === this.#environment) return
    this.#environment = env
    if (this.state === 'live') this.#sendFilter()
  }

  #sendFilter (): void {
    this.#switching = true
    this.#ws?.send(JSON.stringify({ type: 'filter', environment: this.#environment }))
  }

  #state (s: 'connecting' | 'live' | 'closed', detail?: string): void {
    this.state = s
    for (const fn of this.#stateListeners) fn(s, detail)
  }

  #connect (): void {
    this.#state('connecting')
    const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/v1/events/stream`)
    this.#ws = ws
    ws.onopen = () => { ws.send(JSON.stringify({ type: 'auth', key: this.key })) }
    ws.onmessage = (m) => {
      let msg: Record<string, unknown>
      try { msg = JSON.parse(String(m.data)) } catch { return }
      if (msg.type === 'ready') {
        this.#retryMs = 1000
        this.#switching = false
        if (this.#environment !== 'live') this.#sendFilter()
        this.#state('live')
        return
      }
      if (msg.type === 'filter') { this.#switching = msg.environment !== this.#environment; return }
      if (this.#switching) return
      if (typeof msg.id === 'string' && typeof msg.timestamp === 'string') {
        for (const fn of this.#listeners) fn(msg as unknown as LiveEvent)
      }
    }
    ws.onclose = (c) => {
      if (this.#ws !== ws) return
      this.#state('closed', c.reason)
      if (this.#stopped || c.code === 4401 || c.code === 4403) return
      this.#timer = window.setTimeout(() => this.#connect(), this.#retryMs)
      this.#retryMs = Math.min(this.#retryMs * 2, 30_000)
    }
  }
}
