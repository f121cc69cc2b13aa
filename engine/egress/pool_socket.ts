import { connect, type NetConnectOpts, type Socket } from 'node:net'

/** What nodemailer's `getSocket` hook is given and answers (its proxy extension point). */
export type GetSocketOptions = { host?: string, port?: number | string }
export type GetSocketCallback = (err: Error | null, socketOptions?: { connection: Socket } | false) => void
export type GetSocket = (options: GetSocketOptions, callback: GetSocketCallback) => void

const CONNECT_TIMEOUT_MS = 30_000

/**
 * Opens a pool's socket as nodemailer would and hands it to `callback` once connected; nodemailer then speaks SMTP
 * on it, and upgrades it to TLS itself for an implicit-TLS (`secure`) destination. A connection that fails, or is not
 * made within 30 s, is reported as nodemailer reports its own: `ESOCKET` (or `ETIMEDOUT`) with the system's code
 * beside it, so classification reads both paths alike. `onFailed` runs first (a lane gives its slot back).
 */
export function openPoolSocket (
  opts: NetConnectOpts, host: string, callback: GetSocketCallback, onFailed?: () => void
): Socket {
  const socket = connect(opts)
  const timer = setTimeout(() => {
    socket.destroy(Object.assign(new Error(`connection to ${host} timed out`), { code: 'ETIMEDOUT' }))
  }, CONNECT_TIMEOUT_MS)
  const failed = (err: NodeJS.ErrnoException): void => {
    clearTimeout(timer)
    onFailed?.()
    callback(err.code === 'ETIMEDOUT' ? err : Object.assign(err, { code: 'ESOCKET', originalCode: err.code, command: 'CONN' }))
  }
  socket.once('error', failed)
  socket.once('connect', () => { clearTimeout(timer); socket.removeListener('error', failed); callback(null, { connection: socket }) })
  return socket
}
