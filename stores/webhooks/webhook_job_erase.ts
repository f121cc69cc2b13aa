import {
  JetStreamApiCodes, JetStreamApiError, jetstream, jetstreamManager, type JetStreamManager, type MsgRequest
} from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import { STREAM_WEBHOOK_JOBS, shardOf, webhookJobSubject } from '../../protocol/mod.ts'
import { deleteIfStored } from '../clients/mod.ts'
import { isJobRef, storedEventId, webhookJobMsgId, type StoredWebhookJob } from './webhook_jobs.ts'
import { publishWebhookJobBatch, webhookJobsOf } from './webhook_job_batch.ts'

/**
 * Erasing an address from OB_WEBHOOK_JOBS (POST /v1/privacy/erase): the attempts still waiting to be made for events
 * that name it. The stream has no index by address or organisation, but each webhook has its own subject
 * (`ob.whjob.<shard>.<webhook_id>`), so this reads the subjects of the organisation's own webhooks only, message by
 * message, and never another organisation's jobs. A job goes when its event is one of the erased events (a job that
 * names its event by id) or when the event it carries names the address. A message that holds jobs of other events
 * too (a batch of parked work) is stored again without the erased ones before it is deleted, so those attempts are
 * still made. Deletes are by sequence: the server overwrites the deleted message's bytes.
 */

const dec = new TextDecoder()

/** Whether the job is owed for an erased event: named by id, or carrying an event whose JSON names the address. */
function erasedJob (job: StoredWebhookJob, orgId: string, address: string, eventIds: ReadonlySet<string>): boolean {
  if (job.org_id !== orgId) return false
  if (eventIds.has(storedEventId(job))) return true
  return !isJobRef(job) && JSON.stringify(job.event).toLowerCase().includes(address)
}

/** How many messages the stream holds on the subject; 0 when the stream does not exist yet. */
async function storedOn (jsm: JetStreamManager, subject: string): Promise<number> {
  try {
    const info = await jsm.streams.info(STREAM_WEBHOOK_JOBS, { subjects_filter: subject })
    return info.state.subjects?.[subject] ?? 0
  } catch (err) {
    if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound) return 0
    throw err
  }
}

/**
 * Removes the waiting webhook jobs of the organisation's webhooks (`webhookIds`, all of the organisation) that are
 * owed for one of the erased events (`eventIds`) or carry an event naming `address` (bare, lower-cased). `shards`: the
 * engine's shard count, which places each webhook's subject. Resolves with how many jobs were removed.
 */
export async function eraseWebhookJobs (
  nc: NatsConnection, shards: number, orgId: string, webhookIds: readonly string[], address: string, eventIds: ReadonlySet<string>
): Promise<number> {
  const jsm = await jetstreamManager(nc)
  const js = jetstream(nc)
  let removed = 0
  for (const webhookId of webhookIds) {
    const subject = webhookJobSubject(shardOf(webhookId, shards), webhookId)
    if (await storedOn(jsm, subject) === 0) continue
    let seq = 1
    for (;;) {
      // STREAM.MSG.GET takes `next_by_subj` (nats-server 2.9); the client's type lists it for direct gets only, which
      // this work queue does not allow, and a consumer of its own would overlap the engine's on the subject
      const next = { seq, next_by_subj: subject } as unknown as MsgRequest
      const m = await jsm.streams.getMessage(STREAM_WEBHOOK_JOBS, next)
      if (m === null) break
      seq = m.seq + 1
      let jobs: StoredWebhookJob[]
      try { jobs = webhookJobsOf(JSON.parse(dec.decode(m.data))) } catch { continue }
      const gone = jobs.filter((j) => erasedJob(j, orgId, address, eventIds))
      if (gone.length === 0) continue
      const rest = jobs.filter((j) => !gone.includes(j))
      // the rest first, so a failure between the two steps leaves a job twice (at least once), never lost
      if (rest.length > 0) {
        await publishWebhookJobBatch(js, shards, rest, [], rest.map((j) => `${webhookJobMsgId(j)}@erase${m.seq}`))
      }
      if (await deleteIfStored(jsm, STREAM_WEBHOOK_JOBS, m.seq, { overwrite: true })) removed += gone.length
    }
  }
  return removed
}
