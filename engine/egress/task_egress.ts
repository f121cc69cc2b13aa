import type { LimitOverrides, WarmupStep } from './egress_types.ts'

/**
 * The egress part of a delivery task: the sources of the message's pool as plain data (it crosses into the shard's
 * thread), resolved by the main thread from the operator's configuration when the attempt is made, not when the
 * message was sent. So a source removed from a pool, or a pool assigned anew, takes effect for mail already queued.
 */
export interface TaskEgress {
  pool: string
  /** At least one; the `default` pool without sources is the host's own address (HOST_SOURCE). */
  sources: readonly TaskSource[]
  /** The operator's limit overrides per provider (`default` for sites). */
  limits: LimitOverrides
}

export interface TaskSource {
  name: string
  /** The local address connections are bound to; none for the host's own address. */
  address?: string
  /** The EHLO name said on its connections; none: the host's name, as nodemailer picks it. */
  ehlo?: string
  weight: number
  family: 4 | 6
  /** The operator's limit overrides for this source only, per provider, over `TaskEgress.limits`. */
  limits?: LimitOverrides
  /** Warm-up in progress: its start (ms) and its own curve, if not the default one. */
  warmup?: { startedAtMs: number, steps?: readonly WarmupStep[] }
}

/** The source of an installation without egress sources: the host's own address and name. */
export const HOST_SOURCE: TaskSource = Object.freeze({ name: 'host', weight: 1, family: 4 })

/** The egress of the `default` pool when the operator gave it no sources: nothing changes for a single-address host. */
export const HOST_EGRESS: TaskEgress = Object.freeze({ pool: 'default', sources: Object.freeze([HOST_SOURCE]), limits: Object.freeze({}) })

/** The lane of a source toward a provider: where limits, warm-up counts and throttling are kept. */
export { laneId as laneOf } from '../../stores/egress/mod.ts'
