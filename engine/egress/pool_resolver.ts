import { isIP } from 'node:net'
import { DEFAULT_POOL, IMPLICIT_DEFAULT_POOL, egressPoolOf, type EgressSourceRecord } from '../../protocol/mod.ts'
import type { DomainRecord, OrgRecord, StreamRecord } from '../../protocol/mod.ts'
import type { ControlPlane } from '../../stores/control_plane/mod.ts'
import { HOST_EGRESS, HOST_SOURCE, type TaskEgress, type TaskSource } from './task_egress.ts'

/**
 * The egress of a message's attempt, from the operator's configuration as it is now (the mirror of the egress
 * bucket): the pool of the message's stream (else of the sending domain, else of its organisation, else `default`)
 * with its sources as plain data.
 * Made once per pool and kept until the configuration changes, so an attempt costs a map look-up. A pool whose
 * sources were all removed sends from the host's own address rather than not at all.
 */
export class PoolResolver {
  private readonly byPool = new Map<string, TaskEgress>()
  private readonly stop: () => void

  constructor (private readonly cp: ControlPlane) {
    this.stop = cp.egress.onChange(() => { this.byPool.clear() })
  }

  of (
    org: Pick<OrgRecord, 'egress_pool'> | undefined, domain: Pick<DomainRecord, 'egress_pool'>,
    stream: Pick<StreamRecord, 'egress_pool'> | undefined
  ): TaskEgress {
    const name = egressPoolOf(org ?? {}, domain, stream ?? {})
    let egress = this.byPool.get(name)
    if (egress === undefined) {
      egress = this.resolve(name)
      this.byPool.set(name, egress)
    }
    return egress
  }

  private resolve (name: string): TaskEgress {
    const pool = this.cp.egress.pool(name) ?? (name === DEFAULT_POOL ? IMPLICIT_DEFAULT_POOL : undefined)
    // An assignment naming a pool deleted meanwhile (two operators racing): its mail leaves as the default pool's.
    if (pool === undefined) return this.resolve(DEFAULT_POOL)
    const limits = this.cp.egress.settings().limits ?? {}
    const sources: TaskSource[] = []
    for (const m of pool.sources) {
      const s = this.cp.egress.source(m.source)
      if (s !== undefined) sources.push(taskSource(s, m.weight))
    }
    if (sources.length > 0) return { pool: name, sources, limits }
    return Object.keys(limits).length === 0 && name === DEFAULT_POOL ? HOST_EGRESS : { pool: name, sources: [HOST_SOURCE], limits }
  }

  close (): void {
    this.stop()
  }
}

function taskSource (s: EgressSourceRecord, weight: number): TaskSource {
  const warmup = s.warmup === undefined
    ? undefined
    : { startedAtMs: Date.parse(s.warmup.started_at), ...(s.warmup.steps !== undefined ? { steps: s.warmup.steps } : {}) }
  return {
    name: s.name,
    address: s.address,
    ehlo: s.ehlo,
    weight,
    family: isIP(s.address) === 6 ? 6 : 4,
    ...(s.limits !== undefined && Object.keys(s.limits).length > 0 ? { limits: s.limits } : {}),
    ...(warmup !== undefined ? { warmup } : {})
  }
}
