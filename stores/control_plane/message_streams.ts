import {
  ApiError, MAX_BROADCAST_STREAMS, TRANSACTIONAL_STREAM, isStreamId, type StreamRecord
} from '../../protocol/mod.ts'
import { KvConflictError, type KvMirror } from './kv_mirror.ts'

/** What a broadcast stream's creator or editor sets. */
export interface StreamFields { name?: string, description?: string | null }

/**
 * The one writer of broadcast stream records (`ob_streams`, keyed `<org_id>.<stream_id>`). The transactional stream
 * is never stored: every organisation has it, and nothing about it can be changed.
 */
export class MessageStreams {
  constructor (readonly mirror: KvMirror<StreamRecord>) {}

  /** Whether the organisation may send on the stream: `transactional`, or one of its broadcast streams. */
  exists (orgId: string, id: string): boolean {
    return id === TRANSACTIONAL_STREAM || (isStreamId(id) && this.mirror.get(`${orgId}.${id}`) !== undefined)
  }

  get (orgId: string, id: string): StreamRecord | undefined {
    return isStreamId(id) ? this.mirror.get(`${orgId}.${id}`) : undefined
  }

  /** The organisation's broadcast streams in id order (its own group of the mirror: no other organisation's is read). */
  list (orgId: string): StreamRecord[] {
    return this.mirror.allBy('org', orgId).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  }

  async create (orgId: string, id: string, fields: { name: string, description?: string }, now = new Date()): Promise<StreamRecord> {
    if (id === TRANSACTIONAL_STREAM) throw new ApiError('conflict', 'Every organisation has the transactional stream already.')
    if (this.list(orgId).length >= MAX_BROADCAST_STREAMS) {
      throw new ApiError('unprocessable', `An organisation has at most ${MAX_BROADCAST_STREAMS} broadcast streams.`)
    }
    const at = now.toISOString()
    const record: StreamRecord = {
      id,
      org_id: orgId,
      type: 'broadcast',
      name: fields.name,
      ...(fields.description !== undefined ? { description: fields.description } : {}),
      created_at: at,
      updated_at: at
    }
    try {
      await this.mirror.create(`${orgId}.${id}`, record)
    } catch (err) {
      if (!(err instanceof KvConflictError)) throw err
      throw new ApiError('conflict', `The organisation has a stream ${id} already.`, { cause: err })
    }
    return record
  }

  /** Every organisation's broadcast streams assigned to the pool (the refusal to delete a pool in use names them). */
  withEgressPool (pool: string): StreamRecord[] {
    return this.mirror.list().filter((s) => s.egress_pool === pool)
  }

  /**
   * The egress pool its mail leaves from (undefined: its domain's or organisation's applies); EgressConfig checks the
   * pool and calls this. Undefined when the organisation has no such broadcast stream.
   */
  async setEgressPool (orgId: string, id: string, pool: string | undefined, now = new Date()): Promise<StreamRecord | undefined> {
    if (!isStreamId(id)) return undefined
    return await this.mirror.modify(`${orgId}.${id}`, (cur) => {
      if (cur.egress_pool === pool) return undefined
      const { egress_pool: _old, ...rest } = cur
      const next: StreamRecord = { ...rest, updated_at: now.toISOString() }
      return pool === undefined ? next : { ...next, egress_pool: pool }
    })
  }

  /** The record after the change; undefined when the organisation has no such broadcast stream. */
  async update (orgId: string, id: string, fields: StreamFields, now = new Date()): Promise<StreamRecord | undefined> {
    if (!isStreamId(id)) return undefined
    return await this.mirror.modify(`${orgId}.${id}`, (cur) => {
      const next: StreamRecord = { ...cur, updated_at: now.toISOString() }
      if (fields.name !== undefined) next.name = fields.name
      if (fields.description === null) delete next.description
      else if (fields.description !== undefined) next.description = fields.description
      return next
    })
  }

  /**
   * Removes the stream, its egress pool assignment with it: later sends naming it are refused (422 `stream_not_found`);
   * mail already queued on it is delivered as queued, since it carries its stream, from its domain's or organisation's
   * pool. False when the organisation had no such stream.
   */
  async remove (orgId: string, id: string): Promise<boolean> {
    if (this.get(orgId, id) === undefined) return false
    await this.mirror.delete(`${orgId}.${id}`)
    return true
  }
}
