/** The live event feed's sockets: their state, limits and close codes (docs/reading.md). */
import type uWS from 'uWebSockets.js'
import type { Environment } from './upgrade_refusals.ts'

/** Close codes of the live feed, as documented in docs/reading.md. */
export const CLOSE_CODES = {
  goingAway: 1001,
  badMessage: 1008,
  tooSlow: 1013,
  unauthorized: 4401,
  forbidden: 4403,
  rateLimited: 4429
} as const

export const AUTH_TIMEOUT_MS = 5000 // 5 s for the first message
/**
 * A socket whose unsent backlog passes this is closed with 1013 rather than buffered further: one slow
 * reader must not grow the gateway's memory. 1 MiB is several thousand events.
 */
export const MAX_BUFFERED_BYTES = 1024 * 1024
export const MAX_CLIENT_MESSAGE_BYTES = 4096
export const IDLE_TIMEOUT_S = 60 // pings keep a healthy socket alive
export const SUSPENDED = 'the organisation is suspended'

export interface SocketState {
  ip: string
  open: boolean
  /** A failed authentication is being counted; the socket closes once it is, and reads nothing more meanwhile. */
  refusing?: boolean
  /** Set once the socket counts toward its address's cap (from `open` to `close`). */
  countedForAddress?: boolean
  orgId?: string
  keyId?: string
  /** Event types to forward; undefined: all. */
  types?: Set<string>
  /** A message stream's id: only events whose `data.stream` is it are forwarded; undefined: every event. */
  stream?: string
  /** Live or sandbox events: the socket forwards one environment's (`live` unless asked). */
  environment: Environment
  timer?: NodeJS.Timeout
  /** Closes the socket when its key's grace period (after a rotation) ends. */
  expiry?: NodeJS.Timeout
}
export type Socket = uWS.WebSocket<SocketState>

export function send (ws: Socket, payload: Record<string, unknown>): void {
  ws.cork(() => { ws.send(JSON.stringify(payload)) })
}
