import { randomBytes } from 'node:crypto'
import type { EgressGates } from './egress_types.ts'
import { openPoolSocket, type GetSocket, type GetSocketCallback, type GetSocketOptions } from './pool_socket.ts'

/** A connection a lane cannot open now: every connection the lane may have is open somewhere in the cluster. */
export class EgressBusyError extends Error {
  readonly code = 'egress_busy'
  constructor (readonly lane: string) {
    super(`every connection of egress lane ${lane} is in use`)
    this.name = 'EgressBusyError'
  }
}

/**
 * How long a connection's hold on its lane lasts without renewal, by default (OB_EGRESS_CONNECTION_HOLD_MS): a killed
 * engine's connections free their slots by then. Renewed every third of it, so two renewals may fail in a row.
 */
export const HOLD_TTL_MS = 60_000

/**
 * The sockets of egress lanes, opened for nodemailer's pools through their `getSocket` hook. Each socket holds one
 * of its lane's connection slots, counted in Redis across every thread of every engine, for as long as it is open:
 * the slot is taken before the socket is opened and given back when it closes, and held slots are renewed while
 * open, so a lane's connections stay at its limit cluster-wide and a killed engine's slots lapse after `holdMs`.
 * A pool that cannot get a slot fails that send with EgressBusyError, which the deliverer turns into a wait.
 * The socket is bound to the source's address, so the slot, the address and the connection are one thing.
 */
export class LaneSockets {
  private readonly held = new Map<string, { lane: string, holder: string }>()
  private readonly renewer: NodeJS.Timeout

  constructor (private readonly gates: EgressGates, private readonly holdMs: number = HOLD_TTL_MS) {
    this.renewer = setInterval(() => { void this.renew() }, holdMs / 3)
    this.renewer.unref()
  }

  /** The hook for one pool: connections to its host from `localAddress` that hold slots of `lane` (at most `max`). */
  hook (lane: string, max: number, localAddress: string | undefined, family: 4 | 6): GetSocket {
    return (options, callback) => { void this.open(lane, max, localAddress, family, options, callback) }
  }

  private async open (lane: string, max: number, localAddress: string | undefined, family: 4 | 6, options: GetSocketOptions,
    callback: GetSocketCallback): Promise<void> {
    const holder = randomBytes(9).toString('base64url')
    if (!(await this.gates.acquireConnection(lane, holder, max, this.holdMs))) { callback(new EgressBusyError(lane)); return }
    this.held.set(holder, { lane, holder })
    const release = (): void => {
      if (!this.held.delete(holder)) return
      void this.gates.releaseConnection(lane, holder)
    }
    const socket = openPoolSocket({
      host: options.host ?? '', port: Number(options.port ?? 25), family, ...(localAddress !== undefined ? { localAddress } : {})
    }, options.host ?? '?', callback, release)
    socket.once('close', release)
  }

  private async renew (): Promise<void> {
    if (this.held.size === 0) return
    await this.gates.renewConnections([...this.held.values()], this.holdMs).catch(() => {})
  }

  /** Stops renewing; the pools' own close ends the sockets, which gives their slots back. */
  close (): void {
    clearInterval(this.renewer)
  }
}
